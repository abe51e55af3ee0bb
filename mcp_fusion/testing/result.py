"""What ``run_tool_contract`` returns: the ``CallToolResult`` a client reads, and its parsed failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..client import parse_tool_result
from ..envelope import ERROR_META_KEY
from ..failure import EnvelopeParseError, ToolFailure
from ..wire import ToolResultParts

#: The fields of a ``CallToolResult`` as MCP spells them on the wire.
_WIRE_KEYS = ("content", "structuredContent", "isError", "_meta")


@dataclass(frozen=True)
class ContractResult:
    """A tool call's result as the client receives it, read for a test.

    ``content`` (the blocks, as wire JSON), ``structured_content``, ``meta`` and ``is_error`` are the
    ``CallToolResult``'s; ``text`` is its first text block (the ``<tool_error>`` envelope of a
    failure); ``mirror`` the structured failure (from ``structured_content`` or
    ``_meta["fusion/error"]``); ``failure`` the parsed :class:`~mcp_fusion.client.ToolFailure`
    when the call failed (``None`` on success) and ``warning`` the one a success carries. ``raw``
    is what the SDK or framework produced, ``result`` the installed SDK's ``CallToolResult``.
    """

    content: list[dict[str, Any]]
    is_error: bool
    structured_content: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    raw: Any = field(default=None, repr=False, compare=False)
    failure: ToolFailure | None = field(default=None, compare=False)
    warning: ToolFailure | None = field(default=None, compare=False)

    @classmethod
    def from_wire(cls, wire: dict[str, Any], raw: Any = None) -> ContractResult:
        content = list(wire.get("content") or [])
        is_error = bool(wire.get("isError", False))
        structured, meta = wire.get("structuredContent"), wire.get("_meta")
        try:
            parsed = parse_tool_result({key: wire[key] for key in _WIRE_KEYS if key in wire})
        except EnvelopeParseError:  # a success whose text merely looks like an envelope
            parsed = None
        return cls(
            content=content,
            is_error=is_error,
            structured_content=structured,
            meta=meta,
            raw=raw,
            failure=parsed if is_error else None,
            warning=parsed if not is_error else None,
        )

    @classmethod
    def from_sdk(cls, result: Any) -> ContractResult:
        """From an SDK ``CallToolResult`` (mcp 1.x or 2.x), as its client received it."""
        return cls.from_wire(result.model_dump(by_alias=True, mode="json", exclude_none=True), raw=result)

    @property
    def text(self) -> str | None:
        for block in self.content:
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                text: str = block["text"]
                return text
        return None

    @property
    def mirror(self) -> dict[str, Any] | None:
        """The structured failure ``{"code", "code_name", "message", "data"}``, wherever the result carries it."""
        if isinstance(self.meta, dict) and isinstance(self.meta.get(ERROR_META_KEY), dict):
            mirror: dict[str, Any] = self.meta[ERROR_META_KEY]
            return mirror
        error = (self.structured_content or {}).get("error")
        return error if isinstance(error, dict) else None

    @property
    def wire(self) -> dict[str, Any]:
        """The result as MCP spells it: ``content``, ``isError`` and, when set, ``structuredContent``, ``_meta``."""
        return ToolResultParts(self.content, self.structured_content, self.is_error, self.meta).to_wire()

    @property
    def result(self) -> Any:
        """The installed SDK's ``CallToolResult`` (``None`` without an SDK)."""
        if type(self.raw).__name__ == "CallToolResult":
            return self.raw
        from ..frameworks import sdk_major

        major = sdk_major()
        if major == 2:
            import mcp_types

            return mcp_types.CallToolResult.model_validate(self.wire)
        if major == 1:
            import mcp.types

            return mcp.types.CallToolResult.model_validate(self.wire)
        return None
