"""The running framework's own result type for a boundary outcome (DESIGN §12.1).

``@contract`` does not know, when it decorates, which framework will register the function; it finds
out when a call fails. fastmcp (2.x, 3.x, 4.x) has a context of its own while it serves a call
(its public ``get_context()``); otherwise the installed SDK decides: mcp 2.x (``MCPServer``) or mcp 1.x (``FastMCP``). The
parts come from :func:`mcp_fusion.wire.tool_result`, so the text and the mirror are the bytes
``FusionServer`` sends. Each framework's internals are checked before first use (:mod:`.internals`):

* mcp 2.x ``MCPServer``: a ``mcp_types.CallToolResult``.
* mcp 1.x ``FastMCP``: a ``mcp.types.CallToolResult``. FastMCP 1.x validates a returned result's
  ``structuredContent`` against the tool's output schema even when ``isError`` is set (2.x does not),
  and it gives even ``-> str`` tools an output schema, so every error result would become a
  validation error. The first failure installs the 2.x behaviour for our own results only: an
  error result built here (recognised by identity, :func:`_mark_own_error_result`) skips that
  check; everything else is validated as before.
* fastmcp 3.4+/4.x: its public ``ToolResult(..., is_error=True)``; fastmcp 2.x and 3.0-3.3, whose
  ``ToolResult`` has no ``is_error``, get a subclass whose MCP result carries it.
* No SDK at all (a unit test calling the function): the result as wire JSON (a dict).

Whether the tool has an output schema (the mirror then travels in ``_meta``) is what the framework
itself derives from the function, asked once per framework; an integration that sees the
framework's tool object tells it exactly (:func:`serving_tool`).
"""

from __future__ import annotations

import functools
import inspect
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from . import internals
from .boundary import BoundaryTarget, HandlerSuccess, Outcome
from .envelope import ERROR_META_KEY
from .serving import ServedTool, tool_failure_meta_enabled
from .wire import ToolResultParts, protocol_error, render_failure, tool_result

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class FrameworkView:
    """What one framework makes of a handler: whether it advertises an output schema, how it converts a value."""

    has_output_schema: bool
    #: ``value -> (content dicts, structured content)`` as the framework converts a success.
    convert: Callable[[Any], tuple[list[dict[str, Any]], dict[str, Any] | None]] | None = None


def render_outcome(
    target: Any, outcome: Outcome, served: ServedTool | None = None, framework: Framework | None = None
) -> Any:
    """The framework's result for ``outcome`` (a failure, or a success carrying a warning).

    ``framework`` is the one serving this call when the caller already asked (:func:`current_framework`).
    """
    if framework is None:
        framework = current_framework()
    view = _view(target, framework)
    has_output_schema = served.has_output_schema if served is not None else view.has_output_schema
    if isinstance(outcome, HandlerSuccess) and has_output_schema and view.convert is not None:
        parts = _warning_with_output_schema(target, outcome, view)
    else:
        parts = tool_result(
            target, outcome, has_output_schema=has_output_schema, tool_failure_meta=tool_failure_meta_enabled(served)
        )
    return framework.result(parts)


def raise_resource_failure(target: Any, outcome: Outcome) -> Any:
    """A resource's failure as the SDK's JSON-RPC error, as ``FusionServer`` sends it; a warning is dropped.

    mcp 2.x ``MCPServer`` and fastmcp 3.x/4.x pass the error through (code, one-line message, the
    envelope in ``data``); mcp 1.x ``FastMCP`` and fastmcp 2.x keep only its message, in their own words.
    """
    if isinstance(outcome, HandlerSuccess):
        return outcome.value if outcome.has_value else None  # the warning was logged; resources have no envelope
    code, message, data = protocol_error(outcome)
    _raise_protocol_error(code, message, data)


def _raise_protocol_error(code: int, message: str, data: dict[str, Any]) -> NoReturn:
    if sdk_major() == 2:
        from mcp.shared.exceptions import MCPError

        raise MCPError(code=code, message=message, data=data)
    from mcp.shared.exceptions import McpError  # type: ignore[attr-defined]  # mcp 1.x's name (checked against 2.x)
    from mcp.types import ErrorData

    raise McpError(ErrorData(code=code, message=message, data=data))


