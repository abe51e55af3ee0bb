"""A FusionServer driven through the SDK's in-memory client: the exact wire shapes (DESIGN §3.5–§3.7)."""

from __future__ import annotations

import logging
import threading

import anyio
import mcp
import pytest
from pydantic import BaseModel
from runtime_testing import connected, envelope_text

from mcp_fusion import (
    Context,
    ErrorContract,
    FusionServer,
    JsonRpcErrorCode,
    McpError,
    not_found,
    prompt,
    rate_limited,
    resource,
    service_unavailable,
    tool,
    tool_error,
)

pytestmark = pytest.mark.anyio

INVOICE_MISSING = ErrorContract(
    reason="invoice_missing",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No invoice has that ID",
    recovery="Call list_invoices to find a real invoice ID, then retry.",
    retryable=False,
)
LEDGER_DOWN = ErrorContract(
    reason="ledger_down",
    code=JsonRpcErrorCode.SERVICE_UNAVAILABLE,
    when="The ledger service did not answer",
    recovery="Wait a minute, then call get_invoice again.",
    retryable=True,
    severity="warning",
    thrown_by="service",
)
TOO_MANY = ErrorContract(
    reason="too_many_requests",
    code=JsonRpcErrorCode.RATE_LIMITED,
    when="The caller exceeded the invoice quota",
    recovery="Wait for the time in retry_after, then call get_invoice again.",
    retryable=True,
)


class Invoice(BaseModel):
    id: str
    amount: float


def ledger_lookup(invoice_id: str) -> Invoice:
    """A service layer: it knows nothing of ctx, it raises a factory with a declared reason."""
    if invoice_id == "inv_ledger":
        raise service_unavailable("Ledger timed out", {"reason": "ledger_down"})
    if invoice_id == "inv_gone":
        raise not_found(
            f"Invoice {invoice_id} was archived", data={"reason": "invoice_missing", "auth": "Bearer s3cr3t"}
        )
    if invoice_id == "inv_throttled":
        raise rate_limited("Quota exceeded", {"reason": "too_many_requests", "retry_after": 30})
    if invoice_id == "inv_own_recovery":
        raise not_found("Archived", {"reason": "invoice_missing", "recovery": {"hint": "Ask the user for another ID."}})
    return Invoice(id=invoice_id, amount=12.5)


@tool("get_invoice", description="Fetch one invoice", errors=[INVOICE_MISSING, LEDGER_DOWN, TOO_MANY])
async def get_invoice(invoice_id: str, ctx: Context) -> Invoice:
    if invoice_id == "inv_404":
        raise ctx.fail("invoice_missing", data={"requested_id": invoice_id, "reason": "caller_override"})
    if invoice_id == "inv_crash":
        raise RuntimeError("psycopg: password authentication failed for user 'billing'")
    return ledger_lookup(invoice_id)


@tool(
    "find_customer",
    errors=[
        {
            "reason": "no_customer",
            "code": JsonRpcErrorCode.NOT_FOUND,
            "when": "No customer matched",
            "recovery": "Call list_customers to browse customers.",
        }
    ],
)
def find_customer(query: str, ctx: Context) -> str:
    """A sync handler: it runs in a worker thread."""
    if query == "<script> & co":
        raise ctx.fail("no_customer", f"No customer named {query}")
    if query == "legacy":
        return (
            tool_error("VALIDATION_ERROR", "The name filter is deprecated")
            .suggest("Pass customer_id instead of a name next time.")
            .severity("warning")
        )
    if query == "thread":
        return threading.current_thread().name
    raise ctx.fail("no_customer")


@tool("list_invoices")
def list_invoices(limit: int = 10) -> list[str]:
    if limit > 100:
        raise tool_error("INVALID_PARAMS", "limit is too large").suggest("Use a limit of at most 100.").details(max=100)
    return [f"inv_{i}" for i in range(limit)]


@resource("billing://invoices/{invoice_id}", errors=[INVOICE_MISSING])
def invoice_document(invoice_id: str, ctx: Context) -> dict:
    if invoice_id == "missing":
        raise ctx.fail("invoice_missing")
    return {"id": invoice_id}


