"""Contracts and definition-time validation (DESIGN §3.2, §3.3): types only, clear messages."""

from __future__ import annotations

import pytest

from mcp_fusion import ErrorContract, JsonRpcErrorCode, prompt, resource, tool
from mcp_fusion.contract import CONTRACT_FIELDS, REQUIRED_FIELDS, SEVERITIES, THROWN_BY_VALUES, coerce_contract

ENTRY = {
    "reason": "no_match",
    "code": JsonRpcErrorCode.NOT_FOUND,
    "when": "No requested PMID returned data",
    "recovery": "Call search_articles first to discover valid PMIDs.",
}


def handler() -> str:
    return "ok"


def test_public_tables() -> None:
    assert CONTRACT_FIELDS == ("reason", "code", "when", "recovery", "retryable", "severity", "thrown_by")
    assert REQUIRED_FIELDS == ("reason", "code", "when", "recovery")
    assert SEVERITIES == ("debug", "info", "notice", "warning")
    assert THROWN_BY_VALUES == ("service",)


def test_error_contract_is_frozen() -> None:
    entry = ErrorContract(**ENTRY)
    with pytest.raises(Exception):
        entry.reason = "other"  # type: ignore[misc]


def test_dict_entries_become_error_contracts_and_int_codes_are_accepted() -> None:
    definition = tool("t", errors=[ENTRY, {**ENTRY, "reason": "gone", "code": -32002}])(handler)
    assert all(isinstance(entry, ErrorContract) for entry in definition.errors)
    assert [entry.code for entry in definition.errors] == [JsonRpcErrorCode.NOT_FOUND, JsonRpcErrorCode.CONFLICT]


def test_contract_codes_are_closed_then_open() -> None:
    definition = tool(
        "t",
        errors=[
            {**ENTRY, "reason": "busy", "code": "SERVER_BUSY"},
            {**ENTRY, "reason": "locked", "code": "INVOICE_LOCKED"},
            {**ENTRY, "reason": "named", "code": "NOT_FOUND"},
        ],
    )(handler)
    assert [entry.code for entry in definition.errors] == ["SERVER_BUSY", "INVOICE_LOCKED", JsonRpcErrorCode.NOT_FOUND]


@pytest.mark.parametrize(
    "entry, fragment",
    [
        ({**ENTRY, "code": "not_found"}, "errors[0].code must be a JsonRpcErrorCode member"),
        ({**ENTRY, "code": "Not Found"}, "or a custom UPPER_SNAKE_CASE string, got 'Not Found'"),
        ({**ENTRY, "code": -1}, "errors[0].code must be a JsonRpcErrorCode member"),
        ({k: v for k, v in ENTRY.items() if k != "when"}, "errors[0].when is required"),
        ({**ENTRY, "recovry": "typo"}, "errors[0].recovry is not a contract field"),
        ({**ENTRY, "retryable": "yes"}, "errors[0].retryable"),
        ({**ENTRY, "severity": "error"}, "errors[0].severity"),
        ({**ENTRY, "thrown_by": "handler"}, "errors[0].thrown_by"),
        ({**ENTRY, "reason": 3}, "errors[0].reason"),
    ],
)
def test_definition_time_errors_name_the_tool_and_the_field(entry: dict, fragment: str) -> None:
    with pytest.raises(TypeError) as caught:
        tool("fetch_articles", errors=[entry])
    message = str(caught.value)
    assert message.startswith("tool 'fetch_articles': ")
    assert fragment in message


def test_errors_must_be_a_list() -> None:
    with pytest.raises(TypeError, match=r"tool 'fetch_articles': errors= must be a list.*got dict"):
        tool("fetch_articles", errors=ENTRY)  # type: ignore[arg-type]


def test_an_entry_must_be_a_contract_or_a_dict() -> None:
    with pytest.raises(TypeError, match=r"tool 'x': errors\[1\] must be an ErrorContract or a dict, got str"):
        tool("x", errors=[ENTRY, "no_match"])  # type: ignore[list-item]


def test_resource_contract_errors_name_the_resource() -> None:
    with pytest.raises(TypeError, match=r"^resource 'billing://invoices/\{invoice_id\}': errors\[0\].code"):
        resource("billing://invoices/{invoice_id}", errors=[{**ENTRY, "code": "ProjectNotFound"}])


def test_style_problems_are_not_runtime_errors() -> None:
    # Non-snake_case reason, a three-word recovery, duplicates: the linter's business, not the runtime's.
    definition = tool(
        "t", errors=[{**ENTRY, "reason": "NoMatch", "recovery": "Try again later"}, {**ENTRY, "reason": "NoMatch"}]
    )(handler)
    assert definition.declared_reasons == ("NoMatch",)
    assert definition.entry("NoMatch") is definition.errors[0]


def test_prompt_takes_no_errors_parameter() -> None:
    with pytest.raises(TypeError, match="errors"):
        prompt("p", errors=[ENTRY])  # type: ignore[call-arg]


def test_coerce_contract_of_none_is_empty() -> None:
    assert coerce_contract("tool 'x'", None) == ()
