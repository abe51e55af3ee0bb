"""The bundled example servers run: in memory, and over stdio as a subprocess."""

from __future__ import annotations

import re
import sys

import anyio
import mcp
import pytest
from runtime_testing import REPO_ROOT, connected, envelope_text

from fixtures import clean_server
from fixtures.example_server import server as example
from fixtures.example_server import services

pytestmark = pytest.mark.anyio

#: The deliberate contract mistakes the README demo relies on (one `# demo: FLxxx` marker each).
DEMO_CODES = {
    "FL107",
    "FL112",
    "FL200",
    "FL202",
    "FL203",
    "FL204",
    "FL206",
    "FL300",
    "FL301",
    "FL302",
    "FL304",
    "FL400",
    "FL401",
}


def test_every_demo_mistake_is_marked() -> None:
    package = REPO_ROOT / "fixtures" / "example_server"
    markers = {match for path in package.glob("*.py") for match in re.findall(r"# demo: (FL\d{3})", path.read_text())}
    assert markers == DEMO_CODES
    assert "# demo:" not in (REPO_ROOT / "fixtures" / "clean_server.py").read_text()


async def test_example_service_raised_failure_gets_the_shared_contract_recovery() -> None:
    async with connected(example.build_server()) as client:
        result = await client.call_tool("get_invoice", {"invoice_id": "inv_1999_0001"})
    assert result.is_error is True
    assert envelope_text(result) == (
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "  <message>No invoice 'inv_1999_0001'</message>\n"
        "  <recovery>Call list_invoices to find the right invoice, then retry with its ID.</recovery>\n"
        "  <details>\n"
        '    <detail key="reason">invoice_not_found</detail>\n'
        '    <detail key="invoice_id">inv_1999_0001</detail>\n'
        '    <detail key="retryable">false</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )


async def test_example_tools_work(monkeypatch: pytest.MonkeyPatch) -> None:
    async with connected(example.build_server()) as client:
        page = await client.call_tool("list_invoices", {"customer_id": "cus_acme"})
        missing_customer = await client.call_tool("list_invoices", {"customer_id": "cus_nobody"})
        declined = await client.call_tool(
            "pay_invoice", {"invoice_id": "inv_2026_0001", "card_token": "tok_declined_1"}
        )
        too_soon = await client.call_tool("send_reminder", {"invoice_id": "inv_2026_0003"})
        monkeypatch.setattr(services, "LEDGER_ONLINE", False)
        offline = await client.call_tool("get_invoice", {"invoice_id": "inv_2026_0001"})
    assert page.is_error is False
    assert [invoice["id"] for invoice in page.structured_content["invoices"]] == ["inv_2026_0001", "inv_2026_0002"]
    assert missing_customer.meta["fusion/error"]["data"]["reason"] == "customer_not_found"
    # The FL206 demo: the reason is declared (so its recovery is filled) but the service used another code.
    declined_error = declined.meta["fusion/error"]
    assert declined_error["code"] == -32002 and declined_error["data"]["reason"] == "card_declined"
    assert declined_error["data"]["recovery"] == {"hint": "Ask the user for another card, then call pay_invoice again."}
    assert too_soon.structured_content["error"]["data"]["reason"] == "reminder_too_soon"
    assert too_soon.structured_content["error"]["data"]["retry_after"] > 0
    assert offline.meta["fusion/error"]["data"]["retryable"] is True


async def test_example_resource_and_prompt() -> None:
    async with connected(example.build_server()) as client:
        document = await client.read_resource("billing://invoices/inv_2026_0002")
        email = await client.get_prompt("collections_email", {"invoice_id": "inv_2026_0001"})
    assert '"status": "paid"' in document.contents[0].text
    assert "1200.00 EUR" in email.messages[0].content.text


async def test_clean_server_tools_work() -> None:
    async with connected(clean_server.build_server()) as client:
        pinned = await client.call_tool("delete_note", {"note_id": "note_1"})
        missing = await client.call_tool("get_note", {"note_id": "note_404"})
        listed = await client.call_tool("list_notes", {"tag": "home"})
    assert pinned.structured_content["error"]["data"]["reason"] == "note_pinned"
    assert missing.meta["fusion/error"]["data"]["recovery"] == {
        "hint": "Call list_notes to find the ID of an existing note."
    }
    assert [note["id"] for note in listed.structured_content["notes"]] == ["note_2"]


@pytest.mark.slow
async def test_example_server_runs_over_stdio() -> None:
    parameters = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "fixtures.example_server.server"], cwd=str(REPO_ROOT)
    )
    with anyio.fail_after(60):
        async with mcp.Client(parameters) as client:
            listing = await client.list_tools()
            result = await client.call_tool("get_invoice", {"invoice_id": "inv_missing"})
    assert "pay_invoice" in {tool.name for tool in listing.tools}
    assert result.is_error is True
    assert (
        "<recovery>Call list_invoices to find the right invoice, then retry with its ID.</recovery>"
        in envelope_text(result)
    )
