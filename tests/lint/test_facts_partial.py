"""A lint of one buffer (the language server's, ``--stdin-filename``) resolves in full only the files
whose imports lead to the buffer, from the facts in memory (issue 15, point 4), and says exactly
what a lint resolving everything says; a skipped file or one outside the walk that a name leads
to is followed through its facts, and where the graph cannot tell (such a file mounts a server or
lists tools, a reported file is not analysed) it resolves everything.

What was resolved in full is counted in the report's stats (``report.stats.partial.full_paths``,
``report.stats.resolve``), never timed."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_partial_runs import MODULES, TOOLS_PER_MODULE, rendered
from test_partial_runs import write_project as partial_project

import fusion_lint.check.facts_partial as facts_partial
import fusion_lint.lsp.server as lsp
from fusion_lint.check.engine import Options, Report, lint


def write_project(root: Path) -> Path:
    """test_partial_runs' package of tool modules over shared contracts and a service, without
    its skipped re-export (every file is analysed)."""
    partial_project(root)
    (root / "pkg" / "hub.py").unlink()
    (root / "pkg" / "extra.py").unlink()
    return root


def write_extra(root: Path, imports: str, handler: str) -> None:
    """pkg/extra.py: a tool whose handler calls another module's handler it imports."""
    (root / "pkg" / "extra.py").write_text(
        f"from mcp_fusion import Context, tool\n{imports}\n\n\n"
        '@tool("extra_item", description="Again", errors=[])\n'
        "async def extra_item(item_id: str, ctx: Context) -> dict:\n"
        f"    return await {handler}(item_id, ctx)\n",
        encoding="utf-8",
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(write_project(tmp_path))
    return tmp_path


def buffer_lint(path: Path, partial: bool, monkeypatch: pytest.MonkeyPatch, text: str = "") -> Report:
    monkeypatch.setattr(facts_partial, "FACTS_PARTIAL", partial)
    return lint(lsp.buffer_options(str(path), text or path.read_text(encoding="utf-8")))


def test_a_tool_module_buffer_resolves_only_its_definitions(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = project / "pkg" / "tools" / "m3.py"
    edited = target.read_text(encoding="utf-8").replace(
        'raise ctx.fail("item_missing_3")', 'ctx.fail("item_missing_3")'
    )
    whole = buffer_lint(target, False, monkeypatch, edited)
    assert whole.stats.partial.full_paths is None and whole.stats.resolve.vocabulary_only == 0
    report = buffer_lint(target, True, monkeypatch, edited)
    assert rendered(report) == rendered(whole) and report.diagnostics
    assert report.stats.partial.full_paths == {str(target)}
    assert report.stats.resolve.full == TOOLS_PER_MODULE
    assert report.stats.resolve.vocabulary_only == TOOLS_PER_MODULE * (MODULES - 1)


def test_the_language_server_lint_takes_the_same_path(project: Path) -> None:
    target = project / "pkg" / "tools" / "m5.py"
    report = lsp.lint_buffer(str(target), target.read_text(encoding="utf-8"))
    assert report.stats.partial.full_paths == {str(target)}
    assert report.stats.resolve.full == TOOLS_PER_MODULE


@pytest.mark.parametrize("shared", ["services.py", "contracts.py"])
def test_a_shared_module_buffer_resolves_everything_importing_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, shared: str
) -> None:
    target = project / "pkg" / shared
    everything = rendered(buffer_lint(target, False, monkeypatch))
    partial = buffer_lint(target, True, monkeypatch)
    assert rendered(partial) == everything
    # Every tool module imports it: all of them are resolved in full.
    tools = {str(project / "pkg" / "tools" / f"m{i}.py") for i in range(MODULES)}
    assert partial.stats.partial.full_paths == tools | {str(target)}
    assert partial.stats.resolve.full == TOOLS_PER_MODULE * MODULES and partial.stats.resolve.vocabulary_only == 0


def test_an_importer_of_the_buffer_is_resolved_in_full(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_extra(project, "from .tools import m1", "m1.get_item_1")
    target = project / "pkg" / "tools" / "m1.py"
    everything = rendered(buffer_lint(target, False, monkeypatch))
    partial = buffer_lint(target, True, monkeypatch)
    assert rendered(partial) == everything
    # ``from .tools import m1`` names the package ``pkg.tools`` too: every module under it may be
    # reached from extra.py, which is the only file that may report into m1 besides m1.
    assert partial.stats.partial.full_paths == {str(target), str(project / "pkg" / "extra.py")}
    assert partial.stats.resolve.full == TOOLS_PER_MODULE + 1


def test_a_skipped_file_that_imports_is_followed_through_its_facts(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # hub.py names no runtime (the pre-scan skips it) and re-exports m1's handler to extra.py: the
    # graph loads its facts to see that extra.py reaches m1 through it.
    (project / "pkg" / "hub.py").write_text("from .tools.m1 import get_item_1\n", encoding="utf-8")
    write_extra(project, "from pkg.hub import get_item_1", "get_item_1")
    target = project / "pkg" / "tools" / "m1.py"
    everything = rendered(buffer_lint(target, False, monkeypatch))
    partial = buffer_lint(target, True, monkeypatch)
    assert rendered(partial) == everything
    assert partial.stats.partial.full_paths == {
        str(target),
        str(project / "pkg" / "extra.py"),
        str(project / "pkg" / "hub.py"),
    }
    assert partial.stats.partial.looked_at == [str(project / "pkg" / "hub.py")]
    assert partial.stats.resolve.full == TOOLS_PER_MODULE + 1


def test_a_skipped_file_that_mounts_a_server_makes_the_lint_resolve_everything(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether a resolution loads hub.py decides whether its mount prefix is in the vocabulary.
    (project / "pkg" / "hub.py").write_text(
        "from .tools.m1 import get_item_1\nfrom elsewhere import build\n\napp = build()\n"
        'app.mount(other, prefix="hub")\n',
        encoding="utf-8",
    )
    write_extra(project, "from pkg.hub import get_item_1", "get_item_1")
    target = project / "pkg" / "tools" / "m3.py"
    everything = rendered(buffer_lint(target, False, monkeypatch))
    partial = buffer_lint(target, True, monkeypatch)
    assert rendered(partial) == everything
    assert partial.stats.partial.full_paths is None and partial.stats.resolve.vocabulary_only == 0


def test_a_module_outside_the_walk_is_followed_through_its_facts(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "pyproject.toml").write_text('[tool.fusion-lint]\nexclude = ["pkg/vendored"]\n', encoding="utf-8")
    (project / "pkg" / "vendored").mkdir()
    (project / "pkg" / "vendored" / "__init__.py").write_text("", encoding="utf-8")
    relay = project / "pkg" / "vendored" / "relay.py"
    relay.write_text("from pkg.tools.m2 import get_item_2\n", encoding="utf-8")
    write_extra(project, "from pkg.vendored.relay import get_item_2", "get_item_2")
    target = project / "pkg" / "tools" / "m2.py"
    everything = rendered(buffer_lint(target, False, monkeypatch))
    partial = buffer_lint(target, True, monkeypatch)
    assert rendered(partial) == everything
    assert partial.stats.partial.full_paths == {str(target), str(project / "pkg" / "extra.py"), str(relay)}


def test_a_run_naming_files_on_disk_is_not_a_buffer_lint(project: Path) -> None:
    report = lint(Options(paths=[str(project / "pkg" / "tools" / "m3.py")], jobs=1, use_cache=True))
    assert report.stats.partial.full_paths is None and report.stats.resolve.vocabulary_only == 0


def test_a_skipped_file_no_import_leads_to_does_not_count(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A script the pre-scan skips (it names no runtime), importing a tool module: the index never
    # loads it (no analysed file's name leads to it), so it changes nothing a lint resolves.
    (project / "scripts").mkdir()
    (project / "scripts" / "report.py").write_text("import json\nfrom pkg.tools import m3\n", encoding="utf-8")
    target = project / "pkg" / "tools" / "m3.py"
    everything = rendered(buffer_lint(target, False, monkeypatch))
    partial = buffer_lint(target, True, monkeypatch)
    assert rendered(partial) == everything
    assert partial.stats.partial.full_paths == {str(target)}
