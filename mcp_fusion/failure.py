"""What a client reads back from the wire: a typed :class:`ToolFailure` (issue 11).

No SDK needed. ``mcp_fusion.client`` parses results into it and re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any

from .validation import VALIDATION_REASON


class EnvelopeParseError(ValueError):
    """The text is not a readable ``tool_error``/``validation_error`` envelope."""


@dataclass(eq=False)
class ToolFailure(Exception):
    """A tool failure (or warning) as a client reads it back from the wire.

    ``code`` is the envelope's code name and ``code_value`` its JSON-RPC value (``None`` for a
    custom code or ``DEPRECATED``); ``details`` are the
    envelope's details as text (the ``reason`` has its own field). For a validation error,
    ``action`` names the tool and ``fields`` lists ``(field, problem)`` pairs. ``raw`` is the parsed
    form it came from (an XML element, or a dict) and ``source`` says which: ``"xml"``, ``"json"``
    (the integrators' text envelope) or ``"structured"`` (the mirror).
    """

    code: str
    code_value: int | None
    message: str
    reason: str | None = None
    recovery: str | None = None
    available_actions: tuple[str, ...] = ()
    details: dict[str, str] = field(default_factory=dict)
    retry_after: float | None = None
    severity: str = "error"
    action: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    contract_awareness: tuple[dict[str, Any], ...] = ()
    raw: Any = field(default=None, repr=False)
    source: str = ""
    #: Set when the result was an error but its text could not be read as an envelope.
    parse_error: str | None = None

    def __post_init__(self) -> None:
        Exception.__init__(self, f"{self.code}: {self.message}")

    @property
    def retryable(self) -> bool | None:
        flag = self.details.get("retryable")
        return {"true": True, "false": False}.get(flag) if flag is not None else None

    @property
    def is_error(self) -> bool:
        return self.severity != "warning"

    @property
    def is_validation_error(self) -> bool:
        return self.reason == VALIDATION_REASON

    def semantic_key(self) -> tuple[Any, ...]:
        """Everything a failure says, without where it was read from (``raw``/``source``)."""
        ignored = {"raw", "source", "parse_error"}
        key = []
        for item in dataclass_fields(self):
            if item.name in ignored:
                continue
            value = getattr(self, item.name)
            if isinstance(value, dict):
                value = tuple(sorted(value.items()))
            elif item.name == "contract_awareness":
                value = tuple(tuple(sorted(change.items())) for change in value)
            key.append(value)
        return tuple(key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolFailure):
            return NotImplemented
        return self.semantic_key() == other.semantic_key()

    def __hash__(self) -> int:
        return hash(self.semantic_key())

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle as cls(*args); a dataclass needs its fields back (multiprocessing, caches).
        return (
            _restore_failure,
            (type(self), {item.name: getattr(self, item.name) for item in dataclass_fields(self)}),
        )

    def __str__(self) -> str:
        text = f"{self.code}: {self.message}"
        if self.reason:
            text += f" (reason: {self.reason})"
        if self.recovery:
            text += f" — {self.recovery}"
        return text


def _restore_failure(cls: type[ToolFailure], state: dict[str, Any]) -> ToolFailure:
    return cls(**state)
