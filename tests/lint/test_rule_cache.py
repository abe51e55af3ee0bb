"""The rules' findings cached per checked item (issue 15, point 2): an edit re-runs the rules only
for the definitions, entries and functions whose resolved inputs changed, and the output is the
one a run without a cache gives, byte for byte (order, merged findings, suppressions, fixes).

What ran is counted in the report's stats (``report.stats.check``), never timed."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

import fusion_lint.check.engine as engine
import fusion_lint.memo.stat_index as stat_index
from fusion_lint.check.engine import Options, Report, Selection, lint
from fusion_lint.output import FORMATTERS
from fusion_lint.rules import all_rules

CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SHARED = [
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.INTERNAL_ERROR, when="The upstream is down",
                  recovery="Wait a minute, then call ping_upstream to check it is back."),
]
"""

SERVICES = """\
def fetch(item_id: str) -> dict:
    if not item_id:
        raise ValueError("empty id")
    return {"id": item_id}
"""

TOOLS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool

from contracts import SHARED
from services import fetch


@tool("get_{name}", errors=[
    *SHARED,
    ErrorContract(reason="{name}_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No {name} has that id",
                  recovery="Call list_{name}s to find a valid id, then call get_{name} again."),
])
async def get_{name}(item_id: str, ctx) -> dict:
    if item_id == "x":
        raise ctx.fail("{name}_gone")
    return fetch(item_id)


@tool("list_{name}s", errors=[
    *SHARED,
    ErrorContract(reason="BadPage", code=JsonRpcErrorCode.INVALID_PARAMS, when="The page is out of range",
                  recovery="Call {other} with the first page."),
])
async def list_{name}s(page: int, ctx) -> list:
    raise ctx.fail("BadPage")


@tool("ping_upstream", errors=[])
async def ping_upstream_{name}() -> str:
    return "ok"
"""


@pytest.fixture(autouse=True)
def not_racy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files the test wrote a moment ago count as settled (the stat index has its own tests)."""
    monkeypatch.setattr(stat_index, "RACY_S", 0.0)


def project(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (root / "contracts.py").write_text(CONTRACTS)
    (root / "services.py").write_text(SERVICES)
    (root / "widgets.py").write_text(TOOLS.format(name="widget", other="get_gadget"))
    (root / "gadgets.py").write_text(TOOLS.format(name="gadget", other="get_widget"))
    (root / "gizmos.py").write_text(TOOLS.format(name="gizmo", other="get_widget"))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))
    # A new mtime for certain: the stat index must see the edit whatever the clock's resolution.
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


def run(root: Path, use_cache: bool = True, select: list[str] | None = None) -> Report:
    selection = Selection(select=select) if select is not None else Selection()
    return lint(Options(paths=[str(root)], use_cache=use_cache, jobs=1, selection=selection))


def shown(report: Report) -> str:
    """The report as users see it, fixes included (JSON carries every fix's edits)."""
    return "".join(
        FORMATTERS[name](report, show_source=False, quiet=False, statistics=False) for name in ("json", "text", "sarif")
    )


def same_as_cold(root: Path, select: list[str] | None = None) -> Report:
    """A warm run, checked against a run without any cache: the same output, byte for byte."""
    warm = run(root, select=select)
    cold = run(root, use_cache=False, select=select)
    assert shown(warm) == shown(cold)
    assert [d.fix for d in warm.diagnostics] == [d.fix for d in cold.diagnostics]
    return warm


def test_an_edit_reruns_the_rules_of_what_it_changed_only(tmp_path: Path) -> None:
    project(tmp_path)
    first = run(tmp_path).stats.check
    everything = first.ran
    assert everything > 0 and first.replayed == 0
    # A change of the handler's body in one module: its items re-run, and those whose inputs hold
    # its definitions (the shared entry they hold, the service they reach); the others replay.
    edit(tmp_path / "gadgets.py", 'raise ctx.fail("gadget_gone")', 'return {"gone": True}')
    checked = same_as_cold(tmp_path).stats.check
    assert checked.paths <= {str(tmp_path / name) for name in ("gadgets.py", "contracts.py", "services.py")}
    assert str(tmp_path / "gadgets.py") in checked.paths
    assert 0 < checked.ran < everything / 2
    assert checked.ran + checked.replayed == everything


