"""A cold one-file run (pre-commit's ``fusion-lint one.py --no-cache``) reads the rest of the project
with light facts and resolves in full only what can report into the named file (issue 15, point 5),
and says exactly what a run resolving everything says, in every format.

What was read lightly, loaded in full later and resolved is counted in the report's stats
(``report.stats.partial``, ``report.stats.resolve``), never timed."""

from __future__ import annotations

from pathlib import Path

import pytest

import fusion_lint.check.partial_run as partial_run
from fusion_lint.check.engine import Options, Report, Selection, lint
from fusion_lint.output import FORMATTERS
from fusion_lint.project.partial import reaching_files
from fusion_lint.source.pipeline import analyze_file

MODULES = 14  # enough for the parallel workers (``runner.PARALLEL_THRESHOLD``)
TOOLS_PER_MODULE = 2

CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SHARED = [
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.INTERNAL_ERROR, when="The upstream is down",
                  thrown_by="service", recovery="Wait a minute, then call the same tool again."),
]
"""

SERVICES = """\
from mcp_fusion import service_unavailable


async def fetch(item_id: str) -> dict:
    if not item_id:
        raise service_unavailable("upstream down", data={"reason": "upstream_down"})
    return {"id": item_id}
"""

TOOL_MODULE = '''\
"""Tool module {i}."""
import json

from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, McpError, tool

from pkg.contracts import SHARED
from pkg.services import fetch


@tool("get_item_{i}", description="Fetch an item", errors=[
    *SHARED,
    ErrorContract(reason="item_missing_{i}", code=JsonRpcErrorCode.NOT_FOUND, when="No such item",
                  recovery="Call list_items_{other} to find valid ids, then call get_item_{i} again."),
    ErrorContract(reason="item_locked_{i}", code=JsonRpcErrorCode.CONFLICT, when="The item is locked",
                  recovery="Call list_itemz_{other} to see who holds it, then call get_item_{i} again."),
])
async def get_item_{i}(item_id: str, ctx: Context, verbose: bool = False) -> dict:
    """Fetch one item."""
    try:
        found = await fetch(item_id)
    except KeyError as exc:
        raise McpError(JsonRpcErrorCode.NOT_FOUND, json.dumps({{"id": item_id}}), cause=exc)
    if not found:
        raise ctx.fail("item_missing_{i}")
    return found


@tool("list_items_{i}", description="List the items", errors=[*SHARED])
async def list_items_{i}(page: int, ctx: Context) -> list:
    """List items."""
    return [await fetch(str(page))]
'''

HUB = "from .tools.m1 import get_item_1  # re-exported for the extras\n"

EXTRA = '''\
from mcp_fusion import Context, tool
from pkg.hub import (
    get_item_1,
)


@tool("extra_item", description="The first module's item, again", errors=[])
async def extra_item(item_id: str, ctx: Context) -> dict:
    """Calls another module's handler through a module the pre-scan skips."""
    return await get_item_1(item_id, ctx)
