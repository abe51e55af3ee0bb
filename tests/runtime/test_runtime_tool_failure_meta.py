"""The draft ToolFailure metadata (MCP PRs #3312/#3313), opt-in (issue 33, DESIGN §13.4).

``_meta["io.modelcontextprotocol/toolFailure"]`` carries class, code, retryable, retryNotBefore, a
correlationId and agentGuidance, mapped from the contract entry; off unless the server opts in. Read
back by the official client from FusionServer and from ``@contract`` on each installed framework.
"""

from __future__ import annotations

import datetime
import logging

import pytest
from framework_clients import FRAMEWORKS, MCP_MAJOR, in_memory

from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail, rate_limited
from mcp_fusion.wire import TOOL_FAILURE_META_KEY

pytestmark = pytest.mark.anyio

MISSING = ErrorContract(
    reason="invoice_not_found",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No invoice has that ID",
    recovery="Call list_invoices to find a real invoice ID, then retry.",
    retryable=False,
)


@contract(errors=[MISSING])
def get_invoice(invoice_id: str) -> str:
    """Fetch one invoice."""
    raise fail("invoice_not_found", f"No invoice {invoice_id}")


@contract(errors=[MISSING])
def busy_report() -> str:
    """Rate limited."""
    raise rate_limited("Slow down", {"retry_after": 30})


def app_for(framework: str, enabled: bool):
    if framework == "mcpserver":
        from mcp.server.mcpserver import MCPServer

        from mcp_fusion.integrations import mcpserver

        app = mcpserver.install(MCPServer("meta"), tool_failure_meta=enabled)
    elif framework == "fastmcp":
        from fastmcp import FastMCP

        from mcp_fusion.integrations import fastmcp

        app = fastmcp.install(FastMCP("meta"), tool_failure_meta=enabled)
    else:
        from mcp.server.fastmcp import FastMCP

        from mcp_fusion.integrations import set_tool_failure_meta

        set_tool_failure_meta(enabled)  # FastMCP 1.x has no hook: the process-wide setting
        app = FastMCP("meta")
    app.tool()(get_invoice)
    app.tool()(busy_report)
    return app


async def _meta_of(framework: str, enabled: bool, name: str, arguments: dict) -> dict | None:
    from mcp_fusion.integrations import set_tool_failure_meta

    try:
        async with in_memory(framework, app_for(framework, enabled)) as caller:
            result = await caller.call_raw(name, arguments)
    finally:
        set_tool_failure_meta(False)
    meta = result.get("_meta") or {}
    return meta.get(TOOL_FAILURE_META_KEY)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_the_draft_metadata_maps_the_contract_entry(framework: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_fusion.tool_failure")
    meta = await _meta_of(framework, True, "get_invoice", {"invoice_id": "inv_9"})
    assert meta is not None, framework
    correlation = meta.pop("correlationId")
    assert len(correlation) == 32 and correlation in caplog.text  # the operator finds the failure by it
    assert meta == {
        "class": "capability",
        "code": "NOT_FOUND",
        "retryable": False,
        "agentGuidance": "Call list_invoices to find a real invoice ID, then retry.",
    }


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_a_retry_after_becomes_retry_not_before(framework: str) -> None:
    before = datetime.datetime.now(datetime.timezone.utc)
    meta = await _meta_of(framework, True, "busy_report", {})
    assert (meta["class"], meta["code"], meta["retryable"]) == ("reliability", "RATE_LIMITED", True)
    not_before = datetime.datetime.fromisoformat(meta["retryNotBefore"].replace("Z", "+00:00"))
    assert before + datetime.timedelta(seconds=29) <= not_before <= before + datetime.timedelta(seconds=32)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_off_by_default(framework: str) -> None:
    assert await _meta_of(framework, False, "get_invoice", {"invoice_id": "inv_9"}) is None


@pytest.mark.skipif(MCP_MAJOR != 2, reason="FusionServer serves with mcp 2.x")
async def test_fusion_server_opts_in_with_a_setting() -> None:
    from runtime_testing import connected

    from mcp_fusion import FusionServer, tool

    @tool("lookup", errors=[MISSING])
    def lookup(invoice_id: str) -> str:
        raise fail("invoice_not_found")

    for enabled in (True, False):
        server = FusionServer("meta", tools=[lookup], tool_failure_meta=enabled)
        async with connected(server) as client:
            result = await client.call_tool("lookup", {"invoice_id": "x"})
        meta = (result.meta or {}).get(TOOL_FAILURE_META_KEY)
        if enabled:
            assert (meta["class"], meta["code"], meta["retryable"]) == ("capability", "NOT_FOUND", False)
            assert result.content[0].text.startswith('<tool_error code="NOT_FOUND"')  # the text is unchanged
        else:
            assert meta is None
