"""Self-healing deltas (issue 11): a server whose code drifted from its lockfile says what changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_testing import connected, envelope_text

from mcp_fusion import Context, ErrorContract, FusionServer, JsonRpcErrorCode, tool
from mcp_fusion.client import parse_envelope, parse_structured
from mcp_fusion.lockfile import LockfileError, build_lock, records_from_definitions, write_lock

pytestmark = pytest.mark.anyio

MISSING = ErrorContract(
    reason="invoice_missing",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No invoice has that ID",
    recovery="Call list_invoices to find a real invoice ID.",
)
LOCKED = ErrorContract(
    reason="invoice_locked",
    code=JsonRpcErrorCode.FORBIDDEN,
    when="An export holds the invoice",
    recovery="Wait for the export, then call void_invoice again.",
)
LEDGER_DOWN = ErrorContract(
    reason="ledger_down",
    code=JsonRpcErrorCode.SERVICE_UNAVAILABLE,
    when="The ledger did not answer",
    recovery="Wait a minute, then call void_invoice again.",
    retryable=True,
)
NO_CUSTOMER = ErrorContract(
    reason="no_customer",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No such customer",
    recovery="Call list_customers to browse the customers.",
)


def void_invoice_v1(invoice_id: str, ctx: Context) -> str: ...


@tool("void_invoice", errors=[MISSING, LOCKED.model_copy(update={"code": JsonRpcErrorCode.CONFLICT})])
def void_invoice(invoice_id: str, ctx: Context) -> str:
    """Version 2: ledger_down is gone and invoice_locked became CONFLICT."""
    if invoice_id == "locked":
        raise ctx.fail("invoice_locked")
    raise ctx.fail("invoice_missing")


@tool("find_customer", errors=[NO_CUSTOMER])
def find_customer(name: str, ctx: Context) -> str:
    raise ctx.fail("no_customer")


@pytest.fixture
def lockfile(tmp_path: Path) -> Path:
    """The lockfile written when void_invoice still declared ledger_down and invoice_locked was FORBIDDEN."""
    old_void = tool("void_invoice", errors=[MISSING, LOCKED, LEDGER_DOWN])(void_invoice_v1)
    path = tmp_path / "fusion-contracts.lock"
    write_lock(path, build_lock(records_from_definitions([old_void, find_customer])))
    return path


AWARENESS = (
    "  <contract_awareness>\n"
    '    <change impact="BREAKING" kind="code_changed" reason="invoice_locked">'
    "reason 'invoice_locked' now fails with CONFLICT (was FORBIDDEN)</change>\n"
    '    <change impact="BREAKING" kind="reason_removed" reason="ledger_down">'
    "reason 'ledger_down' (SERVICE_UNAVAILABLE) was removed</change>\n"
    "  </contract_awareness>\n"
)


async def test_contract_failure_of_a_drifted_tool_lists_exactly_its_deltas(lockfile: Path) -> None:
    server = FusionServer("billing", tools=[void_invoice, find_customer], contract_lock=lockfile)
    async with connected(server) as client:
        result = await client.call_tool("void_invoice", {"invoice_id": "locked"})
    assert envelope_text(result) == (
        '<tool_error code="CONFLICT" severity="error">\n'
        "  <message>An export holds the invoice</message>\n"
        "  <recovery>Wait for the export, then call void_invoice again.</recovery>\n"
        "  <details>\n"
        '    <detail key="reason">invoice_locked</detail>\n'
        "  </details>\n" + AWARENESS + "</tool_error>"
    )
    changes = result.structured_content["error"]["data"]["contract_awareness"]
    assert [(c["impact"], c["kind"], c["reason"]) for c in changes] == [
        ("BREAKING", "code_changed", "invoice_locked"),
        ("BREAKING", "reason_removed", "ledger_down"),
    ]
    assert parse_envelope(envelope_text(result)) == parse_structured(result.structured_content)


async def test_validation_error_of_a_drifted_tool_carries_the_section(lockfile: Path) -> None:
    server = FusionServer("billing", tools=[void_invoice, find_customer], contract_lock=lockfile)
    async with connected(server) as client:
        result = await client.call_tool("void_invoice", {})
    assert envelope_text(result) == (
        '<validation_error action="void_invoice" code="INVALID_PARAMS" reason="invalid_arguments">\n'
        '  <field name="invoice_id">Missing required field: expected a string. You sent nothing.</field>\n'
        "  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n"
        + AWARENESS
        + "</validation_error>"
    )


async def test_tools_whose_contract_did_not_move_get_no_section(lockfile: Path) -> None:
    server = FusionServer("billing", tools=[void_invoice, find_customer], contract_lock=lockfile)
    async with connected(server) as client:
        result = await client.call_tool("find_customer", {"name": "x"})
        invalid = await client.call_tool("find_customer", {})
    assert "contract_awareness" not in envelope_text(result)
    assert "contract_awareness" not in result.structured_content["error"]["data"]
    assert "contract_awareness" not in envelope_text(invalid)


async def test_json_envelope_carries_the_deltas(lockfile: Path) -> None:
    server = FusionServer("billing", tools=[void_invoice, find_customer], contract_lock=lockfile, envelope="json")
    async with connected(server) as client:
        result = await client.call_tool("void_invoice", {"invoice_id": "x"})
    failure = parse_envelope(envelope_text(result))
    assert [change["kind"] for change in failure.contract_awareness] == ["code_changed", "reason_removed"]
    assert failure == parse_structured(result.structured_content)


async def test_the_number_of_deltas_is_capped(lockfile: Path) -> None:
    server = FusionServer(
        "billing", tools=[void_invoice, find_customer], contract_lock=lockfile, contract_awareness_limit=1
    )
    async with connected(server) as client:
        result = await client.call_tool("void_invoice", {"invoice_id": "x"})
    assert len(result.structured_content["error"]["data"]["contract_awareness"]) == 1
    assert server.contract_deltas and len(server.awareness_for("tool", "void_invoice")) == 1


async def test_no_lockfile_no_section(tmp_path: Path) -> None:
    server = FusionServer("billing", tools=[void_invoice], contract_lock=tmp_path / "absent.lock")
    async with connected(server) as client:
        result = await client.call_tool("void_invoice", {"invoice_id": "x"})
    assert "contract_awareness" not in envelope_text(result)
    assert server.contract_deltas == []


async def test_safe_deltas_and_unexpected_failures_carry_no_section(tmp_path: Path) -> None:
    reworded = tool("find_customer", errors=[NO_CUSTOMER.model_copy(update={"when": "Nobody by that name"})])(
        find_customer.handler
    )
    path = tmp_path / "fusion-contracts.lock"
    write_lock(path, build_lock(records_from_definitions([find_customer])))
    server = FusionServer("billing", tools=[reworded], contract_lock=path)
    assert [delta.kind for delta in server.contract_deltas] == ["when_changed"]
    async with connected(server) as client:
        result = await client.call_tool("find_customer", {"name": "x"})
    assert "contract_awareness" not in envelope_text(result)


def test_a_corrupt_lockfile_fails_at_start_up(tmp_path: Path) -> None:
    path = tmp_path / "fusion-contracts.lock"
    path.write_text("{ not json")
    with pytest.raises(LockfileError, match="not valid JSON"):
        FusionServer("billing", tools=[void_invoice], contract_lock=path)
