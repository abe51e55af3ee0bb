"""The language server keeps the vocabulary-only resolution of every file outside a buffer's reach
from one lint to the next (``project.kept_resolution``, issue 15 point 4) and says exactly what a
lint resolving them again says: after an edit of the buffer, of a shared contract module, of a
constant module the pre-scan skips, a tool renamed, a file added or deleted, a config changed.

Each step lints the buffer twice — through the language server (kept state) and as the CLI's
``--stdin-filename`` does (nothing kept) — and compares every output format. What was replayed is
counted in the report's stats (``report.stats.kept``), never timed."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_facts_partial import write_project
from test_partial_runs import MODULES, rendered

import fusion_lint.lsp.server as lsp
import fusion_lint.project.kept_resolution as kept_resolution
from fusion_lint.base.stats import KeptCounts, RunStats
from fusion_lint.check.engine import lint

#: The analysed files besides a tool module buffer, resolved for vocabulary: the other tool
#: modules, locks.py, contracts.py and services.py.
OTHERS = MODULES - 1 + 3

REASONS = 'LOCKED = "item_locked_4"\nMISSING = "Item_Missing_4"\n'  # a module the pre-scan skips

CONSTANT_USER = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool

from pkg.contracts import SHARED
from pkg.reasons import LOCKED, MISSING

BASE = {"code": JsonRpcErrorCode.CONFLICT, "when": "The item is locked"}


@tool("lock_item", description="Lock an item", errors=[
    *SHARED,
    {**BASE, "reason": LOCKED, "recovery": "Call list_items_4 to see who holds it, then call lock_item again."},
    ErrorContract(reason=MISSING, code=JsonRpcErrorCode.NOT_FOUND, when="No such item",
                  recovery="Call list_items_4 to find valid ids, then call lock_item again."),
])
async def lock_item(item_id: str, ctx: Context, force: bool = False) -> dict:
    raise ctx.fail(LOCKED)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(write_project(tmp_path))
    (tmp_path / "pkg" / "reasons.py").write_text(REASONS, encoding="utf-8")
    (tmp_path / "pkg" / "locks.py").write_text(CONSTANT_USER, encoding="utf-8")
    return tmp_path


def same_as_without(path: Path, text: str | None = None) -> tuple[str, RunStats]:
    """The buffer's lint through the language server, checked against the language server's
    lint without its kept resolution and against the CLI's (``--stdin-filename``: nothing kept)."""
    text = path.read_text(encoding="utf-8") if text is None else text
    report = lsp.lint_buffer(str(path), text)
    served = rendered(report)
    kept_resolution.KEEP = False
    try:
        assert rendered(lsp.lint_buffer(str(path), text)) == served
    finally:
        kept_resolution.KEEP = True
    assert rendered(lint(lsp.buffer_options(str(path), text))) == served
    return served, report.stats


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_keystroke_replays_every_file_outside_the_buffers_reach(project: Path) -> None:
    buffer = project / "pkg" / "tools" / "m3.py"
    text = buffer.read_text(encoding="utf-8")
    _, stats = same_as_without(buffer, text)
    assert stats.kept.resolved == OTHERS and stats.kept.replayed == 0
    for typed in ("\n# a", "\n# ab", "\n\n# abc"):
        text += typed
        served, stats = same_as_without(buffer, text)
        assert stats.kept.replayed == OTHERS and stats.kept.resolved == 0, stats.kept
        assert stats.partial.full_paths == {str(buffer)} and stats.resolve.full == 2
        assert "list_itemz_8" in served  # FL401's suggestion, from the kept vocabulary


def test_without_the_language_server_nothing_is_kept(project: Path) -> None:
    buffer = project / "pkg" / "tools" / "m3.py"
    report = lint(lsp.buffer_options(str(buffer), buffer.read_text(encoding="utf-8")))
    assert report.stats.kept == KeptCounts()


