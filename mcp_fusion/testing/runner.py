"""``run_tool_contract``: a tool call through the production failure boundary, in a test, without a server.

What it takes is what a test has in hand:

* an ``mcp_fusion`` tool (``@tool(...)``): its arguments validated and its handler run exactly as
  ``FusionServer`` does (the same ``run_handler`` and result rendering), with ``mcp_fusion``'s own
  ``Context`` bound to the contract;
* a ``@contract`` function (mcp 1.x ``FastMCP``, mcp 2.x ``MCPServer``, fastmcp 2/3/4), or the
  framework's tool object holding one: its arguments validated against its signature (invalid ones
  answered with the ``<validation_error>`` the integrations send), the framework's ``Context``
  replaced by a :class:`~mcp_fusion.testing.StandInContext`, the result rendered as the framework
  would (which framework: fastmcp for fastmcp's tools and decorated functions, else the installed SDK);
* a server and a tool's name (``FusionServer``, ``FastMCP``, ``MCPServer``, fastmcp's ``FastMCP``, a
  low-level ``Server``): the call goes through the framework's own in-memory client, so the result
  is byte for byte what a client receives — its lifespan, ``Context``, validation and middleware
  included.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from ..boundary import run_handler
from ..contracted import ContractTarget, contract_of
from ..definitions import ToolDefinition
from ..frameworks import _view, current_framework, sdk_major
from ..integrations import invalid_arguments
from ..serving import serving_tool
from ..signature import analyze_handler
from ..wire import success_payload, tool_result
from .result import ContractResult
from .standin import StandInContext, context_parameters

#: ``(module, class, kind)`` of the servers ``run_tool_contract(server, name, ...)`` drives in memory.
_SERVERS = (
    ("mcp_fusion.server", "FusionServer", "fusion"),
    ("mcp.server.fastmcp.server", "FastMCP", "mcp1"),
    ("mcp.server.mcpserver.server", "MCPServer", "mcp2"),
    ("fastmcp.server.server", "FastMCP", "fastmcp"),
    ("mcp.server.lowlevel.server", "Server", "lowlevel"),
)


async def run_tool_contract(
    tool: Any, name_or_arguments: Any = None, arguments: Mapping[str, Any] | None = None, *, context: Any = None
) -> ContractResult:
    """Call a tool as production would and return what the client reads (awaitable; see ``run_tool_contract_sync``).

    ``run_tool_contract(get_invoice, {"invoice_id": "inv_404"})`` for a tool in hand;
    ``run_tool_contract(app, "get_invoice", {...})`` for a server and a tool's name. ``context`` is
    what a tool called alone receives instead of the stand-in: its framework ``Context`` parameter
    for a ``@contract`` function, the request context of ``mcp_fusion``'s ``Context`` (what
    ``ctx.lifespan``/``ctx.session`` read) for an ``mcp_fusion`` tool. A server injects its own.
    """
    name, arguments = _split(name_or_arguments, arguments)
    server_kind = _server_kind(tool)
    if server_kind is not None:
        if name is None:
            raise TypeError(
                f"run_tool_contract({type(tool).__name__}, ...) needs the tool's name: "
                "run_tool_contract(app, 'get_invoice', {...})"
            )
        if context is not None:
            raise TypeError("context= replaces the Context of a tool called alone; a server injects its own")
        return await _in_memory(server_kind, tool, name, arguments)
    if name is not None:
        raise TypeError(
            f"a tool's name goes with a server, not with {type(tool).__name__}: "
            "run_tool_contract(app, 'get_invoice', {...}) or run_tool_contract(get_invoice, {...})"
        )
    if isinstance(tool, ToolDefinition):
        return await _run_definition(tool, arguments, context)
    target = contract_of(tool)
    if target is not None:
        return await _run_contracted(tool, target, arguments, context)
    raise TypeError(
        f"run_tool_contract cannot run {tool!r}: pass an mcp_fusion tool (@tool), a @contract function (or the "
        "framework's tool object holding one), or a server and a tool's name"
    )


def run_tool_contract_sync(
    tool: Any, name_or_arguments: Any = None, arguments: Mapping[str, Any] | None = None, *, context: Any = None
) -> ContractResult:
    """``run_tool_contract`` for a plain (sync) test: runs its own event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "run_tool_contract_sync was called while an event loop runs (an async test?): write "
            "`await run_tool_contract(...)` there"
        )
    call = functools.partial(run_tool_contract, tool, name_or_arguments, arguments, context=context)
    try:
        import anyio
    except ImportError:  # no anyio without the SDK: asyncio's loop serves an mcp_fusion tool as well
        return asyncio.run(call())
    return anyio.run(call)


