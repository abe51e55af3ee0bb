"""The fluent ``tool_error`` builder (DESIGN §3.5), re-exported from ``mcp_fusion``.

Seed 000's examples, in Python::

    return tool_error("DEPRECATED", "This endpoint is deprecated.").severity("warning")
    raise tool_error("SERVER_BUSY", "At capacity.").suggest("Send fewer calls at once.").retry_after(5)
    return tool_error("PROJECT_NOT_FOUND", "No such project.").actions("projects_list")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Any

from .bounding import MAX_ITEMS, as_text, is_credential_key
from .envelope import ENVELOPE_SEVERITIES, OWNED_KEYS, SECTION_KEYS, EnvelopeSeverity, ToolErrorEnvelope, coerce_seconds
from .errors import Code, JsonRpcErrorCode, code_name, coerce_code


class ToolErrorBuilder(Exception):
    """``tool_error(code, message).suggest(...).actions(...).details(...).retry_after(30)``.

    Return it from a handler or raise it; no ``.build()``. With ``.severity("warning")`` it is
    guidance on the success path (``is_error=False``); attach the successful payload with
    ``.result(value)`` when the tool has one (a tool with an output schema needs one).
    """

    def __init__(self, code: JsonRpcErrorCode | int | str, message: str) -> None:
        self._code: Code = coerce_code(code)  # refused here, naming it, when it is no code (§3.1)
        self._message = as_text(message)
        super().__init__(self._message)
        self._severity: EnvelopeSeverity = "error"
        self._recovery: str | None = None
        self._actions: list[str] = []
        self._details: dict[Any, Any] = {}
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
            self._actions.extend([name] if isinstance(name, str) else islice(name, MAX_ITEMS * 2))
        return self

    def details(self, values: Mapping[Any, Any] | None = None, /, **more: Any) -> ToolErrorBuilder:
        """Key/value facts about the failure (the ``<details>`` section).

        Keys named like credentials are dropped (they never reach the model); a key that names a
        section or the severity is refused, naming the builder method to use instead.
        """
        for key, value in {**dict(values or {}), **more}.items():
            if key in SECTION_KEYS or key in OWNED_KEYS:
                raise ValueError(f"{key!r} cannot be a detail; use the builder method of that name")
            if not is_credential_key(key):
                self._details[key] = value
        return self

    def reason(self, reason: str) -> ToolErrorBuilder:
        """The stable machine reason (a detail clients switch on; filled from the contract)."""
        self._details["reason"] = reason
        return self

    def retry_after(self, seconds: float) -> ToolErrorBuilder:
        if coerce_seconds(seconds) is None:
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
    def reason_value(self) -> Any:
        """The ``reason`` detail as given (``.reason(...)`` or ``.details(reason=...)``), else ``None``."""
        return self._details.get("reason")

    @property
    def code(self) -> Code:
        return self._code

    @property
    def message(self) -> str:
        return self._message

    def envelope(
        self, *, default_recovery: str | None = None, default_retryable: bool | None = None
    ) -> ToolErrorEnvelope:
        """The envelope as built; the defaults (a contract entry's) fill a recovery or ``retryable`` left unset."""
        details = self._details
        if default_retryable is not None and "retryable" not in details:
            details = {**details, "retryable": default_retryable}
        return ToolErrorEnvelope(
            code=self._code,
            message=self._message,
            severity=self._severity,
            recovery=self._recovery or default_recovery,
            available_actions=tuple(self._actions),
            details=details,
            retry_after=self._retry_after,
        )

    def __repr__(self) -> str:
        return f"tool_error({code_name(self._code)}, {self._message!r})"


def tool_error(code: JsonRpcErrorCode | int | str, message: str) -> ToolErrorBuilder:
    """Start a ``<tool_error>`` envelope.

    ``code`` is a ``JsonRpcErrorCode`` member, its value or its name, one of the canonical codes
    (``"SERVER_BUSY"``, ``"DEPRECATED"``, ...) or a custom ``UPPER_SNAKE_CASE`` string.
    """
    return ToolErrorBuilder(code, message)
