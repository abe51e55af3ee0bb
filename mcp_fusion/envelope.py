"""The ``<tool_error>`` envelope, its structured mirror and the fluent ``tool_error`` builder (DESIGN §3.5).

Wire shape, sections in this order, each optional one only when set::

    <tool_error code="NOT_FOUND" severity="error">
      <message>No invoice with that ID</message>
      <recovery>List invoices first, then retry with a real ID</recovery>
      <available_actions>
        <action>billing_list_invoices</action>
      </available_actions>
      <details>
        <detail key="requestedId">inv_2026_9999</detail>
      </details>
      <retry_after>30 seconds</retry_after>
    </tool_error>

Element text escapes only ``&`` and ``<`` (``>`` and quotes stay readable for the model);
attributes escape all five. The structured mirror is a JSON-RPC style error object,
``{"error": {"code": -32001, "message": ..., "data": {"reason", "recovery": {"hint"}, ...}}}``.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, Sequence

from .bounding import bound_value
from .errors import FORBIDDEN_DATA_KEYS, JsonRpcErrorCode, McpError

if TYPE_CHECKING:  # pragma: no cover
    from .lockfile import Delta

EnvelopeSeverity = Literal["error", "critical", "warning"]
#: ``error`` and ``critical`` fail the call (``is_error=True``); ``warning`` is guidance on success.
ENVELOPE_SEVERITIES: tuple[str, ...] = ("error", "critical", "warning")

#: ``McpError.data`` keys the envelope renders as their own sections, never as ``<detail>``.
SECTION_KEYS: frozenset[str] = frozenset({"recovery", "available_actions", "retry_after", "contract_awareness"})

#: ``type`` of the integrators' JSON envelope, by code (issue 11); anything else is ``"Error"``.
JSON_ENVELOPE_TYPES: Mapping[str, str] = {
    "FORBIDDEN": "PermissionError",
    "NOT_FOUND": "NotFoundError",
    "CONFLICT": "ConflictError",
    "VALIDATION_ERROR": "ValidationError",
    "INVALID_PARAMS": "ValidationError",
}

EnvelopeFormat = Literal["xml", "json"]
ENVELOPE_FORMATS: tuple[str, ...] = ("xml", "json")

_INDENT = "  "


# -- escaping ---------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all, even escaped: emitted as-is they would make the whole
# envelope unparseable, so they become U+FFFD.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape_text(text: str) -> str:
    """Element text: escape ``&`` and ``<`` only, so ``>`` and quotes stay readable.

    The one exception is ``]]>``, which XML forbids in text; its ``>`` is escaped.
    """
    cleaned = _XML_ILLEGAL.sub("\ufffd", text)
    return cleaned.replace("&", "&amp;").replace("<", "&lt;").replace("]]>", "]]&gt;")


def escape_attribute(text: str) -> str:
    """Attribute values: escape all five XML specials."""
    cleaned = _XML_ILLEGAL.sub("\ufffd", text)
    return (
        cleaned.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def render_detail_value(value: Any) -> str:
    """How a detail value reads in text: strings as-is, everything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def render_seconds(seconds: float) -> str:
    amount = int(seconds) if float(seconds).is_integer() else seconds
    return f"{amount} second" if amount == 1 else f"{amount} seconds"


