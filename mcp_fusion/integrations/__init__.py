"""Hooks that answer invalid arguments with the self-healing ``<validation_error>`` (DESIGN §3.6, §12.1).

A framework validates a tool's arguments before the handler (and so ``@contract``) runs; where it
offers a hook before that validation, ``mcp_fusion`` ships one:

* mcp 2.x ``MCPServer``: ``mcp_fusion.integrations.mcpserver.install(app)`` (server middleware).
* ``fastmcp`` 2.x/3.x/4.x: ``mcp_fusion.integrations.fastmcp.install(app)`` (fastmcp middleware).

mcp 1.x ``FastMCP`` has no such hook: it answers invalid arguments itself, as
``Error executing tool <name>: 1 validation error for <name>Arguments ...`` (the README shows it).
Each hook also tells contracted handlers the name the framework registered them under and whether
it advertises an output schema, so their failures read exactly as ``FusionServer``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..boundary import log_failure
from ..context import NOTICE
from ..serving import set_tool_failure_meta
from ..validation import ValidationEnvelope, describe_problems
from ..wire import ToolResultParts, failure_parts

#: pydantic's error types for a function's call arguments, as the same problems of a model's fields.
_CALL_ERROR_TYPES = {"missing_argument": "missing", "unexpected_keyword_argument": "extra_forbidden"}


class _ToolTarget:
    kind = "tool"

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def owner(self) -> str:
        return f"tool {self.name!r}"


def invalid_arguments(
    name: str,
    errors: Sequence[Mapping[str, Any]],
    input_schema: Mapping[str, Any],
    arguments: Any,
    *,
    has_output_schema: bool,
    tool_failure_meta: bool = False,
) -> ToolResultParts:
    """The ``<validation_error>`` result for a tool's rejected arguments, logged like ``FusionServer``'s."""
    problems = [{**error, "type": _CALL_ERROR_TYPES.get(error.get("type"), error.get("type"))} for error in errors]  # type: ignore[arg-type]  # dict.get takes any key: None finds nothing
    envelope = ValidationEnvelope(action=name, fields=tuple(describe_problems(problems, input_schema)), kind="tool")
    logged = arguments if isinstance(arguments, Mapping) else {"arguments": arguments}
    log_failure(_ToolTarget(name), NOTICE, envelope.code_name, envelope.reason, envelope.message, logged)
    parts = failure_parts(envelope, "xml", has_output_schema=has_output_schema)
    return parts.with_tool_failure_meta() if tool_failure_meta else parts


__all__ = ["invalid_arguments", "set_tool_failure_meta"]
