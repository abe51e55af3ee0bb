"""The run's snapshot (issue 15: an edited warm run costs what the edit reaches): after an edit of
one tool module, only that module's items run and only its facts (and what they reach) are loaded
and resolved — counted, never timed — and the output is a run without a cache's, byte for byte, in
every format. Each kind of dependency gets a case where replaying would be stale."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from test_rule_cache import edit, project

import fusion_lint.memo.stat_index as stat_index
from fusion_lint.check.engine import Options, Report, lint
from fusion_lint.output import FORMATTERS


@pytest.fixture(autouse=True)
def not_racy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files the test wrote a moment ago count as settled (the stat index has its own tests)."""
    monkeypatch.setattr(stat_index, "RACY_S", 0.0)


def run(root: Path, use_cache: bool = True, report_unused_suppressions: bool = False) -> Report:
    return lint(
        Options(paths=[str(root)], use_cache=use_cache, jobs=1, report_unused_suppressions=report_unused_suppressions)
    )


def everything(report: Report) -> str:
    return "".join(
        FORMATTERS[name](report, show_source=False, quiet=False, statistics=True) for name in sorted(FORMATTERS)
    )


def warm_is_cold(root: Path, **options: object) -> tuple:
    """A warm run checked against a run without a cache: (snapshot used, why not, files reached,
    files loaded, definitions resolved, rule invocations, files whose items ran, (rule, item)
    pairs replayed)."""
    warm = run(root, **options)  # type: ignore[arg-type]
    taken, checked = warm.stats.snapshot, warm.stats.check
    seen = (
        taken.used,
        taken.why_not,
        set(taken.reached),
        set(taken.loaded),
        taken.resolved,
        checked.ran,
        set(checked.paths),
        checked.replayed,
    )
    cold = run(root, use_cache=False, **options)  # type: ignore[arg-type]
    assert everything(warm) == everything(cold)
    assert [d.fix for d in warm.diagnostics] == [d.fix for d in cold.diagnostics]
    return seen


def names(paths: set[str]) -> set[str]:
    return {Path(path).name for path in paths}


def recorded(root: Path) -> None:
    project(root)
    run(root)  # cold: records the snapshot


def answered_after(root: Path, path: str, old: str, new: str) -> set[str]:
    """Edit, then check the warm run was answered from the snapshot: the files it re-checked."""
    edit(root / path, old, new)
    used, why, reached, *_ = warm_is_cold(root)
    assert used, why
    return names(reached)


def test_an_edited_tool_module_loads_resolves_and_checks_only_what_it_reaches(tmp_path: Path) -> None:
    recorded(tmp_path)
    edit(tmp_path / "gadgets.py", 'if item_id == "x":', 'if item_id == "y":')
    used, why, reached, loaded, resolved, ran, paths, replayed = warm_is_cold(tmp_path)
    assert used, why
    assert names(reached) == {"gadgets.py"}
    assert names(loaded) == {"gadgets.py", "contracts.py", "services.py"}  # never widgets.py, gizmos.py
    assert resolved == 3  # gadgets' three tools, of nine
    assert names(paths) == {"gadgets.py"} and ran > 0
    assert replayed > ran  # every other (rule, item) pair answered from the snapshot


def test_a_second_edit_answers_from_the_updated_snapshot(tmp_path: Path) -> None:
    recorded(tmp_path)
    edit(tmp_path / "gadgets.py", 'if item_id == "x":', 'if item_id == "y":')
    assert warm_is_cold(tmp_path)[0]
    # the snapshot's delta holds gadgets.py's records now
    assert answered_after(tmp_path, "gizmos.py", 'if item_id == "x":', "if not item_id:") == {"gizmos.py"}
    assert answered_after(tmp_path, "gadgets.py", 'if item_id == "y":', 'if item_id == "z":') == {"gadgets.py"}


def test_a_delta_of_another_base_is_void(tmp_path: Path) -> None:
    """The delta of the base before a whole run must not be applied to the base that run wrote."""
    recorded(tmp_path)
    edit(tmp_path / "gadgets.py", 'if item_id == "x":', 'if item_id == "y":')
    assert warm_is_cold(tmp_path)[0]  # writes a delta
    edit(tmp_path / "services.py", 'raise ValueError("empty id")', 'raise KeyError("empty id")')
    past = time.time() - 10  # (``edit`` moves the mtime ahead: a stat from the future is never trusted)
    os.utime(tmp_path / "services.py", (past, past))
    assert not warm_is_cold(tmp_path)[0]  # the ordinary path: a new base
    assert answered_after(tmp_path, "gizmos.py", 'if item_id == "x":', "if not item_id:") == {"gizmos.py"}


def test_a_noqa_added_in_the_edited_file_silences_its_finding(tmp_path: Path) -> None:
    recorded(tmp_path)
    edit(tmp_path / "gadgets.py", 'raise ctx.fail("gadget_gone")', 'raise ctx.fail("gadget_gone")  # noqa: FL203')
    used, why, *_ = warm_is_cold(tmp_path)
    assert used, why
    assert warm_is_cold(tmp_path, report_unused_suppressions=True)[1] == "no snapshot of this frame"


def test_unused_suppressions_are_judged_in_files_the_edit_does_not_reach(tmp_path: Path) -> None:
    project(tmp_path)
    edit(tmp_path / "widgets.py", "return fetch(item_id)", "return fetch(item_id)  # noqa: FL300")
    run(tmp_path, report_unused_suppressions=True)
    edit(tmp_path / "gadgets.py", 'if item_id == "x":', 'if item_id == "y":')
    used, why, reached, *_ = warm_is_cold(tmp_path, report_unused_suppressions=True)
    assert used, why
    assert names(reached) == {"gadgets.py"}


