"""JSON-RPC error codes, the tool-execution error and its factories (DESIGN §3.1).

These tables are the single source of truth: the linter imports them to check contracts.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any, Callable, Mapping


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

#: ``data`` keys that must never travel to a client (secrets).
FORBIDDEN_DATA_KEYS: frozenset[str] = frozenset({"auth"})


class McpError(Exception):
    """A tool-execution failure: what the model reads. Not the SDK's JSON-RPC ``MCPError``."""

    def __init__(
        self,
        code: JsonRpcErrorCode | int,
        message: str | None = None,
        data: Mapping[str, Any] | None = None,
        *,
        cause: BaseException | None = None,
    ) -> None:
        try:
            self.code: JsonRpcErrorCode | int = JsonRpcErrorCode(code)
        except ValueError:
            self.code = int(code)
        self.message: str = message if message is not None else _default_message(self.code)
        self.data: dict[str, Any] = {
            k: v for k, v in dict(data or {}).items() if k not in FORBIDDEN_DATA_KEYS
        }
        super().__init__(self.message)
        if cause is not None:
            self.__cause__ = cause

    @property
    def code_name(self) -> str:
        return self.code.name if isinstance(self.code, JsonRpcErrorCode) else "UNKNOWN_ERROR"

    @property
    def reason(self) -> str | None:
        reason = self.data.get("reason")
        return reason if isinstance(reason, str) else None

    def __repr__(self) -> str:
        return f"McpError({self.code_name}, {self.message!r}, data={self.data!r})"


def _default_message(code: JsonRpcErrorCode | int) -> str:
    if isinstance(code, JsonRpcErrorCode):
        return code.name.replace("_", " ").capitalize()
    return "Error"


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
