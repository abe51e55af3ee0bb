"""fastmcp 2.x/3.x/4.x: invalid arguments answered with the ``<validation_error>`` (DESIGN §12.1).

    from fastmcp import FastMCP
    from mcp_fusion.integrations import fastmcp as fusion

    app = FastMCP("billing")
    fusion.install(app)          # or app.add_middleware(fusion.FusionMiddleware())

fastmcp validates a call's arguments inside the tool, below its middleware; this middleware turns
that rejection into the envelope instead of ``1 validation error for call[<name>] ...``. fastmcp
3.x/4.x tell an argument error from a pydantic error inside the handler; fastmcp 2.x does not, so
there only contracted tools (whose handler errors the boundary already answered) are rewritten.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from fastmcp.server.middleware import Middleware
from pydantic import ValidationError

from .. import internals
from ..contracted import contract_of
from ..frameworks import FastMcpPackage
from ..serving import serving_tool
from . import invalid_arguments


class FusionMiddleware(Middleware):  # type: ignore[misc]  # fastmcp is not in the dev extra: Middleware is Any here
    """Rejected arguments as a ``<validation_error>``; contracted handlers told their registered name.

    ``tool_failure_meta=True`` adds the draft ``toolFailure`` metadata to every failure (MCP PRs #3312/#3313).
    """

    def __init__(self, *, tool_failure_meta: bool = False) -> None:
        super().__init__()
        self.tool_failure_meta = tool_failure_meta

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        name = context.message.name
        tool = await _tool(context, name)
        has_output_schema = tool is not None and tool.output_schema is not None
        served = serving_tool(tool.name, has_output_schema, tool_failure_meta=self.tool_failure_meta)
        with served if tool is not None else nullcontext():
            try:
                return await call_next(context)
            except Exception as exc:
                rejected = _argument_error(exc, tool)
                if rejected is None:
                    raise
        parts = invalid_arguments(
            tool.name,
            rejected.errors(include_url=False),
            tool.parameters,
            context.message.arguments,
            has_output_schema=has_output_schema,
            tool_failure_meta=self.tool_failure_meta,
        )
        return FastMcpPackage().result(parts)

    async def on_read_resource(self, context: Any, call_next: Any) -> Any:
        # Tells a contracted resource handler it serves a read (its failure is a JSON-RPC error).
        with serving_tool(str(context.message.uri), False, "resource"):
            return await call_next(context)


def install(app: Any, *, tool_failure_meta: bool = False) -> Any:
    """Add :class:`FusionMiddleware` to ``app``; returns ``app``."""
    internals.check("fastmcp")
    app.add_middleware(FusionMiddleware(tool_failure_meta=tool_failure_meta))
    return app


async def _tool(context: Any, name: str) -> Any:
    server = getattr(context.fastmcp_context, "fastmcp", None)
    if server is None:
        return None
    try:
        return await server.get_tool(name)
    except Exception:  # noqa: BLE001 - unknown or hidden: fastmcp answers it itself
        return None


def _argument_error(exc: BaseException, tool: Any) -> ValidationError | None:
    """The pydantic error of rejected arguments, or ``None`` for anything else."""
    if tool is None:
        return None
    cause = exc.__cause__
    if type(exc).__module__.startswith("fastmcp") and isinstance(cause, ValidationError):
        return cause  # fastmcp 3.x/4.x: fastmcp.exceptions.ValidationError from the arguments
    if isinstance(exc, ValidationError) and contract_of(getattr(tool, "fn", None)) is not None:
        return exc  # fastmcp 2.x: a contracted handler's own errors never get here
    return None