# -- the envelope -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolErrorEnvelope:
    """One failure (or warning) as the client will read it.

    ``details`` holds the ``reason``, ``retryable`` and any other data of the failure, rendered as
    ``<detail>`` entries; ``contract_awareness`` lists contract deltas of the tool (issue 11).
    """

    code: JsonRpcErrorCode | int
    message: str
    severity: EnvelopeSeverity = "error"
    recovery: str | None = None
    available_actions: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    retry_after: float | None = None
    contract_awareness: tuple[Delta, ...] = ()

    def __post_init__(self) -> None:
        if self.severity not in ENVELOPE_SEVERITIES:
            raise ValueError(f"envelope severity must be one of {ENVELOPE_SEVERITIES}, got {self.severity!r}")

    @property
    def code_name(self) -> str:
        return self.code.name if isinstance(self.code, JsonRpcErrorCode) else "UNKNOWN_ERROR"

    @property
    def reason(self) -> str | None:
        reason = self.details.get("reason")
        return reason if isinstance(reason, str) else None

    @property
    def is_error(self) -> bool:
        return self.severity != "warning"

    # -- constructors -----------------------------------------------------------------------

    @classmethod
    def from_mcp_error(cls, error: McpError) -> ToolErrorEnvelope:
        """The envelope of an ``McpError``: its data's sections become sections, the rest details."""
        data = {key: value for key, value in error.data.items() if key not in FORBIDDEN_DATA_KEYS}
        severity: EnvelopeSeverity = "critical" if data.get("severity") == "critical" else "error"
        if severity == "critical":
            del data["severity"]
        return cls(
            code=error.code,
            message=error.message,
            severity=severity,
            recovery=recovery_hint(data.get("recovery")),
            available_actions=_coerce_actions(data.get("available_actions")),
            details=normalize_details(data),
            retry_after=_coerce_seconds(data.get("retry_after")),
        )

    def with_contract_awareness(self, deltas: Sequence[Delta]) -> ToolErrorEnvelope:
        return replace(self, contract_awareness=tuple(deltas))

    # -- renderings -------------------------------------------------------------------------

    def to_xml(self) -> str:
        lines = [f'<tool_error code="{escape_attribute(self.code_name)}" severity="{escape_attribute(self.severity)}">']
        lines.append(f"{_INDENT}<message>{escape_text(self.message)}</message>")
        if self.recovery:
            lines.append(f"{_INDENT}<recovery>{escape_text(self.recovery)}</recovery>")
        if self.available_actions:
            lines.append(f"{_INDENT}<available_actions>")
            lines.extend(f"{_INDENT * 2}<action>{escape_text(action)}</action>" for action in self.available_actions)
            lines.append(f"{_INDENT}</available_actions>")
        if self.details:
            lines.append(f"{_INDENT}<details>")
            lines.extend(
                f'{_INDENT * 2}<detail key="{escape_attribute(str(key))}">{escape_text(render_detail_value(value))}</detail>'
                for key, value in self.details.items()
            )
            lines.append(f"{_INDENT}</details>")
        if self.retry_after is not None:
            lines.append(f"{_INDENT}<retry_after>{render_seconds(self.retry_after)}</retry_after>")
        lines.extend(render_awareness_xml(self.contract_awareness))
        lines.append("</tool_error>")
        return "\n".join(lines)

    def to_structured(self) -> dict[str, Any]:
        """The JSON mirror: ``{"error": {"code", "message", "data": {...}}}``."""
        data: dict[str, Any] = dict(self.details)
        if self.recovery:
            data["recovery"] = {"hint": self.recovery}
        if self.available_actions:
            data["available_actions"] = list(self.available_actions)
        if self.retry_after is not None:
            data["retry_after"] = self.retry_after
        if self.severity != "error":
            data["severity"] = self.severity
        if self.contract_awareness:
            data["contract_awareness"] = [delta.to_wire() for delta in self.contract_awareness]
        return {"error": {"code": int(self.code), "message": self.message, "data": data}}

    def to_json_text(self) -> str:
        """The integrators' JSON text envelope (issue 11), same content as the XML one."""
        body: dict[str, Any] = {
            "error": self.is_error,
            "type": JSON_ENVELOPE_TYPES.get(self.code_name, "Error"),
            "code": self.code_name,
            "message": self.message,
            "reason": self.reason,
            "recovery": self.recovery,
        }
        if self.severity != "error":
            body["severity"] = self.severity
        if self.available_actions:
            body["available_actions"] = list(self.available_actions)
        other_details = {key: value for key, value in self.details.items() if key != "reason"}
        if other_details:
            body["details"] = other_details
        if self.retry_after is not None:
            body["retry_after"] = self.retry_after
        if self.contract_awareness:
            body["contract_awareness"] = [delta.to_wire() for delta in self.contract_awareness]
        return json.dumps(body, ensure_ascii=False, default=str)

    def render(self, envelope_format: EnvelopeFormat = "xml") -> str:
        return self.to_json_text() if envelope_format == "json" else self.to_xml()


def render_awareness_xml(deltas: Sequence[Delta], indent: str = _INDENT) -> list[str]:
    """The ``<contract_awareness>`` section (issue 11): what changed in this tool's contract."""
    if not deltas:
        return []
    lines = [f"{indent}<contract_awareness>"]
    for delta in deltas:
        reason = f' reason="{escape_attribute(delta.reason)}"' if delta.reason else ""
        lines.append(
            f'{indent * 2}<change impact="{escape_attribute(delta.severity)}" kind="{escape_attribute(delta.kind)}"'
            f"{reason}>{escape_text(delta.message)}</change>"
        )
    lines.append(f"{indent}</contract_awareness>")
    return lines


def recovery_hint(recovery: Any) -> str | None:
    """The hint of a ``data["recovery"]`` value: ``{"hint": ...}`` or a plain string."""
    if isinstance(recovery, Mapping):
        hint = recovery.get("hint")
        return hint if isinstance(hint, str) and hint else None
    if isinstance(recovery, str) and recovery:
        return recovery
    return None


