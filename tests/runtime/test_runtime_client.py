"""The typed client (issue 11): every envelope the server emits parses back to the same ToolFailure."""

from __future__ import annotations

import pickle

import mcp
import pytest
from runtime_testing import connected, envelope_text

from mcp_fusion import Context, ErrorContract, FusionServer, JsonRpcErrorCode, prompt, resource, tool, tool_error
from mcp_fusion.client import (
    EnvelopeParseError,
    FusionClient,
    ToolFailure,
    parse_envelope,
    parse_structured,
    parse_tool_result,
)

pytestmark = pytest.mark.anyio

GONE = ErrorContract(
    reason="invoice_gone",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="The invoice was archived",
    recovery="Call list_invoices & pick an invoice that is <still> open.",
    retryable=False,
)


@tool("every_envelope", errors=[GONE])
def every_envelope(kind: str, ctx: Context) -> str:
    if kind == "all_sections":
        raise (
            tool_error("RATE_LIMITED", 'Quota "billing" & <ledger> exceeded > 100/min')
            .suggest("Wait, then call every_envelope again; don't loop & don't <retry> at once.")
            .actions("list_invoices", "get_invoice")
            .details({"limit": 100, "window": "1 min", "odd key \"<&>'": "a & b < c"}, nested={"a": [1, 2]})
            .reason("quota_exceeded")
            .retry_after(30)
        )
    if kind == "contract":
        raise ctx.fail("invoice_gone", "Invoice <inv_1> & friends are archived", {"invoice_id": "inv_1"})
    if kind == "critical":
        return tool_error("DATABASE_ERROR", "Ledger corrupted").severity("critical")
    if kind == "warning":
        return (
            tool_error("VALIDATION_ERROR", "kind=warning is deprecated")
            .suggest("Pass kind=modern.")
            .severity("warning")
        )
    if kind == "crash":
        raise KeyError("internal")
    if kind == "undeclared":
        raise ctx.fail("no_such_reason")
    return "ok"


def both_formats() -> list[FusionServer]:
    return [FusionServer("s", tools=[every_envelope], envelope=fmt) for fmt in ("xml", "json")]


KINDS = ["all_sections", "contract", "critical", "warning", "crash", "undeclared"]


@pytest.mark.parametrize("envelope", ["xml", "json"])
@pytest.mark.parametrize("kind", KINDS)
async def test_text_envelope_and_mirror_parse_to_the_same_failure(envelope: str, kind: str) -> None:
    server = FusionServer("s", tools=[every_envelope], envelope=envelope)
    async with connected(server) as client:
        result = await client.call_tool("every_envelope", {"kind": kind})
    from_text = parse_envelope(envelope_text(result))
    from_mirror = parse_structured(result.structured_content)
    assert from_text == from_mirror
    assert from_text.source == envelope and from_mirror.source == "structured"
    assert parse_tool_result(result) == from_mirror
    assert from_text.is_error is result.is_error


async def test_validation_envelope_round_trips_in_both_formats() -> None:
    for server in both_formats():
        async with connected(server) as client:
            result = await client.call_tool("every_envelope", {"kind": 3, "extra": "<&>"})
        from_text = parse_envelope(envelope_text(result))
        assert from_text == parse_structured(result.structured_content)
        assert from_text.is_validation_error and from_text.action == "every_envelope"
        assert from_text.fields == (
            ("kind", "Expected a string. You sent: 3."),
            ("extra", "Unknown field; accepted fields are: kind. You sent: '<&>'."),
        )


async def test_all_sections_parse_to_exactly_what_was_built() -> None:
    async with connected(FusionServer("s", tools=[every_envelope])) as client:
        result = await client.call_tool("every_envelope", {"kind": "all_sections"})
    expected = ToolFailure(
        code="RATE_LIMITED",
        code_value=-32003,
        message='Quota "billing" & <ledger> exceeded > 100/min',
        reason="quota_exceeded",
        recovery="Wait, then call every_envelope again; don't loop & don't <retry> at once.",
        available_actions=("list_invoices", "get_invoice"),
        details={"limit": "100", "window": "1 min", "odd key \"<&>'": "a & b < c", "nested": '{"a": [1, 2]}'},
        retry_after=30,
    )
    assert parse_envelope(envelope_text(result)) == expected
    assert parse_structured(result.structured_content) == expected


async def test_contract_failure_fields() -> None:
    async with connected(FusionServer("s", tools=[every_envelope])) as client:
        result = await client.call_tool("every_envelope", {"kind": "contract"})
    failure = parse_tool_result(result)
    assert (failure.code, failure.code_value, failure.reason) == ("NOT_FOUND", -32001, "invoice_gone")
    assert failure.message == "Invoice <inv_1> & friends are archived"
    assert failure.recovery == GONE.recovery
    assert failure.retryable is False
    assert failure.details == {"retryable": "false", "invoice_id": "inv_1"}


def test_flat_available_actions() -> None:
    failure = parse_envelope(
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "  <message>No invoice</message>\n"
        "  <available_actions>billing_list_invoices, billing_search , get_invoice</available_actions>\n"
        "</tool_error>"
    )
    assert failure.available_actions == ("billing_list_invoices", "billing_search", "get_invoice")
    assert failure.details == {} and failure.reason is None and failure.retry_after is None


