"""The cache (DESIGN §10, issue 8): per-file facts keyed by content, whole runs keyed by every input.

What matters is that a cached run says exactly what a cold run says, whatever changed in between:
a file, a file it imports, the configuration, the selection, the linter itself. Files are
analysed in-process here (``in_process``) so that the tests can count what is parsed.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import fusion_lint.memo.cache as cache
import fusion_lint.memo.store as cache_store
import fusion_lint.source.runner as runner
from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.check.report import Report
from fusion_lint.rules import REGISTRY, all_rules

CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SHARED = [
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE,
                  when="The upstream API is unreachable", thrown_by="service",
                  recovery="Wait a minute, then call get_invoice again."),
]
"""

TOOLS = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, service_unavailable, tool

from .contracts import SHARED


def fetch(invoice_id: str) -> dict:
    if not invoice_id:
        raise service_unavailable("down", data={"reason": "upstream_down"})
    return {"id": invoice_id}


@tool("get_invoice", errors=[
    *SHARED,
    ErrorContract(reason="no_invoice", code=JsonRpcErrorCode.NOT_FOUND, when="No such invoice",
                  recovery="Check the id, then call get_invoice again."),
])
async def get_invoice(invoice_id: str, ctx: Context) -> dict:
    found = fetch(invoice_id)
    if not found:
        raise ctx.fail("no_invoice")
    return found
"""


def write(root: Path, files: dict[str, str], config: str = "") -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n" + textwrap.dedent(config))
    for relative, source in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source)


def project(root: Path) -> None:
    write(root, {"billing/__init__.py": "", "billing/contracts.py": CONTRACTS, "billing/tools.py": TOOLS})


def run(root: Path, *, use_cache: bool = True, select: list[str] | None = None, jobs: int = 1) -> Report:
    return lint(Options(paths=[str(root)], use_cache=use_cache, jobs=jobs, selection=Selection(select=select)))


def seen(report: Report, root: Path) -> list[tuple[str, str, int, int, str]]:
    return [
        (d.code, Path(d.path).relative_to(root).as_posix(), d.span.line, d.span.col, d.message)
        for d in report.diagnostics
    ]


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Files analysed in-process, in order: what the cache did not answer."""
    names: list[str] = []
    original = runner.analyze_one

    def counting(path: str, data: bytes, runtime_modules: object) -> object:
        names.append(Path(path).name)
        return original(path, data, runtime_modules)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "isolation_context", lambda files: None)
    monkeypatch.setattr(runner, "analyze_one", counting)
    return names


