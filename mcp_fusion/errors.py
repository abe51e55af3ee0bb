"""JSON-RPC error codes, the tool-execution error and its factories (DESIGN §3.1).

These tables are the single source of truth: the linter imports them to check contracts.

Codes are closed-then-open: a code is a ``JsonRpcErrorCode`` member, one of MCP Fusion's canonical
string codes (``CANONICAL_CODES``, each with the JSON-RPC number it mirrors as) or any custom
``UPPER_SNAKE_CASE`` string (mirrored as ``null``). Anything else is refused where it is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from enum import IntEnum
from types import MappingProxyType
from typing import Any

from .bounding import CREDENTIAL_KEYS, as_text, drop_credentials


class JsonRpcErrorCode(IntEnum):
    """Codes a tool failure can surface as. Member names are the envelope's string codes."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SERVICE_UNAVAILABLE = -32000
    NOT_FOUND = -32001
    CONFLICT = -32002
    RATE_LIMITED = -32003
    TIMEOUT = -32004
    FORBIDDEN = -32005
    UNAUTHORIZED = -32006
    VALIDATION_ERROR = -32007
    CONFIGURATION_ERROR = -32008
    INITIALIZATION_FAILED = -32009
    DATABASE_ERROR = -32010
    REQUEST_CANCELLED = -32011
    SERIALIZATION_ERROR = -32070
    UNKNOWN_ERROR = -32099


#: Codes any tool may fail with without declaring them (like HTTP 5xx in OpenAPI).
BASELINE_CODES: frozenset[JsonRpcErrorCode] = frozenset(
    {
        JsonRpcErrorCode.INTERNAL_ERROR,
        JsonRpcErrorCode.SERVICE_UNAVAILABLE,
        JsonRpcErrorCode.TIMEOUT,
        JsonRpcErrorCode.VALIDATION_ERROR,
        JsonRpcErrorCode.REQUEST_CANCELLED,
        JsonRpcErrorCode.SERIALIZATION_ERROR,
    }
)

#: MCP Fusion's canonical string codes and the JSON-RPC number each mirrors as (``None``: the name only).
#: A name that is also a ``JsonRpcErrorCode`` member always mirrors as that member.
CANONICAL_CODES: Mapping[str, JsonRpcErrorCode | None] = MappingProxyType(
    {
        "MISSING_DISCRIMINATOR": JsonRpcErrorCode.INVALID_PARAMS,
        "UNKNOWN_ACTION": JsonRpcErrorCode.INVALID_PARAMS,
        "MISSING_REQUIRED_FIELD": JsonRpcErrorCode.INVALID_PARAMS,
        "VALIDATION_ERROR": JsonRpcErrorCode.VALIDATION_ERROR,
        "INTERNAL_ERROR": JsonRpcErrorCode.INTERNAL_ERROR,
        "RATE_LIMITED": JsonRpcErrorCode.RATE_LIMITED,
        "UNAUTHORIZED": JsonRpcErrorCode.UNAUTHORIZED,
        "AUTH_REQUIRED": JsonRpcErrorCode.UNAUTHORIZED,
        "FORBIDDEN": JsonRpcErrorCode.FORBIDDEN,
        "NOT_FOUND": JsonRpcErrorCode.NOT_FOUND,
        "CONFLICT": JsonRpcErrorCode.CONFLICT,
        "TIMEOUT": JsonRpcErrorCode.TIMEOUT,
        "SERVER_BUSY": JsonRpcErrorCode.SERVICE_UNAVAILABLE,
        "DEPRECATED": None,
        "HANDOFF_UPSTREAM_UNAVAILABLE": JsonRpcErrorCode.SERVICE_UNAVAILABLE,
        "HANDOFF_CONNECTING": JsonRpcErrorCode.SERVICE_UNAVAILABLE,
        "HANDOFF_NAMESPACE_MISMATCH": JsonRpcErrorCode.INVALID_PARAMS,
    }
)

#: What a custom code looks like: ``UPPER_SNAKE_CASE`` (``INVOICE_LOCKED``, ``QUOTA_EXCEEDED_2``).
CUSTOM_CODE_PATTERN = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")