def test_a_comment_only_edit_reruns_only_that_file(tmp_path: Path) -> None:
    """The facts of an edited file are keyed by its content: its own items re-run (a comment may
    be a suppression), nothing of the others but what holds its definitions."""
    project(tmp_path)
    run(tmp_path)
    edit(tmp_path / "gizmos.py", "async def list_gizmos", "# a comment\nasync def list_gizmos")
    ran = same_as_cold(tmp_path).stats.check.paths
    assert str(tmp_path / "widgets.py") not in ran
    assert str(tmp_path / "gadgets.py") not in ran


def test_an_edit_of_a_service_reruns_every_definition_reaching_it(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)
    edit(tmp_path / "services.py", 'raise ValueError("empty id")', 'raise KeyError("empty id")')
    ran = same_as_cold(tmp_path).stats.check.paths
    assert {str(tmp_path / name) for name in ("widgets.py", "gadgets.py", "gizmos.py")} <= ran


def test_an_edit_of_the_shared_contract_reruns_every_definition_holding_it(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)
    edit(tmp_path / "contracts.py", "Wait a minute, then call", "Wait, then call")
    warm = same_as_cold(tmp_path)
    ran = warm.stats.check.paths
    assert {str(tmp_path / name) for name in ("widgets.py", "gadgets.py", "gizmos.py", "contracts.py")} <= ran
    assert any("Wait, then call" in d.message or d.path.endswith("contracts.py") for d in warm.diagnostics)


def test_a_renamed_tool_invalidates_recovery_hints_naming_it_elsewhere(tmp_path: Path) -> None:
    """FL401 reads the tool vocabulary: renaming ``get_gadget`` in gadgets.py makes the unchanged
    widgets.py and gizmos.py name a tool that no longer exists."""
    project(tmp_path)
    before = run(tmp_path)
    assert not [d for d in before.diagnostics if d.code == "FL401" and "get_gadget" in d.message]
    edit(tmp_path / "gadgets.py", '@tool("get_gadget"', '@tool("fetch_gadget"')
    warm = same_as_cold(tmp_path)
    unknown = [d for d in warm.diagnostics if d.code == "FL401" and "get_gadget" in d.message]
    assert {os.path.basename(d.path) for d in unknown} >= {"widgets.py"}


def test_a_change_of_selection_or_config_is_a_different_key(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)
    narrow = same_as_cold(tmp_path, select=["FL107", "FL203"])
    assert {d.code for d in narrow.diagnostics} <= {"FL107", "FL203"} and narrow.diagnostics
    assert narrow.stats.check.replayed == 0  # other rules, other keys
    everything = same_as_cold(tmp_path, select=["ALL"])
    assert len(everything.diagnostics) > len(narrow.diagnostics)
    # A config setting the rules read: recovery-min-words (FL112) from 5 to 12 words.
    before = {d.message for d in run(tmp_path).diagnostics if d.code == "FL112"}
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\nrecovery-min-words = 12\n")
    after = {d.message for d in same_as_cold(tmp_path).diagnostics if d.code == "FL112"}
    assert after != before and after


def test_replayed_fixes_are_the_fixes_a_cold_run_builds(tmp_path: Path) -> None:
    """FL107's rename of ``BadPage`` (a fix of the file the entry is written in) replays with its
    edits; an edit of that file is a new text, so the fix is built again."""
    project(tmp_path)
    run(tmp_path)
    edit(tmp_path / "gizmos.py", "async def list_gizmos", "# a comment\nasync def list_gizmos")
    warm = same_as_cold(tmp_path)
    assert str(tmp_path / "widgets.py") not in warm.stats.check.paths
    fixed = [d for d in warm.diagnostics if d.code == "FL107" and d.fix is not None]
    assert {os.path.basename(d.path) for d in fixed} == {"widgets.py", "gadgets.py", "gizmos.py"}
    edit(tmp_path / "widgets.py", "async def list_widgets", "\n\nasync def list_widgets")
    same_as_cold(tmp_path)