def test_an_unchanged_tree_parses_nothing_and_runs_no_rule(
    tmp_path: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project(tmp_path)
    (tmp_path / "billing/tools.py").write_text(TOOLS.replace("raise ctx.fail", "ctx.fail"))  # FL204
    cold = run(tmp_path)
    assert "FL204" in {d.code for d in cold.diagnostics}
    assert sorted(parsed) == ["contracts.py", "tools.py"]  # __init__.py never names the runtime

    parsed.clear()
    all_rules()
    for rule in REGISTRY.values():  # any rule that runs now fails loudly (FL999)
        for scope in rule.checks():
            monkeypatch.setattr(rule, f"check_{scope}", lambda self, subject, project: 1 / 0)
    warm = run(tmp_path)
    assert parsed == []
    assert seen(warm, tmp_path) == seen(cold, tmp_path)


def test_editing_one_file_reparses_that_file_only_and_matches_a_cold_run(tmp_path: Path, parsed: list[str]) -> None:
    project(tmp_path)
    before = run(tmp_path)
    parsed.clear()
    (tmp_path / "billing/tools.py").write_text(TOOLS.replace("raise ctx.fail", "ctx.fail"))
    edited = run(tmp_path)
    assert parsed == ["tools.py"]
    assert seen(edited, tmp_path) == seen(run(tmp_path, use_cache=False), tmp_path)
    assert seen(edited, tmp_path) != seen(before, tmp_path)


def test_a_changed_contract_module_changes_the_diagnostics_of_the_file_that_imports_it(
    tmp_path: Path, parsed: list[str]
) -> None:
    project(tmp_path)
    before = run(tmp_path)
    assert not [d for d in before.diagnostics if d.path.endswith("tools.py")]
    parsed.clear()
    # The service raises SERVICE_UNAVAILABLE for this reason; the shared entry now says otherwise.
    (tmp_path / "billing/contracts.py").write_text(CONTRACTS.replace("SERVICE_UNAVAILABLE", "CONFLICT"))
    after = run(tmp_path)
    assert parsed == ["contracts.py"]  # tools.py's own facts come from the cache...
    in_tools = [d.code for d in after.diagnostics if d.path.endswith("tools.py")]
    assert "FL206" in in_tools  # ...and its cross-file diagnostics are recomputed
    assert seen(after, tmp_path) == seen(run(tmp_path, use_cache=False), tmp_path)


def test_a_dependency_outside_the_linted_tree_is_checked_before_a_run_is_reused(tmp_path: Path) -> None:
    """``shared/`` is excluded from the walk, yet the project view loads the contract from it."""
    write(
        tmp_path,
        {
            "shared/__init__.py": "",
            "shared/contracts.py": CONTRACTS,
            "app.py": TOOLS.replace("from .contracts", "from shared.contracts"),
        },
        config='extend-exclude = ["shared/"]\n',
    )
    before = run(tmp_path)
    assert not before.diagnostics
    (tmp_path / "shared/contracts.py").write_text(CONTRACTS.replace("SERVICE_UNAVAILABLE", "CONFLICT"))
    after = run(tmp_path)
    assert "FL206" in {d.code for d in after.diagnostics}
    assert seen(after, tmp_path) == seen(run(tmp_path, use_cache=False), tmp_path)


def test_configuration_and_selection_are_part_of_the_key(tmp_path: Path) -> None:
    project(tmp_path)
    short = TOOLS.replace("Check the id, then call get_invoice again.", "Call get_invoice again.")
    (tmp_path / "billing/tools.py").write_text(short)  # four words: FL112 at the default of five
    assert "FL112" in {d.code for d in run(tmp_path).diagnostics}
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\nrecovery-min-words = 3\n")
    assert "FL112" not in {d.code for d in run(tmp_path).diagnostics}
    only = run(tmp_path, select=["FL204"])
    assert only.diagnostics == []
    assert seen(run(tmp_path), tmp_path) == seen(run(tmp_path, use_cache=False), tmp_path)


def test_facts_cached_by_other_linter_code_are_not_read(
    tmp_path: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project(tmp_path)
    run(tmp_path)
    parsed.clear()
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "another version of fusion-lint")
    run(tmp_path)
    assert sorted(parsed) == ["contracts.py", "tools.py"]  # __init__.py never names the runtime


def test_damaged_entries_are_misses(tmp_path: Path) -> None:
    project(tmp_path)
    cold = run(tmp_path)
    entries = sorted((tmp_path / ".fusion_lint_cache").glob("*.pickle"))
    assert entries
    for index, entry in enumerate(entries):
        data = entry.read_bytes()
        entry.write_bytes(data[: len(data) // 2] if index % 2 else b"\x00garbage" * 7)
    assert seen(run(tmp_path), tmp_path) == seen(cold, tmp_path)
    assert seen(run(tmp_path), tmp_path) == seen(cold, tmp_path)  # and rewritten whole


def test_an_unwritable_cache_directory_only_costs_the_cache(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.fusion-lint]\ncache-dir = "pyproject.toml/cache"\n')
    assert seen(run(tmp_path), tmp_path) == seen(run(tmp_path, use_cache=False), tmp_path)


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)
    names = os.listdir(tmp_path / ".fusion_lint_cache")
    assert not [name for name in names if name.endswith(".tmp")]
    assert ".gitignore" in names


@pytest.mark.slow
def test_concurrent_runs_share_the_cache_safely(tmp_path: Path) -> None:
    files = {"billing/__init__.py": "", "billing/contracts.py": CONTRACTS}
    for index in range(14):
        files[f"billing/tools_{index:02d}.py"] = TOOLS.replace("get_invoice", f"get_invoice_{index}").replace(
            "raise ctx.fail", "ctx.fail" if index % 3 == 0 else "raise ctx.fail"
        )
    write(tmp_path, files)
    expected = subprocess.run(
        [sys.executable, "-m", "fusion_lint", ".", "--no-cache"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    assert "FL204" in expected
    command = [sys.executable, "-m", "fusion_lint", "."]
    racing = [subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [process.communicate()[0] for process in racing]
    assert outputs == [expected] * 3
    warm = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True).stdout
    assert warm == expected


def test_only_recent_run_entries_and_used_file_entries_are_kept(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)  # creates and signs the cache directory
    directory = tmp_path / ".fusion_lint_cache"
    for entry in directory.glob("*.pickle"):
        entry.unlink()
    now = time.time()
    for index in range(cache.RUN_ENTRIES_KEPT + 4):
        entry = directory / f"run-{index:064x}.pickle"
        entry.write_bytes(b"x")
        os.utime(entry, (now - 1000 + index, now - 1000 + index))
    names = {"used": "a" * 64, "stale": "b" * 64, "recent": "c" * 64}
    for name, age in (("used", 10**8), ("stale", 10**8), ("recent", 60)):
        entry = directory / f"{names[name]}.pickle"
        entry.write_bytes(b"x")
        os.utime(entry, (now - age, now - age))
    cache.ReportCache(directory).prune({names["used"]})
    remaining = sorted(p.name for p in directory.iterdir())
    runs = [name for name in remaining if name.startswith("run-")]
    assert runs == [f"run-{index:064x}.pickle" for index in range(4, cache.RUN_ENTRIES_KEPT + 4)]
    assert f"{names['used']}.pickle" in remaining and f"{names['recent']}.pickle" in remaining
    assert f"{names['stale']}.pickle" not in remaining


def test_the_cache_refuses_to_build_anything_but_the_linters_data(tmp_path: Path) -> None:
    """Even an entry signed with the user's own key (written by something that has it) is read as
    data only."""

    class Payload:
        def __reduce__(self) -> tuple:
            return (os.system, ("echo pwned",))

    key = cache_store.user_key()
    assert key is not None
    name = "0" * 64 + ".pickle"
    cache_store.store_bytes(tmp_path / "cache", name, pickle.dumps(Payload()), key)
    assert cache.load_entry(tmp_path / "cache" / name, key) is None
    cache_store.store_entry(tmp_path / "cache", name, {"plain": ["data", 1, frozenset({2})]}, key)
    assert cache.load_entry(tmp_path / "cache" / name, key) == {"plain": ["data", 1, frozenset({2})]}