def test_a_finding_merged_across_definitions_still_names_every_one(tmp_path: Path) -> None:
    """The shared entry's FL107 names every tool holding it (six, in three files), with its fix;
    a body edit of one holder changes nothing the entry rules read of it: replayed."""
    project(tmp_path)
    edit(tmp_path / "contracts.py", 'reason="upstream_down"', 'reason="UpstreamDown"')
    run(tmp_path)
    edit(tmp_path / "gizmos.py", 'if item_id == "x":', 'if item_id == "y":')
    used, why, *_ = warm_is_cold(tmp_path)
    assert used, why
    merged = [d for d in run(tmp_path).diagnostics if d.code == "FL107" and "UpstreamDown" in d.message]
    assert len(merged) == 1 and merged[0].message.count("tool '") == 6 and merged[0].fix is not None


def test_an_edit_of_what_a_shared_entry_reads_is_not_replayed(tmp_path: Path) -> None:
    """A holder's contract changed around the shared entry (its place, its neighbours' reasons)."""
    project(tmp_path)
    edit(tmp_path / "contracts.py", 'reason="upstream_down"', 'reason="UpstreamDown"')
    run(tmp_path)
    edit(
        tmp_path / "gizmos.py",
        '@tool("get_gizmo", errors=[\n    *SHARED,',
        '@tool("get_gizmo", errors=[\n    ErrorContract(reason="widget_missing", code=JsonRpcErrorCode.NOT_FOUND, when="w", recovery="Call list_gizmos to find a valid id now."),\n    *SHARED,',
    )
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why.startswith("what a shared item reads")


def test_a_service_edit_takes_the_ordinary_path(tmp_path: Path) -> None:
    recorded(tmp_path)
    edit(tmp_path / "services.py", 'raise ValueError("empty id")', 'raise KeyError("empty id")')
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why.startswith("a skipped or loaded file moved")


def test_a_caller_guarding_a_shared_service_call_is_not_replayed(tmp_path: Path) -> None:
    """FL300 at the service's raise names the tools it escapes to: a handler that now catches it
    changes what that function's rules read of gadgets.py."""
    recorded(tmp_path)
    edit(
        tmp_path / "gadgets.py",
        "    return fetch(item_id)",
        "    try:\n        return fetch(item_id)\n    except ValueError:\n        return {}",
    )
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why.startswith("what a shared item reads")


def test_an_edit_of_the_shared_contract_is_checked_against_every_holder(tmp_path: Path) -> None:
    recorded(tmp_path)
    edit(tmp_path / "contracts.py", "Wait a minute, then call ping_upstream", "Wait a minute, then call ping_upstreams")
    used, why, reached, *_ = warm_is_cold(tmp_path)  # FL401 now fires on the entry, naming every holder
    assert used, why  # a small project: every file it reaches is re-checked, which is all of them
    assert names(reached) == {"contracts.py", "widgets.py", "gadgets.py", "gizmos.py"}


def test_a_renamed_tool_changes_recovery_hints_elsewhere(tmp_path: Path) -> None:
    recorded(tmp_path)
    edit(tmp_path / "gadgets.py", '@tool("get_gadget"', '@tool("fetch_gadget"')
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why == "the tool vocabulary changed"


def test_a_renamed_handler_argument_changes_the_vocabulary(tmp_path: Path) -> None:
    recorded(tmp_path)
    edit(
        tmp_path / "gadgets.py",
        "async def list_gadgets(page: int, ctx)",
        "async def list_gadgets(page_number: int, ctx)",
    )
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why == "the tool vocabulary changed"


def test_new_and_deleted_files_take_the_ordinary_path(tmp_path: Path) -> None:
    recorded(tmp_path)
    (tmp_path / "more.py").write_text((tmp_path / "gizmos.py").read_text().replace("gizmo", "doohickey"))
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why in ("files added, deleted or changed kind", "no snapshot of this frame")  # (the report set)
    (tmp_path / "more.py").unlink()
    (tmp_path / "gizmos.py").unlink()
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why in ("files added, deleted or changed kind", "no snapshot of this frame")


def test_a_reach_into_a_file_the_last_run_never_read(tmp_path: Path) -> None:
    recorded(tmp_path)
    (tmp_path / "helpers.py").write_text(
        "def check(item_id):\n    if not item_id:\n        raise ValueError('no id')\n"
    )
    run(tmp_path)  # the new (skipped) file recorded
    edit(tmp_path / "gadgets.py", "from services import fetch", "from services import fetch\nfrom helpers import check")
    edit(tmp_path / "gadgets.py", "    return fetch(item_id)", "    check(item_id)\n    return fetch(item_id)")
    used, why, *_ = warm_is_cold(tmp_path)
    assert not used and why == "the edit reaches a file the last run did not read"


def test_an_importer_of_the_edited_module_is_reached_too(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "reexport.py").write_text("from gadgets import get_gadget\nimport mcp_fusion\n")
    run(tmp_path)
    edit(tmp_path / "gadgets.py", 'if item_id == "x":', 'if item_id == "y":')
    used, why, reached, *_ = warm_is_cold(tmp_path)
    assert used, why
    assert names(reached) == {"gadgets.py", "reexport.py"}
