"""The cache may make a run faster, never fail it (DESIGN §13.1, issue 29): an exception injected
at each point where a run reuses earlier work — the whole-run entry, the per-file entries, the stat
index, the rules' results, the run's snapshot, and what the language server keeps between lints —
still gives exactly what ``--no-cache`` gives, never exit 2 and never a missing diagnostic.

Each case checks that the injected point was reached (a point the run never calls proves nothing),
so removing ``engine.lint``'s fresh run turns every case into the exception it injected.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import fusion_lint.check.engine as engine
import fusion_lint.check.rule_cache as rule_cache
import fusion_lint.check.snapshot_run as snapshot_run
import fusion_lint.discovery.kept_walk as kept_walk
import fusion_lint.lsp.server as lsp
import fusion_lint.memo.cache as cache
import fusion_lint.memo.stat_index as stat_index
import fusion_lint.project.kept_resolution as kept_resolution
import fusion_lint.source.runner as runner
from fusion_lint.check.engine import Options, Report, lint

CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SHARED = [
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="The upstream is down",
                  recovery="Wait a minute, then call the same tool again."),
    ErrorContract(reason="Bad-Reason", code=JsonRpcErrorCode.NOPE, when="Never", recovery="Retry later."),
]
"""
SERVICES = """\
from mcp_fusion import McpError, JsonRpcErrorCode


def fetch(item_id: str) -> dict:
    if not item_id:
        raise ValueError("no id")
    if item_id == "gone":
        raise McpError(JsonRpcErrorCode.NOT_FOUND, "gone")
    return {"id": item_id}
"""
TOOLS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool

from contracts import SHARED
from services import fetch


@tool("get_item", errors=[
    *SHARED,
    ErrorContract(reason="item_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item has that id",
                  recovery="Call list_items first to find a valid id, then call get_item again."),
])
async def get_item(item_id: str, ctx) -> dict:
    if item_id == "none":
        ctx.fail("item_missing")
    found = fetch(item_id)
    raise ValueError("MESSAGE")
"""
OTHER = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool

from services import fetch


@tool("list_items", errors=[
    ErrorContract(reason="nothing_listed", code=JsonRpcErrorCode.NOT_FOUND, when="No item is listed",
                  recovery="Call get_item with an id you know instead, then try list_items again."),
])
async def list_items(ctx) -> list:
    found = [fetch("a")]
    if not found:
        ctx.fail("nothing_listed")
    return found
"""


def project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for name, text in (("contracts", CONTRACTS), ("services", SERVICES), ("tools", TOOLS), ("other", OTHER)):
        (root / f"{name}.py").write_text(text)
    return root / "tools.py"


def edit(tools: Path, message: str) -> None:
    """A body edit of one tool module, its stat moved well past the racy window."""
    tools.write_text(TOOLS.replace("MESSAGE", message))
    later = tools.stat().st_mtime + 5
    os.utime(tools, (later, later))


def seen(report: Report) -> list[tuple]:
    return [
        (d.code, os.path.basename(d.path), d.span.line, d.span.col, d.message, repr(d.fix)) for d in report.diagnostics
    ] + [report.files_checked, sorted(report.definitions.items())]


def run(paths: list[str], use_cache: bool = True) -> Report:
    return lint(Options(paths=paths, use_cache=use_cache, jobs=1))


class Injected(Exception):
    """The exception a reuse point raises in these tests."""