'''

FORMATS = ("text", "json", "sarif", "github", "junit")


def write_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n", encoding="utf-8")
    package = root / "pkg"
    (package / "tools").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (package / "contracts.py").write_text(CONTRACTS, encoding="utf-8")
    (package / "services.py").write_text(SERVICES, encoding="utf-8")
    (package / "hub.py").write_text(HUB, encoding="utf-8")
    (package / "extra.py").write_text(EXTRA, encoding="utf-8")
    for i in range(MODULES):
        source = TOOL_MODULE.format(i=i, other=(i + 5) % MODULES)
        (package / "tools" / f"m{i}.py").write_text(source, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(write_project(tmp_path))
    return tmp_path


def run(target: str, partial: bool, monkeypatch: pytest.MonkeyPatch, use_cache: bool = False) -> Report:
    monkeypatch.setattr(partial_run, "PARTIAL_RUNS", partial)
    return lint(Options(paths=[target], selection=Selection(select=["ALL"]), use_cache=use_cache))


def rendered(report: Report) -> str:
    return "".join(FORMATTERS[name](report, show_source=False, quiet=False, statistics=False) for name in FORMATS)


def test_a_tool_module_resolves_only_its_definitions(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = "pkg/tools/m3.py"
    whole = run(target, False, monkeypatch)
    assert whole.stats.resolve.vocabulary_only == 0
    report = run(target, True, monkeypatch)
    assert rendered(report) == rendered(whole)
    counts, resolved = report.stats.partial, report.stats.resolve
    assert counts.full_paths == {str(project / target)}
    assert resolved.full == TOOLS_PER_MODULE
    assert resolved.vocabulary_only == TOOLS_PER_MODULE * (MODULES - 1) + 1  # the other modules, extra.py
    # Every other analysed file was read lightly; the one whose function bodies the reported
    # handlers reach (the services) was loaded in full after all, and nothing else.
    tools = {str(project / "pkg" / "tools" / f"m{i}.py") for i in range(MODULES) if i != 3}
    assert tools | {str(project / "pkg" / "extra.py")} <= counts.light
    assert counts.upgraded == [str(project / "pkg" / "services.py")]
    # The vocabulary still holds every tool: a name from a light file is known, a typo gets its suggestion.
    messages = [d.message for d in report.diagnostics]
    assert not any("list_items_8" in m and "FL400" in m for m in messages)
    assert any("list_itemz_8" in m and "list_items_8" in m for m in messages)


def test_a_handler_reached_through_a_skipped_re_export_resolves_its_reacher(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = "pkg/tools/m1.py"
    everything = run(target, False, monkeypatch)
    report = run(target, True, monkeypatch)
    assert rendered(report) == rendered(everything)
    # extra.py spells only ``hub``, a module the pre-scan skips, which spells ``m1``.
    assert str(project / "pkg" / "extra.py") in (report.stats.partial.full_paths or set())
    assert any("extra_item" in d.message and d.path.endswith("m1.py") for d in report.diagnostics)


@pytest.mark.parametrize("target", ["pkg/services.py", "pkg/contracts.py", "pkg/__init__.py", "pkg/hub.py"])
def test_a_shared_module_resolves_everything_that_reaches_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    whole = run(target, False, monkeypatch)
    partial = run(target, True, monkeypatch)
    assert rendered(partial) == rendered(whole)
    reaching = partial.stats.partial.full_paths
    if target.endswith("hub.py"):
        assert reaching == {str(project / target), str(project / "pkg" / "extra.py")}
    else:  # every tool module imports it (or its package): past the limit, all is resolved
        assert reaching is None and partial.stats.resolve.full == whole.stats.resolve.full


def test_a_one_file_run_says_what_the_whole_tree_says_there(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = run(".", True, monkeypatch)
    assert whole.stats.partial.full_paths is None and not whole.stats.partial.light
    for target in ("pkg/tools/m0.py", "pkg/tools/m1.py", "pkg/extra.py"):
        alone = run(target, True, monkeypatch)
        expected = [d for d in whole.diagnostics if d.path == str(project / target)]
        assert [(d.code, d.span, d.message) for d in alone.diagnostics] == [
            (d.code, d.span, d.message) for d in expected
        ]
        assert expected


def test_light_facts_are_never_cached(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = "pkg/tools/m3.py"
    partial = run(target, True, monkeypatch)  # (first: had it cached light facts, the next would read them)
    cached = run(target, True, monkeypatch, use_cache=True)
    assert rendered(partial) == rendered(cached)
    assert not cached.stats.partial.light and cached.stats.partial.full_paths is None
    again = run(".", True, monkeypatch, use_cache=True)  # every file's facts from the cache: all full
    assert again.diagnostics == run(".", False, monkeypatch).diagnostics


def test_light_facts_hold_every_module_level_fact(project: Path) -> None:
    """What the vocabulary and other files' resolution read is the same in light facts; only the
    bodies that cannot add to the module are left out."""
    helper = project / "pkg" / "helper.py"
    helper.write_text(HELPER, encoding="utf-8")
    (project / "pkg" / "late.py").write_text(LATE_IMPORT, encoding="utf-8")
    paths = [
        *sorted((project / "pkg").rglob("*.py")),
        *sorted(Path(__file__).parents[2].joinpath("fixtures").rglob("*.py")),
    ]
    skipped = 0
    for path in paths:
        full = analyze_file(str(path), ("mcp_fusion",), prescan=False).facts
        light = analyze_file(str(path), ("mcp_fusion",), prescan=False, light=True).facts
        assert full is not None and light is not None and not full.light
        for name in (
            "imports",
            "runtime_names",
            "bindings",
            "definitions",
            "servers",
            "mount_prefixes",
            "listed_tools",
            "classes",
            "helper_calls",
            "imports_framework",
            "imported_modules",
        ):
            assert getattr(light, name) == getattr(full, name), (path, name)
        assert light.functions.keys() == full.functions.keys()
        for qualname, function in full.functions.items():
            lightly = light.functions[qualname]
            assert (lightly.params, lightly.context_param, lightly.decorated_by) == (
                function.params,
                function.context_param,
                function.decorated_by,
            ), (path, qualname)
            skipped += lightly != function
    assert skipped >= MODULES * TOOLS_PER_MODULE
    light = analyze_file(str(helper), ("mcp_fusion",), prescan=False, light=True).facts
    assert light is not None and len(light.definitions) == 1  # the nested ``ping``, found in a body walked


# A framework imported only inside a function: the module imports it all the same (its servers).
LATE_IMPORT = """\
def serve() -> None:
    from mcp.server.fastmcp import FastMCP
    FastMCP("late").run()
"""


# A body that registers (a registration helper, a nested decorated def): walked even when light.
HELPER = '''\
from mcp.server.fastmcp import FastMCP