def _split(name_or_arguments: Any, arguments: Mapping[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
    if isinstance(name_or_arguments, str):
        name, given = name_or_arguments, arguments
    elif arguments is not None:
        raise TypeError("run_tool_contract(tool, arguments) takes the arguments once; a name comes first with a server")
    else:
        name, given = None, name_or_arguments
    if given is not None and not isinstance(given, Mapping):
        raise TypeError(f"the tool's arguments are a mapping of names to values, got {type(given).__name__}")
    return name, dict(given or {})


def _server_kind(value: Any) -> str | None:
    for module, class_name, kind in _SERVERS:
        server_class = getattr(sys.modules.get(module), class_name, None)
        if isinstance(server_class, type) and isinstance(value, server_class):
            return kind
    return None


# -- a server, in memory ------------------------------------------------------------------------


async def _in_memory(kind: str, app: Any, name: str, arguments: dict[str, Any]) -> ContractResult:
    names, result = await _call_in_memory(kind, app, name, arguments)
    if result is None:  # raised out here: inside the client's task group it would come back as a group
        listed = ", ".join(sorted(names)) or "none"
        raise LookupError(
            f"{type(app).__name__} {getattr(app, 'name', '')!r} has no tool {name!r} (its tools: {listed})"
        )
    return ContractResult.from_sdk(result)


async def _call_in_memory(kind: str, app: Any, name: str, arguments: dict[str, Any]) -> tuple[list[str], Any]:
    """``(the tools it lists, the result of the call)``; no call (``None``) when ``name`` is not listed."""
    if kind == "fastmcp":
        import fastmcp

        async with fastmcp.Client(app) as client:
            names = [tool.name for tool in await client.list_tools()]
            return names, await client.call_tool_mcp(name, arguments) if name in names else None
    if kind == "mcp1" or (kind == "lowlevel" and sdk_major() == 1):
        from mcp.shared.memory import create_connected_server_and_client_session  # type: ignore[attr-defined]  # mcp 1.x's (checked against 2.x)

        server = app._mcp_server if kind == "mcp1" else app  # FastMCP 1.x keeps its low-level server there
        async with create_connected_server_and_client_session(server) as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            return names, await session.call_tool(name, arguments) if name in names else None
    import mcp

    async with mcp.Client(app.sdk_server if kind == "fusion" else app) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        return names, await client.call_tool(name, arguments) if name in names else None


# -- a tool alone -------------------------------------------------------------------------------


async def _run_definition(definition: ToolDefinition[Any], arguments: dict[str, Any], context: Any) -> ContractResult:
    """What ``FusionServer``'s ``tools/call`` does, without the server: the same boundary and rendering."""
    outcome = await run_handler(definition, arguments, context)
    parts = tool_result(
        definition,
        outcome,
        output_adapter=definition.signature.output_adapter,
        has_output_schema=definition.output_schema is not None,
    )
    return ContractResult.from_wire(parts.to_wire(), raw=parts)


async def _run_contracted(tool: Any, target: ContractTarget, arguments: dict[str, Any], context: Any) -> ContractResult:
    """A ``@contract`` function called as its framework would call it, with a stand-in ``Context``."""
    handler = tool if inspect.isroutine(tool) or not callable(getattr(tool, "fn", None)) else tool.fn
    registered = _registered(tool)
    fastmcp = _is_fastmcp(tool)
    injected = context if context is not None else StandInContext()
    with _serving(registered, fastmcp, injected):
        framework = current_framework()
        view = _view(target, framework)
        name = registered[0] if registered else target.name
        has_output_schema = registered[1] if registered else view.has_output_schema
        context_names = context_parameters(handler)
        signature = analyze_handler(_without(handler, context_names), f"tool {name!r}", f"{name}Arguments")
        try:
            validated = signature.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            parts = invalid_arguments(
                name,
                exc.errors(include_url=False),
                signature.input_schema,
                arguments,
                has_output_schema=has_output_schema,
            )
            return ContractResult.from_wire(parts.to_wire(), raw=framework.result(parts))
        args, kwargs = signature.call_arguments(validated)
        for parameter in context_names:
            kwargs[parameter] = injected
        result = handler(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        if _is_result_object(result):  # a failure, a warning, or the tool's own result object
            return ContractResult.from_wire(_wire_of(result), raw=result)
        if view.convert is not None:
            content, structured = view.convert(result)
        else:
            content, structured, _ = success_payload(result, None, None)
        wire = {
            "content": content,
            "isError": False,
            **({"structuredContent": structured} if structured is not None else {}),
        }
        return ContractResult.from_wire(wire, raw=result)


def _registered(tool: Any) -> tuple[str, bool] | None:
    """``(name, has output schema)`` of a framework's tool object; ``None`` for a function."""
    if inspect.isroutine(tool) or not isinstance(getattr(tool, "name", None), str):
        return None
    schema = getattr(tool, "output_schema", None)
    if schema is None:
        schema = getattr(getattr(tool, "fn_metadata", None), "output_schema", None)
    return tool.name, schema is not None


def _is_fastmcp(tool: Any) -> bool:
    """Whether fastmcp serves ``tool``: its tool objects (2.x decorators return them), the functions its
    3.x/4.x decorators mark, and a function whose module holds a fastmcp server and no mcp one
    (``app.add_tool(Tool.from_function(fn))`` leaves no mark)."""
    if (type(tool).__module__ or "").split(".")[0] == "fastmcp":
        return True
    if getattr(tool, "__fastmcp__", None) is not None:
        return True
    fastmcp_server = getattr(sys.modules.get("fastmcp.server.server"), "FastMCP", None)
    if not isinstance(fastmcp_server, type):
        return False
    servers = {_server_kind(value) for value in getattr(inspect.unwrap(tool), "__globals__", {}).values()}
    return "fastmcp" in servers and not servers & {"mcp1", "mcp2", "fusion"}


@contextlib.contextmanager
def _serving(registered: tuple[str, bool] | None, fastmcp: bool, injected: Any) -> Iterator[None]:
    """Tell the contract what the framework would: its name and output schema, and that fastmcp serves it."""
    with contextlib.ExitStack() as stack:
        if registered is not None:
            stack.enter_context(serving_tool(*registered))
        if fastmcp:
            from fastmcp.server import context as fastmcp_context

            token = fastmcp_context._current_context.set(injected)  # what fastmcp sets while it serves a call
            stack.callback(fastmcp_context._current_context.reset, token)
        yield


def _without(handler: Callable[..., Any], names: list[str]) -> Callable[..., Any]:
    """``handler`` as its framework reads its arguments: without the parameters it injects a ``Context`` into."""
    signature = inspect.signature(handler)
    if not names:
        return handler

    @functools.wraps(handler)
    def arguments_only(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never called, only read
        raise AssertionError("read for its signature only")

    arguments_only.__signature__ = signature.replace(  # type: ignore[attr-defined]  # inspect reads __signature__ off any function
        parameters=[p for p in signature.parameters.values() if p.name not in names]
    )
    return arguments_only


def _is_result_object(value: Any) -> bool:
    if callable(getattr(value, "to_mcp_result", None)):
        return True  # fastmcp's ToolResult
    if type(value).__name__ in ("CallToolResult", "FusionCallToolResult"):
        return True
    # No SDK installed: @contract answers with the result as wire JSON.
    return isinstance(value, dict) and sdk_major() is None and {"content", "isError"} <= set(value)


def _wire_of(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if callable(getattr(value, "to_mcp_result", None)):
        converted = value.to_mcp_result()
        if isinstance(converted, (list, tuple)):  # fastmcp: content blocks, or (blocks, structured content)
            blocks, structured = (converted, None) if isinstance(converted, list) else converted
            wire: dict[str, Any] = {"content": [_dump(block) for block in blocks], "isError": False}
            if structured is not None:
                wire["structuredContent"] = structured
            return wire
        value = converted
    return _dump(value)


def _dump(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped
