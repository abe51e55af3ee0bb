"""The corpus benchmark (``bench/corpus_bench.py``) on small generated trees: the files it says the linter
read and parsed, and why each was parsed, must be the right ones; an absent corpus is a message.

Nothing here is timed: the one test that runs the whole benchmark (slow) checks its figures exist and
hold together, and that neither the benchmark nor the linter wrote into the tree it measured.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

corpus_bench = importlib.import_module("corpus_bench")
corpus_counts = importlib.import_module("corpus_counts")

SERVER = """
    from mcp.server.fastmcp import FastMCP

    from app import helpers

    mcp = FastMCP("demo")

    @mcp.tool()
    def lookup(key: str) -> str:
        return helpers.find(key)
"""
HELPERS = """
    def find(key):
        if not key:
            raise ValueError("empty key")
        return key.upper()
"""
CONTRACTS = """
    from mcp_fusion import ErrorContract, JsonRpcErrorCode

    SHARED = [
        ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE,
                      when="The upstream service does not answer", recovery="Wait a minute, then call lookup again"),
    ]
"""
RUNTIME_TOOLS = """
    from mcp_fusion import tool

    from app.contracts import SHARED

    @tool("ping", errors=SHARED)
    def ping() -> str:
        return "pong"
"""
UNRELATED = """
    def add(a, b):
        return a + b
"""


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root


def names(root: Path, paths: list[str]) -> list[str]:
    return sorted(Path(p).relative_to(root).as_posix() for p in paths)


BASE = {
    "app/__init__.py": "",
    "app/server.py": SERVER,
    "app/helpers.py": HELPERS,
    "app/contracts.py": CONTRACTS,
    "app/runtime_tools.py": RUNTIME_TOOLS,
    "app/unrelated.py": UNRELATED,
}


def test_counts_parsed_skipped_defining_and_reached(tmp_path):
    root = make_tree(tmp_path / "tree", BASE)
    counts = corpus_counts.count_files(root, jobs=1)
    assert counts.discovered == 6 and counts.read == 6
    # Never mentions the runtime or a framework: __init__ and unrelated stay unparsed; helpers too, at first.
    assert counts.skipped == 3
    assert names(root, counts.parsed) == ["app/contracts.py", "app/helpers.py", "app/runtime_tools.py", "app/server.py"]
    assert counts.admitted[str(root / "app/helpers.py")] == corpus_counts.ON_DEMAND  # the tool's handler calls it
    assert counts.admitted[str(root / "app/server.py")] == corpus_counts.PRESCAN
    assert names(root, counts.defines) == ["app/contracts.py", "app/runtime_tools.py", "app/server.py"]
    assert names(root, counts.reached) == ["app/helpers.py"]
    assert counts.neither == [] and counts.failed == {}
    assert counts.definitions == {"tool": 2}
    assert counts.parse_operations == 4
    assert counts.lines_parsed == sum((root / p).read_text().count("\n") for p in names(root, counts.parsed))


def test_a_file_parsed_for_nothing_is_named_with_why(tmp_path):
    root = make_tree(
        tmp_path / "tree",
        {
            **BASE,
            # Imports a framework and spells a registration (in a comment), so the pre-scan admits it,
            # but nothing defines or reaches anything in it.
            "app/texts.py": """
            from mcp.types import TextContent

            # The server registers these with mcp.tool() elsewhere.
            def as_text(value):
                return TextContent(type="text", text=str(value))
        """,
        },
    )
    counts = corpus_counts.count_files(root, jobs=1)
    assert names(root, counts.neither) == ["app/texts.py"]
    assert counts.admitted[counts.neither[0]] == corpus_counts.PRESCAN
    assert len(counts.parsed) == 5


def test_a_framework_import_alone_is_not_parsed(tmp_path):
    root = make_tree(
        tmp_path / "tree",
        {
            **BASE,
            "app/texts.py": """
            from mcp.types import TextContent

            def as_text(value):
                return TextContent(type="text", text=str(value))
        """,
        },
    )
    counts = corpus_counts.count_files(root, jobs=1)
    assert counts.neither == [] and len(counts.parsed) == 4


def test_reached_only_through_a_lookup_is_consulted_not_neither(tmp_path):
    # The tools register on a server bound in another module, which defines no tool itself: the
    # linter looks that module up to learn the framework. Its tools' file is admitted by the
    # pre-scan's second look (it names no framework, only the project's server module).
    root = make_tree(
        tmp_path / "tree",
        {
            "app/__init__.py": "",
            "app/hub.py": 'from mcp.server.fastmcp import FastMCP\n\nshared_server = FastMCP("demo")\n',
            "app/more.py": """
            from app.hub import shared_server

            @shared_server.tool()
            def hello() -> str:
                return "hi"
        """,
        },
    )
    counts = corpus_counts.count_files(root, jobs=1)
    assert counts.admitted[str(root / "app/more.py")] == corpus_counts.SECOND_LOOK
    assert names(root, counts.defines) == ["app/more.py"]
    assert names(root, counts.consulted) == ["app/hub.py"]
    assert counts.neither == []


def test_an_absent_corpus_is_a_message_and_exit_0(tmp_path, capsys):
    assert corpus_bench.main(["--corpus", str(tmp_path / "absent")]) == 0
    assert "absent" in capsys.readouterr().out


def test_diagnostics_are_counted_by_code():
    output = (
        "a/b.py:3:9: FL300 [prefer-mcp-error-in-handler] tool 'x': ...\n"
        "a/b.py:7:1: FL300 [prefer-mcp-error-in-handler] tool 'y': ...\n"
        "c.py:1:1: FL999 [internal-error] rule FL306 failed\n\nFound 1 error, 2 warnings in 2 files\n"
    )
    assert corpus_bench.diagnostic_codes(output) == {"FL300": 2, "FL999": 1}


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


@pytest.mark.slow
def test_the_whole_benchmark_on_a_small_tree_writes_nothing_into_it(tmp_path, capsys):
    root = make_tree(tmp_path / "tree", BASE)
    before = _snapshot(root)
    out = tmp_path / "figures.json"
    assert corpus_bench.main(["--corpus", str(root), "--rounds", "1", "--json", str(out), "--markdown"]) == 0
    assert _snapshot(root) == before  # no cache, no key, nothing else: the tree is read-only to both
    figures = json.loads(out.read_text())
    assert len(figures["counts"]["parsed"]) == 4 and figures["counts"]["neither"] == []
    (one,) = figures["rounds"]
    assert one["wall_default"] > 0 and one["floor_wall"] > 0 and one["cpu_jobs1"] > 0 and one["warm"] > 0
    assert figures["diagnostics"].get("FL999", 0) == 0
    checks = figures["checks"]
    assert checks["tracebacks"] == [] and checks["bad_exits"] == [] and checks["differing"] == []
    printed = capsys.readouterr().out
    assert "| corpus | fusion-lint | floor / anchor | target |" in printed
