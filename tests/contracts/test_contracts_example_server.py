"""The bundled example server's contract suite: every declared reason made to happen, read off the wire.

``fixtures/example_server`` carries deliberate mistakes for the linter's demo, and contract coverage
finds three of them at run time too:

* ``pay_invoice``/``card_declined`` (FL206): the payment service raises it as ``CONFLICT``, the
  contract declares ``FORBIDDEN`` — the test reads what the model really gets, and coverage flags it.
* ``void_invoice``/``already_void`` (FL204): ``ctx.fail(...)`` is never raised, so voiding a void
  invoice succeeds — no test can make the declared failure happen.
* ``void_invoice``/``invoice_locked`` (FL202): nothing raises it.

Every other declared reason is exercised with its declared code and its recovery on the wire.
"""

from __future__ import annotations

from datetime import date

import mcp
import pytest

from fixtures.example_server import services, tools
from fixtures.example_server.models import Invoice, InvoiceLine
from fixtures.example_server.server import build_server
from mcp_fusion.testing import run_tool_contract

pytestmark = pytest.mark.anyio

INVOICE_RECOVERY = "Call list_invoices to find the right invoice, then retry with its ID."
LEDGER_RECOVERY = "Wait a minute, then call the same tool again with the same arguments."
CUSTOMER_RECOVERY = "Call list_invoices without filters to see which customers exist."
A_LINE = [{"description": "Audit", "quantity": 1, "unit_price_cents": 10_000}]


def failed(result, code: str, reason: str, recovery: str) -> None:
    """The result is the declared failure, as the model reads it: code, reason, recovery."""
    assert result.is_error is True
    assert (result.failure.code, result.failure.reason, result.failure.recovery) == (code, reason, recovery)
    assert result.mirror["data"]["recovery"] == {"hint": recovery}


@pytest.fixture
def offline_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services, "LEDGER_ONLINE", False)  # the service's own switch for an outage


@pytest.fixture
def invoice(monkeypatch: pytest.MonkeyPatch):
    """Add an invoice to the ledger for one test: ``invoice(status=..., issued_on=...)``."""

    def add(**fields) -> str:
        made = Invoice(
            **{
                "id": "inv_test",
                "customer_id": "cus_acme",
                "status": "open",
                "currency": "EUR",
                "issued_on": date(2026, 3, 1),
                "lines": [InvoiceLine(**A_LINE[0])],
                **fields,
            }
        )
        monkeypatch.setitem(services._INVOICES, made.id, made)
        return made.id

    return add


# -- list_invoices -------------------------------------------------------------------------------


async def test_list_invoices_customer_not_found() -> None:
    result = await run_tool_contract(tools.list_invoices, {"customer_id": "cus_nobody"})
    failed(result, "NOT_FOUND", "customer_not_found", CUSTOMER_RECOVERY)


# -- get_invoice ---------------------------------------------------------------------------------


async def test_get_invoice_invoice_not_found() -> None:
    result = await run_tool_contract(build_server(), "get_invoice", {"invoice_id": "inv_1999_0001"})
    failed(result, "NOT_FOUND", "invoice_not_found", INVOICE_RECOVERY)


async def test_get_invoice_ledger_unavailable(offline_ledger: None) -> None:
    result = await run_tool_contract(tools.get_invoice, {"invoice_id": "inv_2026_0001"})
    failed(result, "SERVICE_UNAVAILABLE", "ledger_unavailable", LEDGER_RECOVERY)
    assert result.failure.retryable is True


# -- create_invoice ------------------------------------------------------------------------------


async def test_create_invoice_customer_not_found() -> None:
    result = await run_tool_contract(
        tools.create_invoice, {"customer_id": "cus_nobody", "currency": "EUR", "lines": A_LINE}
    )
    failed(result, "NOT_FOUND", "customer_not_found", CUSTOMER_RECOVERY)


async def test_create_invoice_currency_mismatch() -> None:
    result = await run_tool_contract(
        tools.create_invoice, {"customer_id": "cus_acme", "currency": "USD", "lines": A_LINE}
    )
    failed(result, "CONFLICT", "CurrencyMismatch", "Use the billing currency.")
    assert result.failure.message == "ACME Corp is billed in EUR"