def _warning_with_output_schema(
    target: BoundaryTarget, outcome: HandlerSuccess, view: FrameworkView
) -> ToolResultParts:
    # The payload must match the schema the framework advertised: the framework converts it.
    assert outcome.warning is not None and view.convert is not None
    try:
        content, structured = view.convert(outcome.value if outcome.has_value else None)
    except Exception:  # noqa: BLE001 - a payload the framework refuses is the malformed result of §3.5
        return tool_result(target, HandlerSuccess(None, outcome.warning, has_value=False), has_output_schema=True)
    text, mirror = render_failure(outcome.warning)
    return ToolResultParts(
        [{"type": "text", "text": text}, *content], structured, False, {ERROR_META_KEY: mirror["error"]}
    )


def _view(target: Any, framework: Framework) -> FrameworkView:
    views: dict[str, FrameworkView] = target.views
    view = views.get(framework.key)
    if view is None:
        try:
            view = framework.view(inspect.unwrap(target.handler))
        except Exception:  # noqa: BLE001 - the framework cannot say: _meta is valid for every schema
            view = FrameworkView(has_output_schema=True)
        views[framework.key] = view
    return view


# -- the frameworks ---------------------------------------------------------------------------


class Framework:
    key = "none"

    def view(self, fn: Callable[..., Any]) -> FrameworkView:
        return FrameworkView(has_output_schema=False)

    def result(self, parts: ToolResultParts) -> Any:
        return parts.to_wire()


