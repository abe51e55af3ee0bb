"""``@contract`` on the servers people already have (issue 18, DESIGN §12.1): the exact wire text.

Each framework installed here (``framework_clients.FRAMEWORKS``; ``tests/framework_matrix.sh`` runs this file once per
supported combination) serves ``fixtures/frameworks/billing_<framework>.py``, driven by the framework's
own in-memory client and by a stdio subprocess. Every failure reads exactly as FusionServer sends it.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import anyio
import pytest
from framework_clients import FRAMEWORKS, HOOKED, MCP_MAJOR, REPO_ROOT, fixture_app, in_memory, over_stdio

from mcp_fusion.boundary import UNEXPECTED_RECOVERY

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not FRAMEWORKS, reason="no MCP framework installed (mcp, fastmcp)"),
]

DECLARED = """<tool_error code="NOT_FOUND" severity="error">
  <message>No invoice inv_404</message>
  <recovery>Call list_invoices to find a real invoice ID, then retry.</recovery>
  <details>
    <detail key="reason">invoice_not_found</detail>
  </details>
</tool_error>"""
DECLARED_MIRROR = {
    "code": -32001,
    "code_name": "NOT_FOUND",
    "message": "No invoice inv_404",
    "data": {
        "reason": "invoice_not_found",
        "recovery": {"hint": "Call list_invoices to find a real invoice ID, then retry."},
    },
}
SERVICE = """<tool_error code="CONFLICT" severity="error">
  <message>Invoice inv_2 is locked by an open dispute</message>
  <recovery>Resolve the dispute with search_invoices first, then retry.</recovery>
  <details>
    <detail key="reason">invoice_locked</detail>
  </details>
</tool_error>"""
SERVICE_MIRROR = {
    "code": -32002,
    "code_name": "CONFLICT",
    "message": "Invoice inv_2 is locked by an open dispute",
    "data": {
        "reason": "invoice_locked",
        "recovery": {"hint": "Resolve the dispute with search_invoices first, then retry."},
    },
}
CRASH = f"""<tool_error code="INTERNAL_ERROR" severity="error">
  <message>tool 'export_invoices' failed unexpectedly; the details were logged on the server</message>
  <recovery>{UNEXPECTED_RECOVERY.replace("&", "&amp;")}</recovery>
  <details>
    <detail key="reason">unexpected_error</detail>
    <detail key="retryable">false</detail>
  </details>
</tool_error>"""
WARNING = """<tool_error code="DEPRECATED" severity="warning">
  <message>get_invoice_total is deprecated; call get_invoice and read total_cents</message>
