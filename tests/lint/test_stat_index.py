"""Change detection before hashing (issue 15): a warm run reads no file whose stat has not moved,
re-reads every file whose stat moved (ctime included: an mtime put back does not hide an edit),
and a damaged, planted or racy index costs reads, never a wrong result."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import fusion_lint.memo.stat_index as stat_index
import fusion_lint.source.runner as runner
from fusion_lint.check.engine import Options, Report, lint

TOOL = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool

@tool("get_item_{n}", errors=[
    ErrorContract(reason="item_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item has that id",
                  recovery="Check the id with the user, then call get_item_{n} again."),
])
async def get_item_{n}(item_id: str, ctx) -> dict:
    raise ctx.fail("item_missing")
"""
PLAIN = "def helper():\n    return 1\n"  # skipped by the pre-scan: remembered as skipped


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files ``run_files`` opens, in order (the stat index's whole point is not opening them)."""
    opened: list[str] = []
    real = runner.read_source

    def counting(path: str):
        opened.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(runner, "read_source", counting)
    return opened


@pytest.fixture
def not_racy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files the test wrote a moment ago count as settled (the racy rule has its own test)."""
    monkeypatch.setattr(stat_index, "RACY_S", 0.0)


def project(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for n in range(3):
        (root / f"tools{n}.py").write_text(TOOL.format(n=n))
    (root / "plain.py").write_text(PLAIN)


def run(root: Path, use_cache: bool = True) -> Report:
    return lint(Options(paths=[str(root)], use_cache=use_cache, jobs=1))


def seen(report: Report) -> list[tuple[str, str, int, str]]:
    return [(d.code, os.path.basename(d.path), d.span.line, d.message) for d in report.diagnostics]


def test_a_warm_run_opens_no_file_whose_stat_did_not_move(tmp_path: Path, reads: list[str], not_racy: None) -> None:
    project(tmp_path)
    cold = seen(run(tmp_path))
    assert sorted(reads) == ["plain.py", "tools0.py", "tools1.py", "tools2.py"]
    reads.clear()
    assert seen(run(tmp_path)) == cold
    assert reads == []


def test_an_edit_is_seen_even_with_the_same_size_and_mtime(tmp_path: Path, reads: list[str], not_racy: None) -> None:
    project(tmp_path)
    run(tmp_path)
    target = tmp_path / "tools1.py"
    before = target.stat()
    edited = TOOL.format(n=1).replace('raise ctx.fail("item_missing")', 'raise ctx.fail("item_mis5ing")')
    assert len(edited) == before.st_size
    target.write_text(edited)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # as ``touch -d`` or ``rsync -t`` would
    reads.clear()
    warm = seen(run(tmp_path))
    assert reads == ["tools1.py"]  # only the ctime moved, and that is enough
    assert warm == seen(run(tmp_path, use_cache=False))
    assert any(code == "FL203" and path == "tools1.py" for code, path, _, _ in warm)


def test_a_damaged_or_planted_index_is_a_miss(tmp_path: Path, reads: list[str], not_racy: None) -> None:
    project(tmp_path)
    cold = seen(run(tmp_path))
    [index] = (tmp_path / ".fusion_lint_cache").glob("stat-*.pickle")
    data = bytearray(index.read_bytes())
    data[-5] ^= 0x01
    index.write_bytes(bytes(data))
    (tmp_path / "tools2.py").write_text(TOOL.format(n=2).replace("item_missing", "item_gone", 1))
    reads.clear()
    assert seen(run(tmp_path)) == seen(run(tmp_path, use_cache=False)) != cold
    assert sorted(set(reads)) == ["plain.py", "tools0.py", "tools1.py", "tools2.py"]  # nothing vouched for


def test_a_file_written_just_before_it_was_recorded_is_read_again(tmp_path: Path, reads: list[str]) -> None:
    project(tmp_path)  # written now: within RACY_S of the run, so its next edit might not move the stat
    run(tmp_path)
    reads.clear()
    run(tmp_path)
    assert sorted(reads) == ["plain.py", "tools0.py", "tools1.py", "tools2.py"]


def test_a_vouched_file_whose_entry_is_gone_is_read_and_analysed(
    tmp_path: Path, reads: list[str], not_racy: None
) -> None:
    project(tmp_path)
    cold = seen(run(tmp_path))
    for entry in (tmp_path / ".fusion_lint_cache").glob("*.pickle"):
        if not entry.name.startswith("stat-"):
            entry.unlink()
    reads.clear()
    assert seen(run(tmp_path)) == cold
    assert sorted(reads) == ["tools0.py", "tools1.py", "tools2.py"]  # plain.py: still known as skipped


def test_a_file_gone_from_the_walk_is_forgotten(tmp_path: Path, not_racy: None) -> None:
    from fusion_lint.memo.store import load_entry, user_key

    project(tmp_path)
    run(tmp_path)
    (tmp_path / "tools2.py").unlink()
    run(tmp_path)
    [index] = (tmp_path / ".fusion_lint_cache").glob("stat-*.pickle")
    remembered = load_entry(index, user_key())
    assert sorted(os.path.basename(path) for path in remembered) == ["plain.py", "tools0.py", "tools1.py"]