class McpServer2(Framework):
    """mcp 2.x ``MCPServer`` (and the low-level server)."""

    key = "mcp2"

    def view(self, fn: Callable[..., Any]) -> FrameworkView:
        from mcp.server.mcpserver.utilities.func_metadata import func_metadata

        metadata = func_metadata(fn, skip_names=_parameter_names(fn))

        def convert(value: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
            converted = metadata.convert_result(value)
            return _dump_blocks(converted.content), converted.structured_content  # type: ignore[union-attr]  # an InputRequiredResult (mcp 2.x's multi-round flow) is not expected here

        return FrameworkView(metadata.output_schema is not None, convert)

    def result(self, parts: ToolResultParts) -> Any:
        return _sdk_result()(parts)


@functools.cache
def _sdk_result() -> Callable[[ToolResultParts], Any]:
    """``server.sdk_result``, imported once (the server module needs mcp 2.x)."""
    from .server import sdk_result

    return sdk_result


class FastMcp1(Framework):
    """mcp 1.x ``FastMCP`` (``mcp.server.fastmcp``)."""

    key = "mcp1"

    def view(self, fn: Callable[..., Any]) -> FrameworkView:
        from mcp.server.fastmcp.utilities.func_metadata import func_metadata

        metadata = func_metadata(fn, skip_names=_parameter_names(fn))

        def convert(value: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
            converted = metadata.convert_result(value)
            if isinstance(converted, tuple):
                content, structured = converted
                return _dump_blocks(content), structured
            return _dump_blocks(converted), None

        return FrameworkView(metadata.output_schema is not None, convert)

    def result(self, parts: ToolResultParts) -> Any:
        if _mcp_version() < OLDEST_MCP1:
            # Older FastMCP turns a returned CallToolResult into JSON text: the failure would read as a success.
            raise RuntimeError(
                f"@contract needs mcp>={'.'.join(map(str, OLDEST_MCP1))} under FastMCP 1.x (mcp "
                f"{'.'.join(map(str, _mcp_version()))} is installed): pip install 'mcp>=1.19,<2'"
            )
        result_class, text_content = _mcp1_result_classes()
        content: list[BaseModel] = []
        for block in parts.content:
            if block.keys() != _TEXT_BLOCK_KEYS:
                result = result_class.model_validate(parts.to_wire())
                break
            # Text blocks (every envelope) are built without validation: the parts are ours and already
            # wire-clean (bounded, sanitised), so validating them again costs ~10 µs for nothing.
            content.append(text_content.model_construct(type="text", text=block["text"]))
        else:
            fields: dict[str, Any] = {"content": content, "isError": parts.is_error}
            if parts.structured_content is not None:
                fields["structuredContent"] = parts.structured_content
            if parts.meta is not None:
                fields["meta"] = parts.meta
            result = result_class.model_construct(**fields)
        return _mark_own_error_result(result) if parts.is_error else result


_TEXT_BLOCK_KEYS = frozenset({"type", "text"})


@functools.cache
def _mcp1_result_classes() -> tuple[type[BaseModel], type[BaseModel]]:
    """mcp 1.x's result type (ours, see :func:`_mcp1_result_class`) and ``TextContent``, imported once."""
    from mcp.types import TextContent

    return _mcp1_result_class(), TextContent


#: The oldest mcp 1.x whose FastMCP passes a returned ``CallToolResult`` through (1.19.0).
OLDEST_MCP1 = (1, 19)


@functools.cache
def _mcp_version() -> tuple[int, ...]:
    from importlib.metadata import version

    parts = []
    for piece in version("mcp").split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


class FastMcpPackage(Framework):
    """The ``fastmcp`` package (2.x and 3.x on mcp 1.x, 4.x on mcp 2.x)."""

    key = "fastmcp"

    def view(self, fn: Callable[..., Any]) -> FrameworkView:
        from fastmcp.tools import Tool

        tool = Tool.from_function(fn)
        convert_result = getattr(tool, "convert_result", None)
        if not callable(convert_result):  # fastmcp 2.x converts inside run(), as below
            convert_result = functools.partial(_fastmcp2_convert, tool)

        def convert(value: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
            converted = convert_result(value)
            return _dump_blocks(converted.content), converted.structured_content

        return FrameworkView(tool.output_schema is not None, convert)

    def result(self, parts: ToolResultParts) -> Any:
        content = _content_models(parts.content)
        result_class = _fastmcp_result_class()
        return result_class(
            content=content, structured_content=parts.structured_content, meta=parts.meta, is_error=parts.is_error
        )


def _fastmcp2_convert(tool: Any, value: Any) -> Any:
    """What fastmcp 2.x's ``FunctionTool.run`` makes of a returned value (it has no ``convert_result``)."""
    import pydantic_core
    from fastmcp.tools.tool import ToolResult, _convert_to_content

    structured = pydantic_core.to_jsonable_python(value)
    if (tool.output_schema or {}).get("x-fastmcp-wrap-result"):
        structured = {"result": structured}
    return ToolResult(content=_convert_to_content(value, serializer=tool.serializer), structured_content=structured)


_NO_SDK = Framework()
_FASTMCP = FastMcpPackage()


def current_framework() -> Framework:
    """The framework serving this call: fastmcp while it has a context (its public ``get_context()``), else
    the installed SDK."""
    dependencies = sys.modules.get("fastmcp.server.dependencies")
    if dependencies is not None:
        try:
            dependencies.get_context()
        except RuntimeError:  # "No active context found": another framework serves this call
            pass
        else:
            internals.check("fastmcp")
            return _FASTMCP
    return _installed_sdk()


@functools.cache
def _installed_sdk() -> Framework:
    try:
        import mcp_types  # noqa: F401 - mcp 2.x ships its wire types apart
        from mcp.server.mcpserver.utilities import func_metadata  # noqa: F401
    except ImportError:
        pass
    else:
        internals.check("mcp2")
        return McpServer2()
    try:
        import mcp.types  # noqa: F401
        from mcp.server.fastmcp.utilities import func_metadata as _  # noqa: F401
    except ImportError:
        return _NO_SDK
    internals.check("mcp1")
    return FastMcp1()


def sdk_major() -> int | None:
    """2 or 1 for the installed mcp SDK, ``None`` without one."""
    return {"mcp2": 2, "mcp1": 1}.get(_installed_sdk().key)


def _parameter_names(fn: Callable[..., Any]) -> list[str]:
    # Only the output schema is asked for: skipping every parameter keeps the framework from
    # building an arguments model (whose Context parameter it would otherwise have to recognise).
    return list(inspect.signature(fn).parameters)


def _dump_blocks(blocks: Any) -> list[dict[str, Any]]:
    return [block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in blocks or ()]


def _content_models(content: list[dict[str, Any]]) -> list[Any]:
    """Content dicts as the installed SDK's content blocks."""
    types = _sdk_types()
    blocks: list[Any] = []
    for block in content:
        if block.keys() == {"type", "text"}:
            blocks.append(types.TextContent(type="text", text=block["text"]))
        else:
            from pydantic import TypeAdapter

            blocks.append(TypeAdapter(types.ContentBlock).validate_python(block))
    return blocks


@functools.cache
def _sdk_types() -> Any:
    """The installed SDK's wire types module (``mcp_types`` in 2.x, ``mcp.types`` in 1.x), imported once."""
    if sdk_major() == 2:
        import mcp_types as types
    else:
        import mcp.types as types  # type: ignore[no-redef]  # mcp 1.x's module for the same names (typed against 2.x's mcp_types)
    return types


#: The error results built here, by id, each with a weak reference to it: FastMCP 1.x passes exactly
#: these through unchecked. A dead result's entry never matches (its reference is dead, so a new object
#: with the same id is not mistaken for it) and dead entries are dropped in batches. (They used to be
#: marked by a subclass of ``CallToolResult``; pydantic serialises a subclass inside the SDK's
#: ``ServerResult`` union through a slower fallback, about 5 µs per failed call.)
_OWN_ERROR_RESULTS: dict[int, weakref.ref[Any]] = {}
_OWN_RESULTS_LIMIT = [1024]


def _mark_own_error_result(result: Any) -> Any:
    if len(_OWN_ERROR_RESULTS) >= _OWN_RESULTS_LIMIT[0]:
        for key, ref in list(_OWN_ERROR_RESULTS.items()):
            if ref() is None:
                _OWN_ERROR_RESULTS.pop(key, None)
        _OWN_RESULTS_LIMIT[0] = max(1024, 2 * len(_OWN_ERROR_RESULTS))  # many alive: sweep less often
    _OWN_ERROR_RESULTS[id(result)] = weakref.ref(result)
    return result


def _is_own_error_result(result: Any) -> bool:
    ref = _OWN_ERROR_RESULTS.get(id(result))
    return ref is not None and ref() is result


@functools.cache
def _mcp1_result_class() -> type[BaseModel]:
    """mcp 1.x's ``CallToolResult``, with FastMCP told not to schema-check our own error results as a success."""
    from mcp.server.fastmcp.utilities.func_metadata import FuncMetadata
    from mcp.types import CallToolResult

    original = FuncMetadata.convert_result

    @functools.wraps(original)
    def convert_result(self: Any, result: Any) -> Any:
        if type(result) is CallToolResult and result.isError and _is_own_error_result(result):  # type: ignore[attr-defined]  # mcp 1.x's CallToolResult (checked against 2.x's)
            return result
        return original(self, result)

    if not getattr(original, "__fusion_patched__", False):
        convert_result.__fusion_patched__ = True  # type: ignore[attr-defined]  # a marker attribute on the wrapper function
        FuncMetadata.convert_result = convert_result
    return CallToolResult


@functools.cache
def _fastmcp_result_class() -> type:
    try:
        from fastmcp.tools import ToolResult
    except ImportError:  # fastmcp 2.x
        from fastmcp.tools.tool import ToolResult

    if "is_error" in getattr(ToolResult, "model_fields", {}):  # fastmcp 3.4+ and 4.x
        result_class: type = ToolResult
        return result_class
    if sdk_major() == 2:
        from mcp_types import CallToolResult
    else:
        from mcp.types import CallToolResult

    class FusionToolResult(ToolResult):  # type: ignore[misc]  # fastmcp is not in the dev extra: ToolResult is Any here
        """fastmcp 2.x's and 3.0-3.3's ``ToolResult`` has no ``is_error``: its MCP result carries it here."""

        def __init__(self, *, content: Any, structured_content: Any, meta: Any, is_error: bool) -> None:
            super().__init__(content=content, structured_content=structured_content)
            # Not fields of the (pydantic, in 3.x) model: set past its validation, read by to_mcp_result.
            object.__setattr__(self, "meta", meta)
            object.__setattr__(self, "is_error", is_error)

        def to_mcp_result(self) -> Any:
            return CallToolResult(
                content=self.content,
                structuredContent=self.structured_content,
                isError=self.is_error,
                _meta=self.meta,
            )

    return FusionToolResult
