"""Closed-then-open codes (DESIGN §3.1, seed 000): canonical and custom codes, and seed 000's examples.

The examples are seed 000's, written in Python as its own docs write them in TypeScript: the
deprecated-endpoint warning, load shedding with a retry delay, and a custom code.
"""

from __future__ import annotations

import pytest
from runtime_testing import connected, envelope_text

import mcp_fusion
from mcp_fusion import (
    CANONICAL_CODES,
    Context,
    ErrorContract,
    FusionServer,
    JsonRpcErrorCode,
    McpError,
    code_name,
    code_value,
    coerce_code,
    is_valid_code,
    tool,
    tool_error,
)
from mcp_fusion.client import parse_tool_result

pytestmark = pytest.mark.anyio

DESIGN_CANONICAL_CODES = {
    "MISSING_DISCRIMINATOR": -32602,
    "UNKNOWN_ACTION": -32602,
    "MISSING_REQUIRED_FIELD": -32602,
    "VALIDATION_ERROR": -32007,
    "INTERNAL_ERROR": -32603,
    "RATE_LIMITED": -32003,
    "UNAUTHORIZED": -32006,
    "AUTH_REQUIRED": -32006,
    "FORBIDDEN": -32005,
    "NOT_FOUND": -32001,
    "CONFLICT": -32002,
    "TIMEOUT": -32004,
    "SERVER_BUSY": -32000,
    "DEPRECATED": None,
    "HANDOFF_UPSTREAM_UNAVAILABLE": -32000,
    "HANDOFF_CONNECTING": -32000,
    "HANDOFF_NAMESPACE_MISMATCH": -32602,
}


def test_canonical_codes_are_the_design_table() -> None:
    assert {name: (int(mirror) if mirror is not None else None) for name, mirror in CANONICAL_CODES.items()} == (
        DESIGN_CANONICAL_CODES
    )
    assert all(mirror is None or isinstance(mirror, JsonRpcErrorCode) for mirror in CANONICAL_CODES.values())
    # A name that is also a member always mirrors as that member.
    assert all(
        CANONICAL_CODES[name] is JsonRpcErrorCode[name]
        for name in CANONICAL_CODES
        if name in JsonRpcErrorCode.__members__
    )
    with pytest.raises(TypeError):
        CANONICAL_CODES["MINE"] = None  # type: ignore[index]


@pytest.mark.parametrize(
    "code, valid",
    [
        (JsonRpcErrorCode.NOT_FOUND, True),
        (-32001, True),
        ("NOT_FOUND", True),
        ("SERVER_BUSY", True),
        ("DEPRECATED", True),
        ("INVOICE_LOCKED", True),
        ("QUOTA_2", True),
        ("A", True),
        ("not_found", False),
        ("ProjectNotFound", False),
        ("NOT FOUND", False),
        ("_LEADING", False),
        ("TRAILING_", False),
        ("DOUBLE__UNDERSCORE", False),
        ("1ST", False),
        ("", False),
        (12345, False),
        (True, False),
        (None, False),
        (1.5, False),
        (b"NOT_FOUND", False),
    ],
)
def test_is_valid_code(code: object, valid: bool) -> None:
    assert is_valid_code(code) is valid
    if valid:
        coerce_code(code)
    else:
        with pytest.raises(ValueError, match="is not an error code"):
            coerce_code(code)


@pytest.mark.parametrize(
    "code, name, value",
    [
        ("NOT_FOUND", "NOT_FOUND", -32001),
        (-32001, "NOT_FOUND", -32001),
        ("SERVER_BUSY", "SERVER_BUSY", -32000),
        ("AUTH_REQUIRED", "AUTH_REQUIRED", -32006),
        ("DEPRECATED", "DEPRECATED", None),
        ("MY_CODE", "MY_CODE", None),
    ],
)
def test_the_mirror_carries_the_number_or_null_and_the_envelope_the_name(
    code: object, name: str, value: int | None
) -> None:
    coerced = coerce_code(code)
    assert (code_name(coerced), code_value(coerced)) == (name, value)
    envelope = tool_error(code, "x").envelope()  # type: ignore[arg-type]
    assert envelope.to_xml().startswith(f'<tool_error code="{name}" severity="error">')
    assert envelope.to_structured()["error"]["code"] == value
    assert envelope.to_structured()["error"]["code_name"] == name


def test_the_public_names_are_exported() -> None:
    for name in ("CANONICAL_CODES", "is_valid_code", "coerce_code", "code_name", "code_value"):
        assert name in mcp_fusion.__all__


@tool("legacy_report", description="Seed 000's deprecation warning on the success path.")
def legacy_report() -> str:
    return tool_error("DEPRECATED", "This endpoint is deprecated.").severity("warning")  # type: ignore[return-value]