# -- pay_invoice ---------------------------------------------------------------------------------


async def test_pay_invoice_invoice_not_found() -> None:
    result = await run_tool_contract(tools.pay_invoice, {"invoice_id": "inv_missing", "card_token": "tok_visa_4242"})
    failed(result, "NOT_FOUND", "invoice_not_found", INVOICE_RECOVERY)


async def test_pay_invoice_already_paid() -> None:
    result = await run_tool_contract(tools.pay_invoice, {"invoice_id": "inv_2026_0002", "card_token": "tok_visa_4242"})
    failed(result, "CONFLICT", "already_paid", "Call get_invoice to confirm the payment instead of paying twice.")


async def test_pay_invoice_card_declined_arrives_with_the_services_code() -> None:
    # The FL206 demo: declared FORBIDDEN, raised by the payment service as CONFLICT. Coverage flags it.
    result = await run_tool_contract(tools.pay_invoice, {"invoice_id": "inv_2026_0001", "card_token": "tok_declined_1"})
    failed(result, "CONFLICT", "card_declined", "Ask the user for another card, then call pay_invoice again.")


# -- void_invoice --------------------------------------------------------------------------------


async def test_void_invoice_invoice_not_found() -> None:
    result = await run_tool_contract(tools.void_invoice, {"invoice_id": "inv_missing"})
    failed(result, "NOT_FOUND", "invoice_not_found", INVOICE_RECOVERY)


async def test_void_invoice_already_paid() -> None:
    result = await run_tool_contract(tools.void_invoice, {"invoice_id": "inv_2026_0002"})
    failed(result, "CONFLICT", "already_paid", "Tell the user a paid invoice needs a refund from the finance team.")


async def test_voiding_a_void_invoice_does_not_fail(invoice) -> None:
    # The FL204 demo: ctx.fail("already_void") is not raised, so the declared failure never happens.
    result = await run_tool_contract(tools.void_invoice, {"invoice_id": invoice(status="void")})
    assert result.is_error is False and result.structured_content["status"] == "void"


async def test_voiding_an_archived_invoice_is_a_masked_failure(invoice) -> None:
    # The FL203 demo: fail("invoice_archived") names an undeclared reason; the model reads a masked error.
    result = await run_tool_contract(tools.void_invoice, {"invoice_id": invoice(issued_on=date(2019, 5, 1))})
    assert (result.failure.code, result.failure.reason) == ("INTERNAL_ERROR", "unexpected_error")


# -- send_reminder -------------------------------------------------------------------------------


async def test_send_reminder_invoice_not_found() -> None:
    result = await run_tool_contract(tools.send_reminder, {"invoice_id": "inv_missing"})
    failed(result, "NOT_FOUND", "invoice_not_found", INVOICE_RECOVERY)


async def test_send_reminder_reminder_too_soon() -> None:
    result = await run_tool_contract(tools.send_reminder, {"invoice_id": "inv_2026_0003"})
    failed(
        result,
        "RATE_LIMITED",
        "reminder_too_soon",
        "Call list_all_invoices to pick an invoice that was not reminded recently.",
    )
    assert result.failure.retry_after is not None and result.failure.retry_after > 0


# -- the invoice resource (a JSON-RPC error carrying the envelope) ---------------------------------


async def read_failure(uri: str) -> dict:
    async with mcp.Client(build_server().sdk_server) as client:
        with pytest.raises(mcp.MCPError) as raised:
            await client.read_resource(uri)
    return raised.value.error.data


async def test_invoice_resource_invoice_not_found() -> None:
    data = await read_failure("billing://invoices/inv_missing")
    assert (data["code_name"], data["reason"], data["recovery"]) == ("NOT_FOUND", "invoice_not_found", INVOICE_RECOVERY)


async def test_invoice_resource_ledger_unavailable(offline_ledger: None) -> None:
    data = await read_failure("billing://invoices/inv_2026_0001")
    assert (data["code_name"], data["reason"], data["recovery"]) == (
        "SERVICE_UNAVAILABLE",
        "ledger_unavailable",
        LEDGER_RECOVERY,
    )