#: A code as the runtime holds it: a member, or a canonical/custom name that is not a member.
Code = JsonRpcErrorCode | str

CODE_EXPECTATION = (
    "a JsonRpcErrorCode member (e.g. JsonRpcErrorCode.NOT_FOUND) or its int value, one of the canonical "
    'codes (e.g. "SERVER_BUSY", "DEPRECATED") or a custom UPPER_SNAKE_CASE string'
)


def is_valid_code(value: object) -> bool:
    """Whether ``value`` is a code: a member, a member's int value, a canonical or UPPER_SNAKE_CASE name."""
    if isinstance(value, JsonRpcErrorCode):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value in _MEMBER_VALUES
    return isinstance(value, str) and (value in CANONICAL_CODES or CUSTOM_CODE_PATTERN.fullmatch(value) is not None)


def coerce_code(code: object) -> Code:
    """The code as the runtime holds it; a member name or value becomes the member.

    Raises ``ValueError`` naming the value when it is no code (see ``CODE_EXPECTATION``).
    """
    if isinstance(code, JsonRpcErrorCode):
        return code
    if isinstance(code, str):
        member = JsonRpcErrorCode.__members__.get(code)
        if member is not None:
            return member
        if code in CANONICAL_CODES or CUSTOM_CODE_PATTERN.fullmatch(code):
            return code
    elif isinstance(code, int) and not isinstance(code, bool) and code in _MEMBER_VALUES:
        return JsonRpcErrorCode(code)
    raise ValueError(f"{as_text(code)!r} is not an error code: use {CODE_EXPECTATION}")


def code_name(code: Code) -> str:
    """The envelope's ``code`` attribute: always the name."""
    # ``_name_`` is the member's plain attribute; ``.name`` goes through enum's descriptor (every failure asks 3x).
    return code._name_ if type(code) is JsonRpcErrorCode else code  # type: ignore[return-value]  # a JsonRpcErrorCode's _name_ is its str name


def code_value(code: Code) -> int | None:
    """The JSON-RPC number a code mirrors as: the member's value, the canonical mirror, else ``None``."""
    if isinstance(code, JsonRpcErrorCode):
        return int(code)
    mirror = CANONICAL_CODES.get(code)
    return int(mirror) if mirror is not None else None


_MEMBER_VALUES = frozenset(int(member) for member in JsonRpcErrorCode)

#: Key names that are never sent to a client, case-insensitively and at any depth of ``data``
#: (``password``, ``accessToken``, ``X-Api-Key``, ``{"ctx": {"auth": ...}}``...).
FORBIDDEN_DATA_KEYS: frozenset[str] = CREDENTIAL_KEYS


class McpError(Exception):
    """A tool-execution failure: what the model reads. Not the SDK's JSON-RPC ``MCPError``."""

    def __init__(
        self,
        code: JsonRpcErrorCode | int | str,
        message: str | None = None,
        data: Mapping[str, Any] | None = None,
        *,
        cause: BaseException | None = None,
    ) -> None:
        self.code: Code = coerce_code(code)
        self.message: str = as_text(message) if message is not None else _default_message(self.code)
        # Credentials never travel, at any depth; the rest is bounded when it is rendered.
        if data is not None and type(data) is not dict and not isinstance(data, Mapping):
            data = {"detail": data}  # ``not_found("x", "some text")``: kept, never a crash in the handler
        self.data: dict[str, Any] = drop_credentials(data) if data is not None else {}
        super().__init__(self.message)
        if cause is not None:
            self.__cause__ = cause

    @property
    def code_name(self) -> str:
        return code_name(self.code)

    @property
    def code_value(self) -> int | None:
        """The JSON-RPC number the mirror carries (``None`` for a custom code or ``DEPRECATED``)."""
        return code_value(self.code)

    @property
    def reason(self) -> str | None:
        reason = self.data.get("reason")
        return reason if isinstance(reason, str) else None

    def __repr__(self) -> str:
        return f"McpError({self.code_name}, {self.message!r}, data={self.data!r})"


def _default_message(code: Code) -> str:
    return code_name(code).replace("_", " ").capitalize()