@tool("busy_report", description="Seed 000's load shedding.")
def busy_report() -> str:
    raise (
        tool_error("SERVER_BUSY", 'Tool "busy_report" is at capacity (8 active, 32 queued). Retry after a short delay.')
        .suggest(
            "Reduce the number of concurrent calls to this tool. Send requests sequentially or in smaller batches."
        )
        .retry_after(5)
    )


@tool("project_report", description="Seed 000's custom code (UPPER_SNAKE_CASE, as DESIGN §3.1 requires).")
def project_report(project_id: str) -> str:
    return (
        tool_error("PROJECT_NOT_FOUND", f"Project '{project_id}' does not exist.")
        .suggest(  # type: ignore[return-value]
            "Call projects_list first to get valid IDs, then retry."
        )
        .actions(["projects_list"])
    )


SHED = ErrorContract(
    reason="shed",
    code="SERVER_BUSY",
    when="Too many calls at once",
    recovery="Wait five seconds, then call queued_report again.",
    retryable=True,
)
LOCKED = ErrorContract(
    reason="locked",
    code="REPORT_LOCKED",
    when="Another export holds the report",
    recovery="Wait for the export to finish, then call queued_report again.",
)


@tool("queued_report", errors=[SHED, LOCKED])
def queued_report(which: str, ctx: Context) -> str:
    raise ctx.fail("shed" if which == "busy" else "locked", data={"retry_after": 5} if which == "busy" else None)


@pytest.fixture
def server() -> FusionServer:
    return FusionServer("reports", tools=[legacy_report, busy_report, project_report, queued_report])


async def test_seed_deprecated_warning(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("legacy_report", {})
    assert result.is_error is False
    assert envelope_text(result) == (
        '<tool_error code="DEPRECATED" severity="warning">\n'
        "  <message>This endpoint is deprecated.</message>\n"
        "</tool_error>"
    )
    assert result.structured_content["error"] == {
        "code": None,
        "code_name": "DEPRECATED",
        "message": "This endpoint is deprecated.",
        "data": {"severity": "warning"},
    }
    failure = parse_tool_result(result)
    assert (failure.code, failure.code_value, failure.is_error) == ("DEPRECATED", None, False)


async def test_seed_server_busy_with_retry_after(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("busy_report", {})
    assert result.is_error is True
    assert envelope_text(result) == (
        '<tool_error code="SERVER_BUSY" severity="error">\n'
        '  <message>Tool "busy_report" is at capacity (8 active, 32 queued). Retry after a short delay.</message>\n'
        "  <recovery>Reduce the number of concurrent calls to this tool. Send requests sequentially or in smaller "
        "batches.</recovery>\n"
        "  <retry_after>5 seconds</retry_after>\n"
        "</tool_error>"
    )
    error = result.structured_content["error"]
    assert (error["code"], error["code_name"], error["data"]["retry_after"]) == (-32000, "SERVER_BUSY", 5)


async def test_seed_custom_code(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("project_report", {"project_id": "proj_xyz"})
    assert result.is_error is True
    assert envelope_text(result) == (
        '<tool_error code="PROJECT_NOT_FOUND" severity="error">\n'
        "  <message>Project 'proj_xyz' does not exist.</message>\n"
        "  <recovery>Call projects_list first to get valid IDs, then retry.</recovery>\n"
        "  <available_actions>\n"
        "    <action>projects_list</action>\n"
        "  </available_actions>\n"
        "</tool_error>"
    )
    assert result.structured_content["error"]["code"] is None


async def test_contracts_declare_canonical_and_custom_codes(server: FusionServer) -> None:
    async with connected(server) as client:
        listing = await client.list_tools()
        busy = await client.call_tool("queued_report", {"which": "busy"})
        locked = await client.call_tool("queued_report", {"which": "locked"})
    advertised = {tool.name: tool.meta["fusion/errors"] for tool in listing.tools}["queued_report"]
    assert [(entry["reason"], entry["code"]) for entry in advertised] == [
        ("shed", "SERVER_BUSY"),
        ("locked", "REPORT_LOCKED"),
    ]
    busy_failure, locked_failure = parse_tool_result(busy), parse_tool_result(locked)
    assert (busy_failure.code, busy_failure.code_value, busy_failure.retry_after, busy_failure.retryable) == (
        "SERVER_BUSY",
        -32000,
        5,
        True,
    )
    assert (locked_failure.code, locked_failure.code_value) == ("REPORT_LOCKED", None)
    assert locked_failure.recovery == "Wait for the export to finish, then call queued_report again."


def test_a_code_that_is_none_is_refused_where_it_is_written() -> None:
    with pytest.raises(ValueError, match="'ProjectNotFound' is not an error code"):
        tool_error("ProjectNotFound", "x")
    with pytest.raises(ValueError, match="'nope' is not an error code"):
        McpError("nope")
    with pytest.raises(TypeError, match=r"tool 't': errors\[0\]\.code must be .* got 'Bad Code'"):
        tool("t", errors=[{"reason": "r", "code": "Bad Code", "when": "w", "recovery": "Call t again later please."}])