</tool_error>"""
INVALID = """<validation_error action="get_invoice" code="INVALID_PARAMS" reason="invalid_arguments">
  <field name="invoice_id">Missing required field: expected a string. You sent nothing.</field>
  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"""
#: What mcp 1.x FastMCP sends for invalid arguments: it has no hook before validation (README).
MCP1_INVALID_PREFIX = (
    "Error executing tool get_invoice: 1 validation error for get_invoiceArguments\ninvoice_id\n  Field required"
)


def failure(text: str, mirror: dict, *, output_schema: bool) -> dict:
    """A failed ``CallToolResult`` as FusionServer sends it: the mirror in ``_meta`` beside an output schema."""
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    if output_schema:
        result["_meta"] = {"fusion/error": mirror}
    else:
        result["structuredContent"] = {"error": mirror}
    return result


async def check_failures(caller) -> None:
    schemas = {
        tool.name: tool.outputSchema if MCP_MAJOR == 1 else tool.output_schema for tool in await caller.list_tools()
    }
    assert {"list_invoices", "get_invoice", "refund_invoice", "export_invoices", "get_invoice_total"} <= set(schemas)
    assert await caller.call("get_invoice", {"invoice_id": "inv_404"}) == failure(
        DECLARED, DECLARED_MIRROR, output_schema=schemas["get_invoice"] is not None
    )
    assert await caller.call("refund_invoice", {"invoice_id": "inv_2", "amount_cents": 100}) == failure(
        SERVICE, SERVICE_MIRROR, output_schema=schemas["refund_invoice"] is not None
    )
    crashed = await caller.call("export_invoices", {"fmt": "xml"})
    assert crashed["isError"] is True and crashed["content"] == [{"type": "text", "text": CRASH}]
    assert "db1" not in str(crashed) and "unsupported format" not in str(crashed)
    warned = await caller.call("get_invoice_total", {"invoice_id": "inv_1"})
    assert warned["isError"] is False
    assert warned["content"] == [{"type": "text", "text": WARNING}, {"type": "text", "text": "12000"}]
    assert warned["_meta"]["fusion/error"]["code_name"] == "DEPRECATED"
    assert warned["structuredContent"] == {"result": 12000}  # the framework's own conversion of the payload
    masked = await caller.call("void_invoice", {"invoice_id": "inv_1"})  # an undeclared fail() reason
    assert "unexpected_error" in masked["content"][0]["text"] and "already_void" not in str(masked)
    invalid = await caller.call("get_invoice", {})
    if HOOKED[caller.framework]:
        assert invalid["isError"] is True and invalid["content"] == [{"type": "text", "text": INVALID}]
        data = (invalid.get("_meta", {}).get("fusion/error") or invalid["structuredContent"]["error"])["data"]
        assert data["reason"] == "invalid_arguments"
    else:
        assert invalid["isError"] is True and invalid["content"][0]["text"].startswith(MCP1_INVALID_PREFIX)
    assert (await caller.call("get_invoice", {"invoice_id": "inv_1"}))["isError"] is False


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_in_memory_failures_read_as_fusion_server_sends_them(framework: str) -> None:
    async with in_memory(framework, fixture_app(framework)) as caller:
        await check_failures(caller)


@pytest.mark.slow
@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_over_stdio_the_same_bytes(framework: str) -> None:
    async with over_stdio(framework) as caller:
        await check_failures(caller)
        await check_cancellation(caller)


async def check_cancellation(caller) -> None:
    with anyio.move_on_after(0.5) as scope:
        await caller.call("slow_report", {"seconds": 30})
    assert scope.cancelled_caught
    # The server goes on serving; the cancelled call got no result (MCP sends none).
    assert (await caller.call("list_invoices", {}))["isError"] is False


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_cancellation_propagates_to_the_framework(framework: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_fusion")
    async with in_memory(framework, fixture_app(framework)) as caller:
        await check_cancellation(caller)
    # mcp 1.x's in-memory client sends no cancel notification: the handler is cancelled when the
    # session closes. Either way it is cancelled (never swallowed into a result) and logged once.
    (record,) = [r for r in caplog.records if "REQUEST_CANCELLED" in r.getMessage()]
    assert record.levelno == logging.INFO and record.getMessage().startswith("Error in tool:slow_report")


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_the_framework_keeps_schema_and_injects_its_context(framework: str) -> None:
    async with in_memory(framework, fixture_app(framework)) as caller:
        tools = {tool.name: tool for tool in await caller.list_tools()}
        schema = tools["get_invoice"].inputSchema if MCP_MAJOR == 1 else tools["get_invoice"].input_schema
        assert list(schema["properties"]) == ["invoice_id"] and schema["required"] == ["invoice_id"]
        ok = await caller.call("get_invoice", {"invoice_id": "inv_1"})
        assert ok["isError"] is False and "Acme" in ok["content"][0]["text"]


@pytest.mark.skipif(MCP_MAJOR != 1, reason="needs mcp 1.x installed (the matrix's mcp<2 environments)")
def test_with_mcp1_importing_needs_no_extra_and_fusion_server_names_it() -> None:
    code = (
        "import mcp_fusion; from mcp_fusion import contract, fail, tool_error, ErrorContract\n"
        "from mcp_fusion.client import parse_tool_result\n"
        "try:\n    from mcp_fusion import FusionServer\nexcept ImportError as e:\n    print(e)\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert completed.returncode == 0, completed.stderr
    (line,) = completed.stdout.strip().splitlines()
    assert line.endswith('pip install "fusion-lint[server]"') and "mcp 1." in line and "@contract" in line


RESOURCE_MESSAGE = (
    "No invoice inv_404 (NOT_FOUND, reason invoice_not_found). "
    "Recovery: Call list_invoices to find a real invoice ID, then retry."
)


#: Frameworks that pass a resource's JSON-RPC error through as raised (code, message, envelope in data);
#: mcp 1.x FastMCP and fastmcp 2.x keep only the message, in their own words (code 0).
def passes_protocol_errors(framework: str) -> bool:
    from framework_clients import FASTMCP_VERSION

    if framework == "mcp1":
        return False
    return framework == "mcpserver" or not (FASTMCP_VERSION or "").startswith("2.")


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_a_contracted_resource_fails_as_a_json_rpc_error(framework: str) -> None:
    async with in_memory(framework, fixture_app(framework)) as caller:
        read = await caller.client.read_resource("billing://invoices/inv_1")
        assert "Acme" in str(read)
        with pytest.raises(Exception) as raised:
            await caller.client.read_resource("billing://invoices/inv_404")
    error = getattr(raised.value, "error", None)
    message = error.message if error is not None else str(raised.value)
    assert "No invoice inv_404" in message
    if passes_protocol_errors(framework):
        # As FusionServer sends it: the message alone also carries code, reason and recovery (DESIGN §13.4).
        assert (error.code, message) == (-32602, RESOURCE_MESSAGE)
        assert error.data["reason"] == "invoice_not_found" and error.data["envelope"].startswith(
            '<tool_error code="NOT_FOUND" severity="error">'
        )