def test_a_shared_contract_changed_on_disk_resolves_its_importers_again(project: Path) -> None:
    buffer = project / "pkg" / "tools" / "m3.py"
    before, stats = same_as_without(buffer)
    edit(project / "pkg" / "contracts.py", 'reason="upstream_down"', 'reason="UpstreamDown"')
    served, stats = same_as_without(buffer)
    # The contracts, every other tool module and locks.py (they import them): resolved again; the services replayed.
    assert stats.kept.dropped == MODULES + 1 and stats.kept.replayed == 1
    assert stats.kept.resolved == OTHERS - 1
    assert served == before  # (the shared entry's diagnostics land in contracts.py)
    edit(project / "pkg" / "contracts.py", 'reason="UpstreamDown"', 'reason="upstream_down"')
    assert same_as_without(buffer)[0] == before


def test_a_tool_renamed_on_disk_changes_the_buffers_vocabulary(project: Path) -> None:
    buffer = project / "pkg" / "tools" / "m3.py"
    before, stats = same_as_without(buffer)
    edit(project / "pkg" / "tools" / "m8.py", '"list_items_8"', '"list_things_8"')
    after, stats = same_as_without(buffer)
    assert after != before and stats.kept.dropped == 1 and stats.kept.resolved == 1
    edit(project / "pkg" / "tools" / "m8.py", '"list_things_8"', '"list_items_8"')
    assert same_as_without(buffer)[0] == before


def test_a_skipped_constant_module_changed_drops_what_was_kept(project: Path) -> None:
    buffer = project / "pkg" / "tools" / "m4.py"
    _, stats = same_as_without(buffer)
    edit(project / "pkg" / "reasons.py", '"Item_Missing_4"', '"item_missing_4"')
    _, stats = same_as_without(buffer)
    # Its bytes are what the graph calls harmless: locks.py, which reaches it, is resolved again.
    assert stats.kept.dropped == 1 and stats.kept.resolved == 1
    (project / "pkg" / "reasons.py").unlink()  # (who reached it is not in the graph any more)
    _, stats = same_as_without(buffer)
    assert stats.kept.cleared


def test_files_added_deleted_and_config_changed(project: Path) -> None:
    buffer = project / "pkg" / "tools" / "m2.py"
    _, stats = same_as_without(buffer)
    (project / "pkg" / "tools" / "m99.py").write_text(
        (project / "pkg" / "tools" / "m1.py").read_text(encoding="utf-8").replace("_1", "_99"), encoding="utf-8"
    )
    _, stats = same_as_without(buffer)
    assert stats.kept.cleared
    (project / "pkg" / "tools" / "m7.py").unlink()
    _, stats = same_as_without(buffer)
    assert stats.kept.cleared
    (project / "pyproject.toml").write_text("[tool.fusion-lint]\nrecovery-min-words = 12\n", encoding="utf-8")
    _, stats = same_as_without(buffer)
    assert stats.kept.cleared
    _, stats = same_as_without(buffer)
    assert stats.kept.replayed > 0 and stats.kept.resolved == 0


def test_buffers_of_other_documents_and_new_imports(project: Path) -> None:
    m3, m5 = project / "pkg" / "tools" / "m3.py", project / "pkg" / "tools" / "m5.py"
    _, stats = same_as_without(m3)
    _, stats = same_as_without(m5)
    assert stats.kept.resolved == 1  # m3, in full before
    # The buffer now imports another tool module: that one is resolved in full, the rest replayed.
    text = m3.read_text(encoding="utf-8").replace(
        "import json\n", "import json\n\nfrom pkg.tools.m6 import get_item_6\n"
    )
    _, stats = same_as_without(
        m3, text + "\n\nasync def again(item_id, ctx):\n    return await get_item_6(item_id, ctx)\n"
    )
    # A definition of the buffer holding the shared entry with every kept file: one resolution of it.
    _, stats = same_as_without(project / "pkg" / "locks.py")
    assert stats.kept.replayed == OTHERS - 1 and stats.kept.resolved == 1  # (m3 as on disk)


