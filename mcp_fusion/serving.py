"""What the framework serving a call says about it: the tool's registered name, its output schema, its kind.

An integration (``mcp_fusion.integrations``) sees the framework's own objects and tells it through a
context variable; without one, what can be read off the stack is used: under mcp 1.x ``FastMCP`` the
``Tool`` running the call (it awaits the handler, or calls a sync one directly), and for any
framework a resource read in progress. A sync handler the framework runs in a worker thread has no
such stack: there only an integration can tell.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

#: Frames of a framework's resource read (mcp 1.x/2.x ``FastMCP``/``MCPServer``, fastmcp 2.x-4.x).
_RESOURCE_FRAMES = frozenset({"read", "read_resource", "_read_resource", "_read_resource_mcp", "create_resource"})
#: How far up the stack to look (a handler sits a few frames below the framework's tool or resource).
_MAX_FRAMES = 40


class ServedTool(NamedTuple):
    """Told by an integration that sees the framework's tool object: its name and output schema.

    A named tuple, not a dataclass: one is made per failed call, and a tuple is made several times faster.
    """

    name: str | None
    has_output_schema: bool
    kind: str = "tool"
    #: The integration's ``tool_failure_meta=`` (``None``: the process-wide setting).
    tool_failure_meta: bool | None = None


_serving: contextvars.ContextVar[ServedTool | None] = contextvars.ContextVar("mcp_fusion_serving", default=None)


#: The process-wide ``tool_failure_meta`` of contracted handlers no integration serves (mcp 1.x FastMCP, the
#: low-level Server): :func:`set_tool_failure_meta`.
_TOOL_FAILURE_META = [False]


def set_tool_failure_meta(enabled: bool = True) -> None:
    """Opt in to the draft ``toolFailure`` metadata (MCP PRs #3312/#3313) where no integration is installed."""
    _TOOL_FAILURE_META[0] = bool(enabled)


def tool_failure_meta_enabled(served: ServedTool | None) -> bool:
    if served is not None and served.tool_failure_meta is not None:
        return served.tool_failure_meta
    return _TOOL_FAILURE_META[0]


@contextmanager
def serving_tool(
    name: str | None, has_output_schema: bool, kind: str = "tool", *, tool_failure_meta: bool | None = None
) -> Iterator[None]:
    """While a framework serves ``name``: contracted handlers use this name, output-schema fact and kind."""
    token = _serving.set(ServedTool(name, has_output_schema, kind, tool_failure_meta))
    try:
        yield
    finally:
        _serving.reset(token)


def served_tool(mcp1: bool, caller: Any = None) -> ServedTool | None:
    """The framework's own name and output-schema fact for the tool being served, when it can be seen.

    An integration tells it (:func:`serving_tool`); under mcp 1.x ``FastMCP``, which has no hook, the
    ``Tool`` running the call is on the stack (it awaits the handler, or calls a sync one directly).
    ``caller`` is the frame to start looking from (the one that called the handler's wrapper: the
    frames below it are mcp_fusion's own), else this function's caller.
    """
    served = _serving.get()
    if served is None:
        served = _from_the_stack(mcp1, caller if caller is not None else sys._getframe(1))
    return served


def _from_the_stack(mcp1: bool, frame: Any) -> ServedTool | None:
    tool_class = getattr(sys.modules.get("mcp.server.fastmcp.tools.base"), "Tool", None) if mcp1 else None
    for _ in range(_MAX_FRAMES):
        if frame is None:
            return None
        code = frame.f_code
        name = code.co_name
        if name == "run" and tool_class is not None:
            candidate = frame.f_locals.get("self")
            if isinstance(candidate, tool_class):
                metadata = getattr(candidate, "fn_metadata", None)
                return ServedTool(candidate.name, getattr(metadata, "output_schema", None) is not None)
        elif name in _RESOURCE_FRAMES and _is_framework_file(code.co_filename):
            return ServedTool(_resource_uri(frame.f_locals.get("self")), False, "resource")
        frame = frame.f_back
    return None


def _resource_uri(resource: Any) -> str | None:
    """The URI a framework's resource object is registered under (a template's, else a static one's).

    mcp 1.x ``FastMCP`` has no hook: its ``ResourceTemplate.create_resource`` (``uri_template``) or
    ``FunctionResource.read`` (``uri``) on the stack names the resource as ``FusionServer`` does, by
    its URI, not by its function. A frame whose ``self`` is the server itself names nothing.
    """
    for attribute in ("uri_template", "uri"):
        value = getattr(resource, attribute, None)
        if isinstance(value, str) or (value is not None and type(value).__name__ in ("AnyUrl", "Url")):
            return str(value)
    return None


def _is_framework_file(filename: str) -> bool:
    path = filename.replace("\\", "/")
    return "/mcp/server/" in path or "/fastmcp/" in path
