"""Codes, McpError and the factories (DESIGN §3.1)."""

from __future__ import annotations

import pytest

import mcp_fusion
from mcp_fusion import errors
from mcp_fusion.errors import BASELINE_CODES, FACTORIES, FACTORY_CODES, JsonRpcErrorCode, McpError

EXPECTED_CODES = {
    "PARSE_ERROR": -32700,
    "INVALID_REQUEST": -32600,
    "METHOD_NOT_FOUND": -32601,
    "INVALID_PARAMS": -32602,
    "INTERNAL_ERROR": -32603,
    "SERVICE_UNAVAILABLE": -32000,
    "NOT_FOUND": -32001,
    "CONFLICT": -32002,
    "RATE_LIMITED": -32003,
    "TIMEOUT": -32004,
    "FORBIDDEN": -32005,
    "UNAUTHORIZED": -32006,
    "VALIDATION_ERROR": -32007,
    "CONFIGURATION_ERROR": -32008,
    "INITIALIZATION_FAILED": -32009,
    "DATABASE_ERROR": -32010,
    "REQUEST_CANCELLED": -32011,
    "SERIALIZATION_ERROR": -32070,
    "UNKNOWN_ERROR": -32099,
}

EXPECTED_FACTORIES = {
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


def test_code_table_is_exactly_the_design_table() -> None:
    assert {member.name: int(member) for member in JsonRpcErrorCode} == EXPECTED_CODES


def test_baseline_codes_are_the_marked_rows() -> None:
    assert {code.name for code in BASELINE_CODES} == {
        "INTERNAL_ERROR",
        "SERVICE_UNAVAILABLE",
        "TIMEOUT",
        "VALIDATION_ERROR",
        "REQUEST_CANCELLED",
        "SERIALIZATION_ERROR",
    }


def test_factory_table_is_public_and_complete() -> None:
    assert dict(FACTORY_CODES) == EXPECTED_FACTORIES
    assert set(FACTORIES) == set(EXPECTED_FACTORIES)


@pytest.mark.parametrize("name, code", sorted(EXPECTED_FACTORIES.items()))
def test_every_factory_builds_its_code(name: str, code: JsonRpcErrorCode) -> None:
    cause = KeyError("k")
    for factory in (getattr(errors, name), getattr(mcp_fusion, name), FACTORIES[name]):
        error = factory("went wrong", {"reason": "some_reason"}, cause=cause)
        assert isinstance(error, McpError)
        assert error.code is code
        assert error.message == "went wrong"
        assert error.data == {"reason": "some_reason"}
        assert error.__cause__ is cause
        assert factory.__name__ == name


def test_factory_data_may_be_passed_by_keyword_and_message_defaults_from_the_code() -> None:
    error = errors.not_found(data={"id": 1})
    assert error.data == {"id": 1}
    assert error.message == "Not found"


@pytest.mark.parametrize(
    "data",
    [{"auth": "Bearer secret", "reason": "r"}, {"reason": "r", "auth": {"token": "t"}}],
)
def test_mcp_error_never_carries_auth(data: dict) -> None:
    assert "auth" not in McpError(JsonRpcErrorCode.FORBIDDEN, "no", data).data
    assert "auth" not in errors.forbidden("no", data).data
    assert McpError(JsonRpcErrorCode.FORBIDDEN, "no", data).data == {"reason": "r"}


def test_mcp_error_copies_its_data() -> None:
    data = {"reason": "r"}
    error = McpError(JsonRpcErrorCode.CONFLICT, "x", data)
    data["reason"] = "changed"
    assert error.reason == "r"


def test_mcp_error_refuses_what_is_no_code_naming_it() -> None:
    for code in (-1, "not_found", "Oops!", 1.5, None):
        with pytest.raises(ValueError, match=r"is not an error code: use a JsonRpcErrorCode member"):
            McpError(code, "odd")  # type: ignore[arg-type]


def test_mcp_error_takes_canonical_and_custom_codes() -> None:
    busy = McpError("SERVER_BUSY", "At capacity")
    assert (busy.code, busy.code_name, busy.code_value) == ("SERVER_BUSY", "SERVER_BUSY", -32000)
    custom = McpError("INVOICE_LOCKED", "Locked")
    assert (custom.code_name, custom.code_value) == ("INVOICE_LOCKED", None)
    assert McpError("NOT_FOUND").code is JsonRpcErrorCode.NOT_FOUND


def test_mcp_error_message_is_always_text() -> None:
    assert McpError(JsonRpcErrorCode.NOT_FOUND, 12345).message == "12345"  # type: ignore[arg-type]
    assert McpError(JsonRpcErrorCode.NOT_FOUND, "caf\udce9").message == "caf\ufffd"


def test_mcp_error_drops_credentials_at_any_depth() -> None:
    data = {
        "user": "ada",
        "password": "p",
        "ctx": {"auth": "a", "region": "eu"},
        "rows": [{"api_key": "k", "id": 1}],
        "accessToken": "t",
        "X-Api-Key": "x",
        "max_tokens": 5,
        "author": "me",
    }
    assert McpError(JsonRpcErrorCode.FORBIDDEN, "no", data).data == {
        "user": "ada",
        "ctx": {"region": "eu"},
        "rows": [{"id": 1}],
        "max_tokens": 5,
        "author": "me",
    }
