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

Element text escapes only ``&`` and ``<`` (``>`` and quotes stay readable for the model), and
``\r`` so it survives an XML parser's line-end normalisation; attributes escape all five, and
``\r``, ``\n``, ``\t``. The structured mirror is a JSON-RPC style error object,
``{"error": {"code": -32001, "code_name": "NOT_FOUND", "message": ..., "data": {"reason",
"recovery": {"hint"}, ...}}}``; ``code`` is ``null`` for a code with no JSON-RPC number
(``DEPRECATED``, a custom code).

Every envelope is normalised when it is made, whatever made it: the code is checked (§3.1), the
message, recovery, actions and details are bounded and sanitised (``mcp_fusion.bounding``), keys
named like credentials are dropped at any depth, and ``data`` can never set the envelope's
severity. So every rendering is valid XML / strict JSON of a bounded size.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import TYPE_CHECKING, Any, Literal

from .bounding import (
    MAX_ITEMS,
    as_text,
    bound_text,
    bound_value,
    clean_text,
    compact_json,
    is_plain_and_small,
    strict_compact_json,
)
from .errors import Code, McpError, code_name, code_value, coerce_code

if TYPE_CHECKING:  # pragma: no cover
    from .lockfile import Delta

EnvelopeSeverity = Literal["error", "critical", "warning"]
#: ``error`` and ``critical`` fail the call (``is_error=True``); ``warning`` is guidance on success.
ENVELOPE_SEVERITIES: tuple[str, ...] = ("error", "critical", "warning")

#: ``McpError.data`` keys the envelope renders as their own sections, never as ``<detail>``.
SECTION_KEYS: frozenset[str] = frozenset({"recovery", "available_actions", "retry_after", "contract_awareness"})
#: ``data`` keys the envelope owns: a detail of that name would contradict the envelope itself.
OWNED_KEYS: frozenset[str] = frozenset({"severity"})
#: Tool names are at most 128 characters (MCP); an action longer than that is cut.
MAX_ACTION_CHARS = 128

#: ``type`` of the integrators' JSON envelope, by code (issue 11); anything else is ``"Error"``.
JSON_ENVELOPE_TYPES: Mapping[str, str] = {
    "FORBIDDEN": "PermissionError",
    "NOT_FOUND": "NotFoundError",
    "CONFLICT": "ConflictError",
    "VALIDATION_ERROR": "ValidationError",
    "INVALID_PARAMS": "ValidationError",
}

#: ``_meta`` key of the structured mirror when ``structured_content`` belongs to the output schema.
ERROR_META_KEY = "fusion/error"

EnvelopeFormat = Literal["xml", "json"]
ENVELOPE_FORMATS: tuple[str, ...] = ("xml", "json")

_INDENT = "  "


