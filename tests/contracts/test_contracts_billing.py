"""The framework billing servers' contract suite (``fixtures/frameworks/billing_*.py``), on each installed framework.

``tests/framework_matrix.sh`` runs it once per combination. The same contracts sit on each framework;
two of their reasons no code raises, and coverage says so: ``export_invoices``/``ExportTooLarge`` and
``slow_report``/``invoice_not_found`` (declared through the shared ``BILLING_ERRORS``, never failed).
"""

from __future__ import annotations

import importlib

import pytest
from framework_clients import FIXTURE_OF, FRAMEWORKS, in_memory

from mcp_fusion.testing import run_tool_contract

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not FRAMEWORKS, reason="no MCP framework installed (mcp, fastmcp)"),
    pytest.mark.parametrize("framework", FRAMEWORKS),
]

NOT_FOUND_RECOVERY = "Call list_invoices to find a real invoice ID, then retry."


def billing(framework: str):
    return importlib.import_module(FIXTURE_OF[framework])


def failed(result, code: str, reason: str, recovery: str) -> None:
    assert result.is_error is True
    assert (result.failure.code, result.failure.reason, result.failure.recovery) == (code, reason, recovery)


async def test_get_invoice_invoice_not_found(framework: str) -> None:
    result = await run_tool_contract(billing(framework).app, "get_invoice", {"invoice_id": "inv_404"})
    failed(result, "NOT_FOUND", "invoice_not_found", NOT_FOUND_RECOVERY)


async def test_refund_invoice_invoice_locked(framework: str) -> None:
    result = await run_tool_contract(billing(framework).refund_invoice, {"invoice_id": "inv_2", "amount_cents": 100})
    failed(result, "CONFLICT", "invoice_locked", "Resolve the dispute with search_invoices first, then retry.")


async def test_get_invoice_total_invoice_not_found(framework: str) -> None:
    result = await run_tool_contract(billing(framework).get_invoice_total, {"invoice_id": "inv_404"})
    failed(result, "NOT_FOUND", "invoice_not_found", NOT_FOUND_RECOVERY)
    assert result.failure.message == "No invoice has that ID"  # the entry's `when`


async def test_void_invoice_invoice_not_found(framework: str) -> None:
    result = await run_tool_contract(billing(framework).app, "void_invoice", {"invoice_id": "inv_404"})
    failed(result, "NOT_FOUND", "invoice_not_found", NOT_FOUND_RECOVERY)


async def test_invoice_document_invoice_not_found(framework: str) -> None:
    async with in_memory(framework, billing(framework).app) as caller:
        with pytest.raises(Exception) as raised:
            await caller.client.read_resource("billing://invoices/inv_404")
    assert "No invoice inv_404" in str(getattr(raised.value, "error", raised.value))