def register(mcp: FastMCP) -> None:
    """Registers its tools on the server it is handed."""
    @mcp.tool()
    def ping() -> str:
        return "pong"
'''


def test_the_closure_follows_spellings_and_relative_imports() -> None:
    texts = {
        "/p/pkg/__init__.py": b"from .a import thing\n",
        "/p/pkg/a.py": b"thing = 1\n",
        "/p/pkg/b.py": b"from . import thing\n",  # the package's __init__, spelled by no name
        "/p/pkg/c.py": b"from pkg import (\n    b,\n)\n",
        "/p/pkg/d.py": b"import os\n",
        "/p/other.py": b"x = 1  # \xc3\xa9\n",  # not ASCII: may spell anything
    }
    found = reaching_files(texts, {"/p/pkg/a.py"}, limit=10)
    assert found == {"/p/pkg/a.py", "/p/pkg/__init__.py", "/p/pkg/b.py", "/p/pkg/c.py", "/p/other.py"}
    assert reaching_files(texts, {"/p/pkg/a.py"}, limit=2) is None
    assert reaching_files(texts, {"/p/pkg/d.py"}, limit=10) == {"/p/pkg/d.py", "/p/other.py"}


def test_a_partial_run_is_only_made_without_the_cache(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    partial = run("pkg/tools/m3.py", True, monkeypatch, use_cache=True).stats.partial
    assert partial.full_paths is None and not partial.upgraded


def test_a_skipped_file_that_may_list_tools_makes_the_run_resolve_all(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a whole-tree run would load it (and add its ``Tool(name=...)`` to the vocabulary)
    depends on reaches a partial run does not follow: then nothing is read lightly."""
    (project / "pkg" / "listing.py").write_text(
        "from mcp.types import Tool\n\nTOOLS = [Tool(name='x')]\n", encoding="utf-8"
    )
    target = "pkg/tools/m3.py"
    partial = run(target, True, monkeypatch)
    assert rendered(partial) == rendered(run(target, False, monkeypatch))
    assert partial.stats.partial.full_paths is None and not partial.stats.partial.light