@prompt("dunning_letter", description="Draft a payment reminder")
def dunning_letter(customer: str) -> str:
    return f"Write a polite payment reminder to {customer}."


@pytest.fixture
def server() -> FusionServer:
    return FusionServer(
        "billing",
        tools=[get_invoice, find_customer, list_invoices],
        resources=[invoice_document],
        prompts=[dunning_letter],
    )


async def test_contract_failure_envelope_and_mirror(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_404"})
    assert result.is_error is True
    assert envelope_text(result) == (
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "  <message>No invoice has that ID</message>\n"
        "  <recovery>Call list_invoices to find a real invoice ID, then retry.</recovery>\n"
        "  <details>\n"
        '    <detail key="reason">invoice_missing</detail>\n'
        '    <detail key="retryable">false</detail>\n'
        '    <detail key="requested_id">inv_404</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )
    # get_invoice has an output schema, so the mirror travels in _meta.
    assert result.structured_content is None
    assert result.meta["fusion/error"] == {
        "code": -32001,
        "code_name": "NOT_FOUND",
        "message": "No invoice has that ID",
        "data": {
            "reason": "invoice_missing",
            "retryable": False,
            "requested_id": "inv_404",
            "recovery": {"hint": "Call list_invoices to find a real invoice ID, then retry."},
        },
    }


async def test_caller_data_cannot_override_the_reason_on_the_wire(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_404"})
    assert result.meta["fusion/error"]["data"]["reason"] == "invoice_missing"
    assert "caller_override" not in envelope_text(result)


async def test_structured_mirror_when_the_tool_has_no_output_schema(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("find_customer", {"query": "nobody"})
    assert result.is_error is True
    assert result.structured_content == {
        "error": {
            "code": -32001,
            "code_name": "NOT_FOUND",
            "message": "No customer matched",
            "data": {"reason": "no_customer", "recovery": {"hint": "Call list_customers to browse customers."}},
        }
    }


async def test_service_raised_reason_gets_the_contract_recovery(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_ledger"})
    assert result.is_error is True
    assert envelope_text(result) == (
        '<tool_error code="SERVICE_UNAVAILABLE" severity="error">\n'
        "  <message>Ledger timed out</message>\n"
        "  <recovery>Wait a minute, then call get_invoice again.</recovery>\n"
        "  <details>\n"
        '    <detail key="reason">ledger_down</detail>\n'
        '    <detail key="retryable">true</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )
    data = result.meta["fusion/error"]["data"]
    assert data["recovery"] == {"hint": "Wait a minute, then call get_invoice again."}
    assert data["retryable"] is True


async def test_a_throw_site_recovery_wins(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_own_recovery"})
    assert result.meta["fusion/error"]["data"]["recovery"] == {"hint": "Ask the user for another ID."}
    assert "<recovery>Ask the user for another ID.</recovery>" in envelope_text(result)


async def test_auth_never_reaches_the_wire(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_gone"})
    assert "auth" not in result.meta["fusion/error"]["data"]
    assert "s3cr3t" not in result.model_dump_json()


async def test_rate_limited_retry_after(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_throttled"})
    assert envelope_text(result).endswith("  <retry_after>30 seconds</retry_after>\n</tool_error>")
    assert result.meta["fusion/error"]["data"]["retry_after"] == 30


async def test_unexpected_exception_is_masked_and_logged_with_its_traceback(
    server: FusionServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_fusion")
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_crash"})
    assert result.is_error is True
    assert "password" not in result.model_dump_json() and "psycopg" not in result.model_dump_json()
    assert envelope_text(result) == (
        '<tool_error code="INTERNAL_ERROR" severity="error">\n'
        "  <message>tool 'get_invoice' failed unexpectedly; the details were logged on the server</message>\n"
        "  <recovery>Do not blindly retry: this failure was unexpected and the same call is likely to fail the "
        "same way. Try a different approach, or report the problem to the server's maintainers.</recovery>\n"
        "  <details>\n"
        '    <detail key="reason">unexpected_error</detail>\n'
        '    <detail key="retryable">false</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )
    records = [record for record in caplog.records if record.getMessage().startswith("Error in tool:get_invoice")]
    assert len(records) == 1
    assert records[0].levelno == logging.ERROR
    assert records[0].exc_info is not None and "password authentication failed" in str(records[0].exc_info[1])


async def test_one_failure_record_at_the_entry_severity_with_bounded_arguments(
    server: FusionServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_fusion")
    async with connected(server) as client:
        await client.call_tool("get_invoice", {"invoice_id": "inv_ledger"})
        await client.call_tool("get_invoice", {"invoice_id": "inv_404"})
        await client.call_tool("get_invoice", {"invoice_id": "x" * 5000})
    failures = [record for record in caplog.records if record.getMessage().startswith("Error in tool:get_invoice")]
    assert [record.levelno for record in failures] == [logging.WARNING, logging.ERROR]  # ledger_down is "warning"
    assert failures[0].fusion_reason == "ledger_down"
    caplog.clear()
    async with connected(server) as client:
        await client.call_tool("get_invoice", {"invoice_id": "inv_404", "junk": "j" * 5000})
    (record,) = [r for r in caplog.records if r.getMessage().startswith("Error in tool:get_invoice")]
    assert "… [truncated from 5000 characters]" in record.getMessage()
    assert len(record.getMessage()) < 1500


async def test_escaping_survives_the_wire(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("find_customer", {"query": "<script> & co"})
    assert "  <message>No customer named &lt;script> &amp; co</message>\n" in envelope_text(result)
    assert result.structured_content["error"]["message"] == "No customer named <script> & co"


async def test_warning_is_the_success_path(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("find_customer", {"query": "legacy"})
    assert result.is_error is False
    assert envelope_text(result) == (
        '<tool_error code="VALIDATION_ERROR" severity="warning">\n'
        "  <message>The name filter is deprecated</message>\n"
        "  <recovery>Pass customer_id instead of a name next time.</recovery>\n"
        "</tool_error>"
    )
    assert result.structured_content["error"]["data"]["severity"] == "warning"


async def test_raised_builder_becomes_the_envelope(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("list_invoices", {"limit": 500})
    assert result.is_error is True
    assert envelope_text(result) == (
        '<tool_error code="INVALID_PARAMS" severity="error">\n'
        "  <message>limit is too large</message>\n"
        "  <recovery>Use a limit of at most 100.</recovery>\n"
        "  <details>\n"
        '    <detail key="max">100</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )


async def test_validation_envelope_on_the_wire(server: FusionServer) -> None:
    async with connected(server) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": 42, "verbose": True})
    assert result.is_error is True
    assert envelope_text(result) == (
        '<validation_error action="get_invoice" code="INVALID_PARAMS" reason="invalid_arguments">\n'
        '  <field name="invoice_id">Expected a string. You sent: 42.</field>\n'
        '  <field name="verbose">Unknown field; accepted fields are: invoice_id. You sent: true.</field>\n'
        "  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n"
        "</validation_error>"
    )
    mirror = result.meta["fusion/error"]
    assert mirror["code"] == int(JsonRpcErrorCode.INVALID_PARAMS)
    assert mirror["data"]["reason"] == "invalid_arguments"


async def test_success_results(server: FusionServer) -> None:
    async with connected(server) as client:
        structured = await client.call_tool("get_invoice", {"invoice_id": "inv_1"})
        listed = await client.call_tool("list_invoices", {"limit": 2})
        threaded = await client.call_tool("find_customer", {"query": "thread"})
    assert structured.is_error is False
    assert structured.structured_content == {"id": "inv_1", "amount": 12.5}
    assert listed.content[0].text == '[\n  "inv_0",\n  "inv_1"\n]'
    assert threaded.content[0].text != threading.main_thread().name  # sync handlers run off the event loop


async def test_tools_list_schemas_and_declared_reasons(server: FusionServer) -> None:
    async with connected(server) as client:
        listing = await client.list_tools()
    tools = {tool.name: tool for tool in listing.tools}
    assert set(tools) == {"get_invoice", "find_customer", "list_invoices"}
    get = tools["get_invoice"]
    assert get.description == "Fetch one invoice"
    assert get.input_schema["properties"] == {"invoice_id": {"title": "Invoice Id", "type": "string"}}
    assert "ctx" not in get.input_schema["properties"]
    assert get.output_schema["properties"]["amount"] == {"title": "Amount", "type": "number"}
    assert get.meta["fusion/errors"] == [
        {"reason": "invoice_missing", "code": "NOT_FOUND", "retryable": False},
        {"reason": "ledger_down", "code": "SERVICE_UNAVAILABLE", "retryable": True},
        {"reason": "too_many_requests", "code": "RATE_LIMITED", "retryable": True},
    ]
    assert tools["find_customer"].description == "A sync handler: it runs in a worker thread."
    assert tools["list_invoices"].meta["fusion/errors"] == []


async def test_unknown_tool_is_the_spec_protocol_error_and_suggests_the_close_names(server: FusionServer) -> None:
    async with connected(server) as client:
        with pytest.raises(mcp.MCPError) as caught:
            await client.call_tool("get_invoices", {})
    error = caught.value
    assert (error.code, error.message) == (-32602, "Unknown tool: get_invoices")
    assert "<action>get_invoice</action>" in error.data["envelope"]
    assert error.data["reason"] == "unknown_tool" and error.data["data"]["tool"] == "get_invoices"


async def test_cancellation_is_logged_at_info_and_never_swallowed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_fusion")
    started, outcome = anyio.Event(), []

    @tool("slow_report")
    async def slow_report(ctx: Context) -> str:
        started.set()
        try:
            await anyio.sleep(30)
        except BaseException as exc:
            outcome.append(exc)
            raise
        return "finished"

    async with connected(FusionServer("s", tools=[slow_report])) as client:
        with anyio.move_on_after(5) as guard:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "slow_report", {})
                await started.wait()
                group.cancel_scope.cancel()
            with anyio.fail_after(5):
                while not outcome:
                    await anyio.sleep(0.01)
        assert not guard.cancelled_caught
    assert isinstance(outcome[0], anyio.get_cancelled_exc_class())
    records = [r for r in caplog.records if r.getMessage().startswith("Error in tool:slow_report")]
    assert len(records) == 1
    assert records[0].levelno == logging.INFO and records[0].fusion_code == "REQUEST_CANCELLED"
    # In memory the client cancels the very task that runs the handler: no cancel notification.
    assert "Request cancelled without a cancel notification" in records[0].getMessage()


async def test_resources_and_their_failures(server: FusionServer) -> None:
    async with connected(server) as client:
        templates = await client.list_resource_templates()
        read = await client.read_resource("billing://invoices/inv_7")
        with pytest.raises(mcp.MCPError) as caught:
            await client.read_resource("billing://invoices/missing")
        with pytest.raises(mcp.MCPError) as unknown:
            await client.read_resource("billing://nothing/here")
    (template,) = templates.resource_templates
    assert template.uri_template == "billing://invoices/{invoice_id}"
    assert template.meta["fusion/errors"] == [{"reason": "invoice_missing", "code": "NOT_FOUND", "retryable": False}]
    assert read.contents[0].text == '{\n  "id": "inv_7"\n}' and read.contents[0].mime_type == "application/json"
    error = caught.value
    # A missing resource is the spec's -32602: one line of message that alone carries code, reason and
    # recovery (clients that drop data still show it), the envelope in data.
    assert (error.code, error.message) == (
        -32602,
        "No invoice has that ID (NOT_FOUND, reason invoice_missing). "
        "Recovery: Call list_invoices to find a real invoice ID, then retry.",
    )
    assert error.data["envelope"] == (
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "  <message>No invoice has that ID</message>\n"
        "  <recovery>Call list_invoices to find a real invoice ID, then retry.</recovery>\n"
        "  <details>\n"
        '    <detail key="reason">invoice_missing</detail>\n'
        '    <detail key="retryable">false</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )
    assert (error.data["code"], error.data["code_name"]) == (-32001, "NOT_FOUND")
    assert error.data["reason"] == "invoice_missing" and error.data["data"]["reason"] == "invoice_missing"
    assert error.data["recovery"] == "Call list_invoices to find a real invoice ID, then retry."
    assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown resource: billing://nothing/here")
    assert unknown.value.data["reason"] == "unknown_resource"


async def test_prompts(server: FusionServer) -> None:
    async with connected(server) as client:
        listing = await client.list_prompts()
        rendered = await client.get_prompt("dunning_letter", {"customer": "ACME"})
        with pytest.raises(mcp.MCPError) as missing_argument:
            await client.get_prompt("dunning_letter", {})
    (listed,) = listing.prompts
    assert listed.name == "dunning_letter" and listed.description == "Draft a payment reminder"
    assert [(a.name, a.required) for a in listed.arguments] == [("customer", True)]
    assert rendered.messages[0].role == "user"
    assert rendered.messages[0].content.text == "Write a polite payment reminder to ACME."
    assert missing_argument.value.code == -32602
    assert missing_argument.value.message == (
        "Invalid arguments for dunning_letter: customer: Missing required field: expected a string. You sent "
        "nothing. (INVALID_PARAMS, reason invalid_arguments). Recovery: Fix the arguments above and get the "
        "prompt again. Do not explain the error."
    )
    assert missing_argument.value.data["envelope"].startswith(
        '<validation_error action="dunning_letter" code="INVALID_PARAMS" reason="invalid_arguments">'
    )
    assert missing_argument.value.data["recovery"] == (
        "Fix the arguments above and get the prompt again. Do not explain the error."
    )


async def test_legacy_handshake_mode_serves_the_same_envelope(server: FusionServer) -> None:
    async with connected(server, mode="legacy") as client:
        result = await client.call_tool("find_customer", {"query": "nobody"})
    assert result.is_error is True
    assert result.structured_content["error"]["data"]["reason"] == "no_customer"


def test_server_construction_errors() -> None:
    with pytest.raises(ValueError, match="two tools are named 'get_invoice'"):
        FusionServer("s", tools=[get_invoice, get_invoice])
    with pytest.raises(TypeError, match=r"tools= takes objects made by @tool"):
        FusionServer("s", tools=[lambda: None])
    with pytest.raises(ValueError, match="envelope must be one of"):
        FusionServer("s", envelope="yaml")  # type: ignore[arg-type]


def test_mcp_error_is_not_the_sdk_protocol_error() -> None:
    assert not issubclass(McpError, mcp.MCPError)


async def test_an_unserialisable_result_is_masked(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_fusion")

    @tool("leaky")
    def leaky() -> object:
        return object()  # nothing JSON can carry

    @prompt("broken_prompt")
    def broken_prompt() -> object:
        return 42

    async with connected(FusionServer("s", tools=[leaky], prompts=[broken_prompt])) as client:
        result = await client.call_tool("leaky", {})
        with pytest.raises(mcp.MCPError) as prompt_failure:
            await client.get_prompt("broken_prompt", {})
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == int(JsonRpcErrorCode.SERIALIZATION_ERROR)
    assert result.structured_content["error"]["data"]["reason"] == "unserialisable_result"
    assert "object at 0x" not in result.model_dump_json()
    assert prompt_failure.value.code == -32603
    assert prompt_failure.value.data["reason"] == "malformed_result"
    assert any(
        r.getMessage().startswith(
            "Error in tool:leaky [SERIALIZATION_ERROR reason=unserialisable_result] "
            "the result holds an object of type 'object'"
        )
        for r in caplog.records
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_context_reaches_the_sdk_request_for_logging_and_progress(mode: str) -> None:
    @tool("long_export")
    async def long_export(ctx: Context) -> str:
        await ctx.info("halfway", step=1)
        await ctx.report_progress(1, 2, "half done")
        return f"request {ctx.request_id} cancel_requested={ctx.cancel_requested}"

    logs, progress = [], []

    async def on_log(params: object) -> None:
        logs.append(params)

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    server = FusionServer("s", tools=[long_export])
    async with connected(server, mode=mode, logging_callback=on_log, log_level="debug") as client:
        result = await client.call_tool("long_export", {}, progress_callback=on_progress)
    assert result.content[0].text.endswith("cancel_requested=False")
    assert "request None" not in result.content[0].text
    assert [(entry.level, entry.logger, entry.data) for entry in logs] == [
        ("info", "mcp_fusion", {"message": "halfway", "step": 1})
    ]
    assert progress == [(1, 2, "half done")]