@pytest.mark.parametrize(
    "text, problem",
    [
        ('<tool_error code="NOT_FOUND" severity="error">\n  <message>No inv', "malformed or truncated envelope XML"),
        ("<tool_error><message>x</message>", "malformed or truncated envelope XML"),
        ("<html><body>502 Bad Gateway</body></html>", "unknown envelope <html>"),
        ('<tool_error severity="error"><message>x</message></tool_error>', "no code attribute"),
        ('<tool_error code="X"></tool_error>', "has no <message>"),
        (
            '<tool_error code="X"><message>m</message><retry_after>soon</retry_after></tool_error>',
            "not a number of seconds",
        ),
        ('<!DOCTYPE x [<!ENTITY a "aaaa">]><tool_error code="X"><message>&a;</message></tool_error>', "DOCTYPE"),
        ('{"error": true, "code": "NOT_FOUND", "message": "trunc', "malformed or truncated JSON envelope"),
        ('{"error": true}', 'needs "code" and "message"'),
        ("Something went wrong", "not an envelope"),
        ("", "not an envelope"),
    ],
)
def test_garbage_is_a_clear_parse_failure(text: str, problem: str) -> None:
    with pytest.raises(EnvelopeParseError, match=problem):
        parse_envelope(text)


def test_an_error_result_without_an_envelope_is_still_a_failure() -> None:
    result = {"content": [{"type": "text", "text": "<tool_error code="}], "isError": True}
    failure = parse_tool_result(result)
    assert failure.code == "UNKNOWN_ERROR" and failure.message == "<tool_error code="
    assert "malformed" in failure.parse_error
    plain = parse_tool_result({"content": [{"type": "text", "text": "boom"}], "isError": True})
    assert plain.message == "boom" and plain.parse_error == "the result carries no envelope"
    assert parse_tool_result({"content": [{"type": "text", "text": "fine"}], "isError": False}) is None


def test_failures_pickle() -> None:
    failure = parse_envelope('<tool_error code="CONFLICT" severity="error"><message>x</message></tool_error>')
    assert pickle.loads(pickle.dumps(failure)) == failure


async def test_fusion_client_raises_tool_failures() -> None:
    async with FusionClient(FusionServer("s", tools=[every_envelope])) as client:
        assert (await client.call_tool("every_envelope", {"kind": "fine"})).content[0].text == "ok"
        with pytest.raises(ToolFailure) as caught:
            await client.call_tool("every_envelope", {"kind": "contract"})
        quiet = await client.call_tool("every_envelope", {"kind": "contract"}, raise_on_error=False)
        warning = await client.call_tool("every_envelope", {"kind": "warning"})
        tools = await client.list_tools()  # forwarded to the SDK client
    assert caught.value.reason == "invoice_gone"
    assert str(caught.value).startswith("NOT_FOUND: Invoice <inv_1> & friends are archived (reason: invoice_gone)")
    assert quiet.is_error is True
    assert warning.is_error is False and parse_tool_result(warning).severity == "warning"
    assert [t.name for t in tools.tools] == ["every_envelope"]


async def test_fusion_client_reads_resource_and_prompt_failures() -> None:
    @resource("billing://invoices/{invoice_id}", errors=[GONE])
    def invoice(invoice_id: str, ctx: Context) -> str:
        raise ctx.fail("invoice_gone")

    @prompt("remind")
    def remind(customer: str) -> str:
        return customer

    async with FusionClient(FusionServer("s", resources=[invoice], prompts=[remind])) as client:
        with pytest.raises(ToolFailure) as read_failure:
            await client.read_resource("billing://invoices/inv_1")
        with pytest.raises(ToolFailure) as prompt_failure:
            await client.get_prompt("remind", {})
        with pytest.raises(mcp.MCPError):
            await client.read_resource("billing://invoices/inv_1", raise_on_error=False)
    assert read_failure.value.reason == "invoice_gone" and read_failure.value.recovery == GONE.recovery
    assert prompt_failure.value.is_validation_error and prompt_failure.value.fields[0][0] == "customer"


async def test_json_envelope_on_the_wire() -> None:
    async with connected(FusionServer("s", tools=[every_envelope], envelope="json")) as client:
        result = await client.call_tool("every_envelope", {"kind": "contract"})
    assert result.is_error is True
    assert envelope_text(result) == (
        '{"error": true, "type": "NotFoundError", "code": "NOT_FOUND", '
        '"message": "Invoice <inv_1> & friends are archived", "reason": "invoice_gone", '
        '"recovery": "Call list_invoices & pick an invoice that is <still> open.", '
        '"details": {"retryable": false, "invoice_id": "inv_1"}}'
    )
    # The structured mirror does not change with the text format.
    async with connected(FusionServer("s", tools=[every_envelope])) as client:
        xml_result = await client.call_tool("every_envelope", {"kind": "contract"})
    assert result.structured_content == xml_result.structured_content