def test_a_lint_that_cannot_have_the_kept_resolution_resolves_alone(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    buffer = project / "pkg" / "tools" / "m3.py"
    _, stats = same_as_without(buffer)
    kept = lsp.PROJECT_RESOLUTION
    monkeypatch.setattr(kept_resolution, "LOCK_WAIT_S", 0.01)
    with kept.lock:  # another lint holds it
        _, stats = same_as_without(buffer, buffer.read_text(encoding="utf-8") + "\n# x\n")
        assert stats.kept == KeptCounts()
    _, stats = same_as_without(buffer)  # (and the lock is free again once a view is released)
    assert stats.kept.replayed == OTHERS
    assert not kept.lock.locked()


def test_the_vocabulary_and_fl401s_index_serve_again(project: Path) -> None:
    buffer = project / "pkg" / "tools" / "m3.py"
    text = buffer.read_text(encoding="utf-8")
    _, stats = same_as_without(buffer, text)
    kept = lsp.PROJECT_RESOLUTION
    vocabulary, index = kept.vocabulary, kept.vocabulary.__dict__.get("tool_index")
    assert index is not None  # (FL401 suggested list_items_8 for list_itemz_8)
    _, stats = same_as_without(buffer, text + "\n# typed\n")
    assert kept.vocabulary is vocabulary
    # Another reason in the buffer: another vocabulary, the same tools' index.
    _, stats = same_as_without(buffer, text.replace('"item_locked_3"', '"item_held_3"'))
    assert kept.vocabulary is not vocabulary and kept.vocabulary.tool_index is index
    # Another tool: another index.
    _, stats = same_as_without(buffer, text.replace('"list_items_3"', '"list_entries_3"'))
    assert kept.vocabulary.tool_index is not index


HELPER = """\
def logged_tool(mcp, name):
    def decorator(func):
        mcp.tool(name=name)(func)
        return func
    return decorator
"""

REGISTERED = """\
from app.audit import logged_tool
from app.server import mcp


def find(q: str, limit: int) -> str:
    raise ValueError(q)


logged_tool(mcp, "find_invoice")(find)


@mcp.tool()
def close_invoice(invoice_id: str) -> str:
    return invoice_id
"""

BUFFER = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool


@tool("pay_invoice", description="Pay one", errors=[
    ErrorContract(reason="invoice_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No such invoice",
                  recovery="Call find_invoise with the customer's name, then call pay_invoice again."),
])
async def pay_invoice(invoice_id: str, ctx: Context) -> dict:
    raise ctx.fail("invoice_missing")
"""


def test_tools_a_registration_helper_and_a_framework_register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n", encoding="utf-8")
    app = tmp_path / "app"
    app.mkdir()
    (app / "__init__.py").write_text("", encoding="utf-8")
    (app / "server.py").write_text("from fastmcp import FastMCP\n\nmcp = FastMCP('billing')\n", encoding="utf-8")
    (app / "audit.py").write_text(HELPER, encoding="utf-8")
    for number in range(6):
        (app / f"registered_{number}.py").write_text(
            REGISTERED.replace("_invoice", f"_invoice_{number}" if number else "_invoice"), encoding="utf-8"
        )
    buffer = app / "pay.py"
    buffer.write_text(BUFFER, encoding="utf-8")
    before, stats = same_as_without(buffer)
    assert "find_invoice" in before  # FL401's suggestion: a tool the helper registers in a kept file
    _, stats = same_as_without(buffer, BUFFER + "\n# typed\n")
    assert stats.kept.replayed >= 6 and stats.kept.resolved == 0
    edit(app / "registered_0.py", '"find_invoice"', '"search_invoices"')
    after, stats = same_as_without(buffer)
    assert after != before and stats.kept.dropped == 1
    edit(app / "audit.py", "mcp.tool(name=name)(func)", "mcp.tool(name=name + '_x')(func)")
    _, stats = same_as_without(buffer)
    assert stats.kept.dropped >= 6  # (every caller of the helper reaches it)
