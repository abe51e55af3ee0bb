"""mcp 2.x ``MCPServer``: invalid arguments answered with the ``<validation_error>`` (DESIGN §12.1).

    from mcp.server.mcpserver import MCPServer
    from mcp_fusion.integrations import mcpserver as fusion

    app = MCPServer("billing")
    fusion.install(app)          # or MCPServer("billing", middleware=[fusion.validation_middleware(app)])

The middleware runs before ``MCPServer`` validates a ``tools/call``: it validates the arguments with
the tool's own argument model and, when they do not fit, answers with the envelope instead of
``Error executing tool <name>: 1 validation error ...``. Valid calls go on untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import ValidationError

from .. import internals
from ..serving import serving_tool
from . import invalid_arguments


def validation_middleware(
    app: Any, *, tool_failure_meta: bool = False
) -> Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]:
    """A ``ServerMiddleware`` for ``app`` (append it to ``app.middleware``, or pass it as ``middleware=[...]``)."""

    async def fusion_validation(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        params = ctx.params
        if ctx.method == "resources/read" and isinstance(params, Mapping) and isinstance(params.get("uri"), str):
            with serving_tool(params["uri"], False, "resource"):
                return await call_next(ctx)
        if ctx.method != "tools/call" or not isinstance(params, Mapping) or not isinstance(params.get("name"), str):
            return await call_next(ctx)
        tool = app._tool_manager.get_tool(params["name"])  # the SDK has no public lookup by name
        if tool is None:
            return await call_next(ctx)  # the SDK's own "Unknown tool" protocol error
        arguments = params.get("arguments")
        has_output_schema = tool.output_schema is not None
        try:
            tool.fn_metadata.validate_arguments(arguments if isinstance(arguments, Mapping) else {})
        except ValidationError as exc:
            from ..server import sdk_result

            parts = invalid_arguments(
                tool.name,
                exc.errors(include_url=False),
                tool.parameters,
                arguments,
                has_output_schema=has_output_schema,
                tool_failure_meta=tool_failure_meta,
            )
            return sdk_result(parts)
        with serving_tool(tool.name, has_output_schema, tool_failure_meta=tool_failure_meta):
            return await call_next(ctx)

    return fusion_validation


def install(app: Any, *, tool_failure_meta: bool = False) -> Any:
    """Add the validation middleware to ``app`` (innermost, after the SDK's own); returns ``app``."""
    internals.check("mcp2")
    if not callable(getattr(getattr(app, "_tool_manager", None), "get_tool", None)):
        raise internals.FrameworkInternalsError(
            "mcp",
            internals.installed_version("mcp"),
            "MCPServer._tool_manager.get_tool",
            "is missing on this server",
            "to look a tool up by name before MCPServer validates its arguments",
        )
    app.middleware.append(validation_middleware(app, tool_failure_meta=tool_failure_meta))
    return app