@pytest.mark.parametrize("scenario", ["suppress", "new module", "removed module", "reason declared", "back again"])
def test_warm_output_is_the_cold_output_after_each_edit(tmp_path: Path, scenario: str) -> None:
    project(tmp_path)
    run(tmp_path)
    widgets = tmp_path / "widgets.py"
    if scenario == "suppress":
        edit(widgets, 'raise ctx.fail("widget_gone")', 'raise ctx.fail("widget_gone")  # noqa: FL203')
    elif scenario == "new module":
        (tmp_path / "doohickeys.py").write_text(TOOLS.format(name="doohickey", other="get_gizmo"))
    elif scenario == "removed module":
        (tmp_path / "gizmos.py").unlink()
    elif scenario == "reason declared":
        edit(tmp_path / "contracts.py", 'reason="upstream_down"', 'reason="widget_gone"')
    else:
        original = widgets.read_text()
        edit(widgets, "get_widget again", "get_widget once more")
        same_as_cold(tmp_path)
        widgets.write_text(original)
    same_as_cold(tmp_path)


def test_a_rule_that_raises_is_never_replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fusion_lint.rules import fl107_error_contract_reason_format as fl107

    project(tmp_path)

    def broken(self: object, entry: object, project: object) -> list:
        raise RuntimeError("boom")

    monkeypatch.setattr(fl107.ErrorContractReasonFormat, "check_entry", broken)
    first = run(tmp_path)
    edit(tmp_path / "services.py", "empty id", "an empty id")
    second = run(tmp_path)
    assert [d.message for d in first.diagnostics if d.code == "FL999"]
    assert [d.message for d in second.diagnostics if d.code == "FL999"] == [
        d.message for d in first.diagnostics if d.code == "FL999"
    ]


# ----- what the rules read: the inputs the keys cover ----------------------------------------------

RULES = Path(engine.__file__).resolve().parent / "rules"
# Where a rule may go from the item it checks: the links between definitions, entries and functions,
# and the project (the second argument, ``project``). Each use is covered by the key of its scope
# (``rule_cache``): a new use must be added to the key there, then here.
LINKS = {"holders", "callers", "reached_by", "handler_of"}
COVERED = {
    "_shared.py": {"holders", "handler_of", "callers"},  # entry_label: the first holder; escapes_to: upward
    "fl107_error_contract_reason_format.py": {"holders"},  # the rename's fix: every holder's reach
    "fl112_error_contract_recovery_min_words.py": {"project.recovery_min_words"},
    "fl203_error_contract_reason_undeclared.py": {"reached_by"},
    "fl208_tool_without_contract.py": {"project.function_view", "project.files"},  # reads_callers; its file
    "fl301_prefer_error_factory.py": {"handler_of", "project.files", "project.runtime_modules"},
    "fl302_preserve_cause_on_rethrow.py": {"handler_of"},
    "fl303_no_stringify_upstream_error.py": {"handler_of"},
    "fl304_swallowed_cancellation.py": {"handler_of"},
    "fl305_protocol_error_in_tool.py": {"handler_of"},
    "fl306_error_returned_as_success.py": {"handler_of"},
    "fl307_exception_text_to_model.py": {"handler_of"},
    "fl400_recovery_names_internal.py": {"project.vocabulary"},
    "fl401_recovery_unknown_tool.py": {"project.vocabulary"},
}


def navigation(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "project":
                found.add(f"project.{node.attr}")
            elif node.attr in LINKS or node.attr in ("function_view", "vocabulary"):
                found.add(node.attr)
    return found


@pytest.mark.parametrize("module", sorted(p.name for p in RULES.glob("*.py") if p.name != "__init__.py"))
def test_the_rules_reach_the_project_only_where_the_keys_cover(module: str) -> None:
    assert navigation(RULES / module) <= COVERED.get(module, set()), (
        f"{module} reads more of the resolved project than its cache key covers: extend rule_cache's key "
        "for its scope, then COVERED here"
    )


def test_only_entry_rules_read_the_vocabulary_and_only_fl208_the_callers_of_a_reach() -> None:
    """The vocabulary is in the entries' keys, the callers of what a handler reaches in the keys
    of the definition rules that say they read them: no other rule may read them."""
    for rule in all_rules():
        used = navigation(Path(__import__(rule.__module__, fromlist=["_"]).__file__))
        if "project.vocabulary" in used:
            assert rule.checks() == ("entry",), rule.code
        if "project.function_view" in used:
            assert rule.checks() == ("definition",) and rule.reads_callers, rule.code
        source = Path(__import__(rule.__module__, fromlist=["_"]).__file__).read_text(encoding="utf-8")
        if "escapes_to" in source:  # walks the callers upward: a function's key, or reads_callers
            assert rule.checks() == ("function",) or rule.reads_callers, rule.code