def _coerce_actions(actions: Any) -> tuple[str, ...]:
    if isinstance(actions, str):  # the flat "a, b" spelling some servers use
        actions = actions.split(",")
    if not isinstance(actions, Iterable):
        return ()
    return tuple(text for text in (str(action).strip() for action in actions) if text)


def _coerce_seconds(seconds: Any) -> float | None:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def normalize_details(data: Mapping[str, Any]) -> dict[str, Any]:
    # The reason leads: it is what a client switches on. Values are bounded because services
    # often echo caller input into their error data.
    details = {key: bound_value(value) for key, value in data.items() if key not in SECTION_KEYS}
    if "reason" in details:
        details = {"reason": details.pop("reason"), **details}
    return details


# -- the fluent builder -----------------------------------------------------------------------


def _coerce_code(code: JsonRpcErrorCode | int | str) -> JsonRpcErrorCode:
    if isinstance(code, JsonRpcErrorCode):
        return code
    if isinstance(code, str):
        try:
            return JsonRpcErrorCode[code]
        except KeyError:
            raise ValueError(f"unknown error code name {code!r}") from None
    try:
        return JsonRpcErrorCode(code)
    except ValueError:
        raise ValueError(f"unknown error code value {code!r}") from None


class ToolErrorBuilder(Exception):
    """``tool_error(code, message).suggest(...).actions(...).details(...).retry_after(30)``.

    Return it from a handler or raise it; no ``.build()``. With ``.severity("warning")`` it is
    guidance on the success path (``is_error=False``); attach the successful payload with
    ``.result(value)`` when the tool has one.
    """

    def __init__(self, code: JsonRpcErrorCode | int | str, message: str) -> None:
        super().__init__(message)
        self._code = _coerce_code(code)
        self._message = message
        self._severity: EnvelopeSeverity = "error"
        self._recovery: str | None = None
        self._actions: list[str] = []
        self._details: dict[str, Any] = {}
        self._retry_after: float | None = None
        self._result: Any = None
        self._has_result = False

    def suggest(self, recovery: str) -> ToolErrorBuilder:
        """The agent's next move (the ``<recovery>`` section)."""
        self._recovery = recovery
        return self

    def actions(self, *names: str | Iterable[str]) -> ToolErrorBuilder:
        """Tools the agent can call next: ``.actions("a", "b")`` or ``.actions(["a", "b"])``."""
        for name in names:
            self._actions.extend([name] if isinstance(name, str) else list(name))
        return self

    def details(self, values: Mapping[str, Any] | None = None, /, **more: Any) -> ToolErrorBuilder:
        """Key/value facts about the failure (the ``<details>`` section)."""
        for key, value in {**dict(values or {}), **more}.items():
            if key in SECTION_KEYS or key in FORBIDDEN_DATA_KEYS or key == "severity":
                raise ValueError(f"{key!r} cannot be a detail; use the builder method of that name")
            self._details[key] = value
        return self

    def reason(self, reason: str) -> ToolErrorBuilder:
        """The stable machine reason (a detail clients switch on; filled from the contract)."""
        self._details["reason"] = reason
        return self

    def retry_after(self, seconds: float) -> ToolErrorBuilder:
        if _coerce_seconds(seconds) is None:
            raise ValueError(f"retry_after takes a non-negative number of seconds, got {seconds!r}")
        self._retry_after = seconds
        return self

    def severity(self, level: EnvelopeSeverity) -> ToolErrorBuilder:
        if level not in ENVELOPE_SEVERITIES:
            raise ValueError(f"severity must be one of {ENVELOPE_SEVERITIES}, got {level!r}")
        self._severity = level
        return self

    def result(self, value: Any) -> ToolErrorBuilder:
        """The successful payload a ``warning`` accompanies (a fallback, a truncated result)."""
        self._result = value
        self._has_result = True
        return self

    @property
    def has_result(self) -> bool:
        return self._has_result

    @property
    def result_value(self) -> Any:
        return self._result

    @property
    def code(self) -> JsonRpcErrorCode:
        return self._code

    @property
    def message(self) -> str:
        return self._message

    def envelope(self) -> ToolErrorEnvelope:
        return ToolErrorEnvelope(
            code=self._code,
            message=self._message,
            severity=self._severity,
            recovery=self._recovery,
            available_actions=tuple(self._actions),
            details=normalize_details(self._details),
            retry_after=self._retry_after,
        )

    def __repr__(self) -> str:
        return f"tool_error({self._code.name}, {self._message!r})"


def tool_error(code: JsonRpcErrorCode | int | str, message: str) -> ToolErrorBuilder:
    """Start a ``<tool_error>`` envelope; ``code`` is a member, its value or its name."""
    return ToolErrorBuilder(code, message)