def inject(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Make ``owner.name`` raise ``Injected``; the list counts the calls."""
    calls: list[int] = []

    def raising(*args: object, **kwargs: object) -> None:
        calls.append(1)
        raise Injected(f"{name} injected")

    monkeypatch.setattr(owner, name, raising)
    return calls


# (what is injected, the run that reaches it: a whole-tree run after a body edit, answered by the
# snapshot, or without it, or the edited file named alone: the per-file entries and the rules' results)
CLI_POINTS: list[tuple[object, str, str]] = [
    (cache.RunMemo, "open", "tree"),
    (cache.RunMemo, "lookup", "tree"),
    (cache.RunMemo, "store", "tree"),
    (cache.ReportCache, "get", "tree"),
    (cache.FileCache, "get", "alone"),
    (stat_index.StatIndex, "verdict", "tree"),
    (stat_index.StatIndex, "save", "tree"),
    (snapshot_run, "plan", "tree"),
    (snapshot_run, "load_snapshot", "tree"),
    (snapshot_run, "replay", "tree"),
    (snapshot_run, "link_parts", "tree"),
    (snapshot_run, "store_snapshot", "tree"),
    (snapshot_run, "record", "tree-without-snapshot"),
    (rule_cache.RuleMemo, "plan", "alone"),
    (rule_cache.RuleMemo, "record", "alone"),
    (rule_cache.RuleMemo, "save", "alone"),
    (rule_cache.StoredFix, "__call__", "tree-without-snapshot"),
]


def _point_id(point: tuple[object, str, str]) -> str:
    owner, name, _ = point
    return f"{getattr(owner, '__name__', owner).rsplit('.', 1)[-1]}.{name}"


@pytest.mark.parametrize("point", CLI_POINTS, ids=_point_id)
def test_an_exception_in_the_clis_reuse_gives_the_no_cache_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: tuple[object, str, str]
) -> None:
    owner, name, how = point
    tools = project(tmp_path)
    run([str(tmp_path)])  # the cache of the tree as it was: entries, rules' results, the snapshot
    if how == "alone":
        run([str(tools)])  # ... and of the one file named alone
    edit(tools, "edited")
    if how == "tree-without-snapshot":  # the ordinary path: the rules' results replay, a snapshot is recorded
        monkeypatch.setattr(snapshot_run, "load_snapshot", lambda directory: None)
    calls = inject(monkeypatch, owner, name)
    paths = [str(tools)] if how == "alone" else [str(tmp_path)]
    warm = run(paths)
    assert calls, f"{_point_id(point)} was never reached: the case proves nothing"
    monkeypatch.undo()
    assert seen(warm) == seen(run(paths, use_cache=False))
    assert seen(run(paths)) == seen(run(paths, use_cache=False))  # and the next run, with the cache, too


LSP_POINTS: list[tuple[object, str]] = [
    (runner.FactsLease, "get"),
    (runner.FactsLease, "keep"),
    (kept_walk.WalkLease, "entries"),
    (kept_walk.WalkLease, "record"),
    (kept_resolution.KeptResolution, "resolve"),
]


@pytest.mark.parametrize("point", LSP_POINTS, ids=lambda point: _point_id((*point, "")))
def test_an_exception_in_what_the_language_server_keeps_gives_the_no_cache_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: tuple[object, str]
) -> None:
    owner, name = point
    monkeypatch.setattr(lsp, "PROJECT_FACTS", runner.KeptFacts())  # this test's memory, not the process's
    monkeypatch.setattr(lsp, "PROJECT_RESOLUTION", lsp.kept_resolution.KeptResolution())
    monkeypatch.setattr(lsp, "PROJECT_WALKS", kept_walk.KeptWalk())
    tools = project(tmp_path)
    path = str(tools)

    def no_cache(text: str) -> list[tuple]:
        return seen(lint(Options(paths=[path], stdin=(path, text.encode()), jobs=1, use_cache=False)))

    def in_editor(text: str) -> list[tuple]:
        return seen(lsp.lint_buffer(path, text))

    in_editor(TOOLS)  # what the server keeps: the project's facts, walks and resolution
    in_editor(TOOLS.replace("MESSAGE", "typed"))
    typed = TOOLS.replace("MESSAGE", "typed more")
    original = getattr(owner, name)
    calls = inject(monkeypatch, owner, name)
    assert in_editor(typed) == no_cache(typed)
    assert calls, f"{_point_id((owner, name, ''))} was never reached: the case proves nothing"
    assert not lsp.PROJECT_FACTS.results and not lsp.PROJECT_WALKS.listings  # what may have failed is dropped
    monkeypatch.setattr(owner, name, original)
    again = TOOLS.replace("MESSAGE", "typed again")
    assert in_editor(again) == no_cache(again)
    assert lsp.PROJECT_FACTS.results  # the next lint keeps again


def test_a_failure_the_fresh_run_has_too_is_reported_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not reuse: a bug of the run itself is raised by the fresh run as well (the CLI's exit 2), not
    hidden by running it twice."""
    project(tmp_path)
    calls = inject(monkeypatch, engine, "discover")  # called by every run, cached or not
    with pytest.raises(Injected):
        run([str(tmp_path)])
    assert len(calls) == 2  # the cached run, then the fresh one


def test_an_exception_in_the_cache_does_not_cost_the_lock_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fusion-lint lock`` and contract coverage read the per-file entries and the stat index too."""
    from fusion_lint.lock.lockfile import project_contracts

    project(tmp_path)
    project_contracts([str(tmp_path)])  # the per-file entries
    calls = inject(monkeypatch, cache.FileCache, "get")
    warm = project_contracts([str(tmp_path)])
    assert calls
    monkeypatch.undo()
    cold = project_contracts([str(tmp_path)], use_cache=False)
    assert (warm.document, warm.problems) == (cold.document, cold.problems)
    assert warm.document["tools"]  # (something was locked)
