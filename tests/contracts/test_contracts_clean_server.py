"""The clean example server's contract suite: every declared reason happens, as declared (100% coverage)."""

from __future__ import annotations

import mcp
import pytest

from fixtures import clean_server
from mcp_fusion.testing import run_tool_contract, run_tool_contract_sync

pytestmark = pytest.mark.anyio

NOT_FOUND_RECOVERY = "Call list_notes to find the ID of an existing note."


def failed(result, code: str, reason: str, recovery: str) -> None:
    assert result.is_error is True
    assert (result.failure.code, result.failure.reason, result.failure.recovery) == (code, reason, recovery)


async def test_get_note_note_not_found() -> None:
    result = await run_tool_contract(clean_server.build_server(), "get_note", {"note_id": "note_404"})
    failed(result, "NOT_FOUND", "note_not_found", NOT_FOUND_RECOVERY)


async def test_create_note_duplicate_title() -> None:
    result = await run_tool_contract(clean_server.create_note, {"title": "Groceries", "body": "Tea."})
    failed(result, "CONFLICT", "duplicate_title", "Call get_note on the existing note, or choose a different title.")
    assert result.failure.details["existing_id"] == "note_2"


async def test_create_note_notebook_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clean_server, "MAX_NOTES", len(clean_server._NOTES))
    result = await run_tool_contract(clean_server.create_note, {"title": "Holidays", "body": "Book the train."})
    failed(
        result, "CONFLICT", "notebook_full", "Ask the user which note to remove, then call delete_note before retrying."
    )


def test_delete_note_note_not_found() -> None:  # a plain test: the sync form
    result = run_tool_contract_sync(clean_server.delete_note, {"note_id": "note_404"})
    failed(result, "NOT_FOUND", "note_not_found", NOT_FOUND_RECOVERY)


def test_delete_note_note_pinned() -> None:
    result = run_tool_contract_sync(clean_server.delete_note, {"note_id": "note_1"})
    failed(result, "CONFLICT", "note_pinned", "Ask the user to unpin the note first, then call delete_note again.")


async def test_note_resource_note_not_found() -> None:
    async with mcp.Client(clean_server.build_server().sdk_server) as client:
        with pytest.raises(mcp.MCPError) as raised:
            await client.read_resource("notes://note_404")
    data = raised.value.error.data
    assert (data["code_name"], data["reason"], data["recovery"]) == ("NOT_FOUND", "note_not_found", NOT_FOUND_RECOVERY)