# -- escaping ---------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all, even escaped: emitted as-is they would make the whole
# envelope unparseable, so they become U+FFFD.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# What makes text or an attribute need any work at all (most need none).
_TEXT_SPECIAL = re.compile("[&<>\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ATTRIBUTE_SPECIAL = re.compile("[&<>\"'\r\n\t\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape_text(text: str) -> str:
    """Element text: escape ``&`` and ``<`` only, so ``>`` and quotes stay readable.

    The exceptions: ``]]>``, which XML forbids in text (its ``>`` is escaped), and ``\r``, which a
    parser would turn into ``\n`` (written ``&#13;`` it reads back as itself).
    """
    if not _TEXT_SPECIAL.search(text):
        return text  # most text needs nothing
    cleaned = _XML_ILLEGAL.sub("\ufffd", text)
    escaped = cleaned.replace("&", "&amp;").replace("<", "&lt;").replace("]]>", "]]&gt;")
    return escaped.replace("\r", "&#13;") if "\r" in escaped else escaped


def escape_attribute(text: str) -> str:
    """Attribute values: escape all five XML specials, and the whitespace a parser would normalise."""
    if not _ATTRIBUTE_SPECIAL.search(text):
        return text
    cleaned = _XML_ILLEGAL.sub("\ufffd", text)
    escaped = (
        cleaned.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )
    if "\r" in escaped or "\n" in escaped or "\t" in escaped:
        escaped = escaped.replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#9;")
    return escaped


def render_detail_value(value: Any) -> str:
    """How a detail value reads in text: strings as-is, everything else as compact JSON."""
    if isinstance(value, str):
        return clean_text(value)
    try:
        return strict_compact_json(value)
    except (TypeError, ValueError, RecursionError):
        # A client reading another server's data: not bounded by this runtime, so bound it now.
        return compact_json(bound_value(value))


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

    code: Code
    message: str
    severity: EnvelopeSeverity = "error"
    recovery: str | None = None
    available_actions: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    retry_after: float | None = None
    contract_awareness: tuple[Delta, ...] = ()

    def __post_init__(self) -> None:
        # Normalising is idempotent, so ``dataclasses.replace`` of an envelope costs little.
        if self.severity not in ENVELOPE_SEVERITIES:
            raise ValueError(f"envelope severity must be one of {ENVELOPE_SEVERITIES}, got {self.severity!r}")
        if self.retry_after is not None and coerce_seconds(self.retry_after) is None:
            raise ValueError(f"retry_after takes a non-negative number of seconds, got {self.retry_after!r}")
        recovery = self.recovery
        # One update of the (frozen) instance's fields instead of one object.__setattr__ per field.
        self.__dict__.update(
            code=coerce_code(self.code),
            message=bound_text(self.message if type(self.message) is str else as_text(self.message)),
            recovery=bound_text(recovery if type(recovery) is str else as_text(recovery)) if recovery else None,
            available_actions=_coerce_actions(self.available_actions) if self.available_actions else (),
            details=normalize_details(self.details),
        )

    @property
    def code_name(self) -> str:
        """The envelope's ``code`` attribute: always the name (``NOT_FOUND``, ``SERVER_BUSY``, ``MY_CODE``)."""
        return code_name(self.code)

    @property
    def code_value(self) -> int | None:
        """The JSON-RPC number of the mirror's ``code``: ``None`` for ``DEPRECATED`` or a custom code."""
        return code_value(self.code)

    @property
    def reason(self) -> str | None:
        reason = self.details.get("reason")
        return reason if isinstance(reason, str) else None

    @property
    def is_error(self) -> bool:
        return self.severity != "warning"

    # -- constructors -----------------------------------------------------------------------

    @classmethod
    def from_mcp_error(
        cls, error: McpError, *, default_recovery: str | None = None, default_retryable: bool | None = None
    ) -> ToolErrorEnvelope:
        """The envelope of an ``McpError``: its data's sections become sections, the rest details.

        ``default_recovery``/``default_retryable`` (the contract entry's) fill what the throw site
        left unset: a throw-site recovery always wins.
        """
        data = error.data if type(error.data) is dict or isinstance(error.data, Mapping) else {}
        if default_retryable is not None and "retryable" not in data:
            data = {**data, "retryable": default_retryable}
        # A raised McpError fails the call: its data may escalate it to critical, never make it a warning.
        severity: EnvelopeSeverity = "critical" if data.get("severity") == "critical" else "error"
        return cls(
            code=error.code,
            message=error.message,
            severity=severity,
            recovery=recovery_hint(data.get("recovery")) or default_recovery,
            available_actions=_coerce_actions(actions)
            if (actions := data.get("available_actions")) is not None
            else (),
            details=data,
            retry_after=coerce_seconds(data.get("retry_after")),
        )

    def with_contract_awareness(self, deltas: Sequence[Delta]) -> ToolErrorEnvelope:
        return replace(self, contract_awareness=tuple(deltas))

    # -- renderings -------------------------------------------------------------------------

    def to_xml(self) -> str:
        # Every failure renders this: one list, no generator, sections only when set (DESIGN §3.5).
        lines = [
            f'<tool_error code="{escape_attribute(code_name(self.code))}" severity="{escape_attribute(self.severity)}">',
            f"{_INDENT}<message>{escape_text(self.message)}</message>",
        ]
        if self.recovery:
            lines.append(f"{_INDENT}<recovery>{escape_text(self.recovery)}</recovery>")
        if self.available_actions:
            lines.append(f"{_INDENT}<available_actions>")
            for action in self.available_actions:
                lines.append(f"{_INDENT * 2}<action>{escape_text(action)}</action>")
            lines.append(f"{_INDENT}</available_actions>")
        if self.details:
            lines.append(f"{_INDENT}<details>")
            for key, value in self.details.items():
                lines.append(
                    f'{_INDENT * 2}<detail key="{escape_attribute(str(key))}">{escape_text(render_detail_value(value))}</detail>'
                )
            lines.append(f"{_INDENT}</details>")
        if self.retry_after is not None:
            lines.append(f"{_INDENT}<retry_after>{render_seconds(self.retry_after)}</retry_after>")
        if self.contract_awareness:
            lines.extend(render_awareness_xml(self.contract_awareness))
        lines.append("</tool_error>")
        return "\n".join(lines)

    def to_structured(self) -> dict[str, Any]:
        """The JSON mirror: ``{"error": {"code", "code_name", "message", "data": {...}}}``."""
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
        code = self.code
        return {
            "error": {"code": code_value(code), "code_name": code_name(code), "message": self.message, "data": data}
        }

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
        return json.dumps(body, ensure_ascii=False, allow_nan=False)

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
    if recovery is None:
        return None
    if isinstance(recovery, Mapping):
        hint = recovery.get("hint")
        return hint if isinstance(hint, str) and hint else None
    if isinstance(recovery, str) and recovery:
        return recovery
    return None


def _coerce_actions(actions: Any) -> tuple[str, ...]:
    """At most 10 tool names of at most 128 characters each (an iterator is read no further)."""
    if isinstance(actions, str):  # the flat "a, b" spelling some servers use
        actions = actions.split(",")
    if not isinstance(actions, Iterable) or isinstance(actions, (bytes, Mapping)):
        return ()
    names = []
    for action in islice(actions, MAX_ITEMS * 2):
        text = as_text(action).strip()[:MAX_ACTION_CHARS]
        if text:
            names.append(text)
    return tuple(names[:MAX_ITEMS])


def coerce_seconds(seconds: Any) -> float | None:
    """A ``retry_after`` in seconds: a finite, non-negative number, else ``None``."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None
    try:
        if not math.isfinite(seconds) or seconds < 0:
            return None
    except OverflowError:  # an int too large for a float is no delay anyone can wait
        return None
    return seconds


def _leads(details: dict[Any, Any], key: str) -> bool:
    first = next(iter(details))
    return type(first) is str and first == key


def normalize_details(data: Mapping[str, Any]) -> dict[str, Any]:
    """The ``<details>`` of a failure's data: bounded, sanitised, without sections or owned keys.

    The reason leads (it is what a client switches on, so it is never the one cut). Values are
    bounded because services often echo caller input into their error data.
    """
    if type(data) is not dict and not isinstance(data, Mapping):
        return {}
    details = {key: value for key, value in data.items() if key not in SECTION_KEYS and key not in OWNED_KEYS}
    if "reason" in details and not _leads(details, "reason"):
        details = {"reason": details.pop("reason"), **details}
    if is_plain_and_small(details):
        return details  # our own copy, and bounding it would change nothing
    bounded = bound_value(details, source=data)
    return bounded if isinstance(bounded, dict) else {}