class UndeclaredReasonError(McpError):
    """``ctx.fail(reason)`` for a reason the contract does not declare: a bug in the server.

    An ``INTERNAL_ERROR`` whose ``data`` lists the declared reasons for the developer; the boundary
    logs them and shows the model a masked failure instead (DESIGN §3.5).
    """

    def __init__(self, owner: str, reason: str, declared: list[str], *, cause: BaseException | None = None) -> None:
        super().__init__(
            JsonRpcErrorCode.INTERNAL_ERROR,
            f"{owner} failed with reason {reason!r}, which its error contract does not declare",
            {"undeclared_reason": reason, "declared_reasons": declared},
            cause=cause,
        )
        self.undeclared_reason = reason
        self.declared_reasons = tuple(declared)


def _factory(code: JsonRpcErrorCode, name: str) -> Callable[..., McpError]:
    def make(
        message: str | None = None,
        data: Mapping[str, Any] | None = None,
        *,
        cause: BaseException | None = None,
    ) -> McpError:
        return McpError(code, message, data, cause=cause)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"Return an McpError with code {code.name} ({int(code)})."
    return make


#: The public factory table: factory name -> the code its errors carry.
FACTORY_CODES: Mapping[str, JsonRpcErrorCode] = {
    "invalid_params": JsonRpcErrorCode.INVALID_PARAMS,
    "invalid_request": JsonRpcErrorCode.INVALID_REQUEST,
    "not_found": JsonRpcErrorCode.NOT_FOUND,
    "forbidden": JsonRpcErrorCode.FORBIDDEN,
    "unauthorized": JsonRpcErrorCode.UNAUTHORIZED,
    "validation_error": JsonRpcErrorCode.VALIDATION_ERROR,
    "conflict": JsonRpcErrorCode.CONFLICT,
    "rate_limited": JsonRpcErrorCode.RATE_LIMITED,
    "timeout": JsonRpcErrorCode.TIMEOUT,
    "service_unavailable": JsonRpcErrorCode.SERVICE_UNAVAILABLE,
    "configuration_error": JsonRpcErrorCode.CONFIGURATION_ERROR,
    "internal_error": JsonRpcErrorCode.INTERNAL_ERROR,
    "serialization_error": JsonRpcErrorCode.SERIALIZATION_ERROR,
    "database_error": JsonRpcErrorCode.DATABASE_ERROR,
    "request_cancelled": JsonRpcErrorCode.REQUEST_CANCELLED,
}

invalid_params = _factory(JsonRpcErrorCode.INVALID_PARAMS, "invalid_params")
invalid_request = _factory(JsonRpcErrorCode.INVALID_REQUEST, "invalid_request")
not_found = _factory(JsonRpcErrorCode.NOT_FOUND, "not_found")
forbidden = _factory(JsonRpcErrorCode.FORBIDDEN, "forbidden")
unauthorized = _factory(JsonRpcErrorCode.UNAUTHORIZED, "unauthorized")
validation_error = _factory(JsonRpcErrorCode.VALIDATION_ERROR, "validation_error")
conflict = _factory(JsonRpcErrorCode.CONFLICT, "conflict")
rate_limited = _factory(JsonRpcErrorCode.RATE_LIMITED, "rate_limited")
timeout = _factory(JsonRpcErrorCode.TIMEOUT, "timeout")
service_unavailable = _factory(JsonRpcErrorCode.SERVICE_UNAVAILABLE, "service_unavailable")
configuration_error = _factory(JsonRpcErrorCode.CONFIGURATION_ERROR, "configuration_error")
internal_error = _factory(JsonRpcErrorCode.INTERNAL_ERROR, "internal_error")
serialization_error = _factory(JsonRpcErrorCode.SERIALIZATION_ERROR, "serialization_error")
database_error = _factory(JsonRpcErrorCode.DATABASE_ERROR, "database_error")
request_cancelled = _factory(JsonRpcErrorCode.REQUEST_CANCELLED, "request_cancelled")

FACTORIES: Mapping[str, Callable[..., McpError]] = {name: globals()[name] for name in FACTORY_CODES}
