"""Never crash on input (DESIGN §11, issue 9): every hostile file costs itself one clear diagnostic.

The tree below holds one file per hostile kind, each mentioning ``mcp_fusion`` so that the
pre-scan lets it through to the parsers, next to good files whose diagnostics must come out
exactly as when they are linted alone. Parser processes that die or hang are simulated by
replacing the function a worker runs for one marked file.
"""

from __future__ import annotations

import codecs
import faulthandler
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import fusion_lint.check.engine as engine
import fusion_lint.cli.main as cli
import fusion_lint.source.pipeline as pipeline
import fusion_lint.source.runner as runner
import fusion_lint.source.workers as workers
from fusion_lint.check.engine import Options, lint
from fusion_lint.rules import REGISTRY, all_rules

GOOD = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool


@tool(
    "get_item",
    errors=[
        ErrorContract(
            reason="Item-Missing",
            code=JsonRpcErrorCode.NOT_FOUND,
            when="No item has that id",
            recovery="Check the id with the user, then call get_item again.",
        ),
    ],
)
async def get_item(item_id: str, ctx) -> dict:
    if not item_id:
        ctx.fail("Item-Missing")
    raise ctx.fail("Item-Missing")
"""
# What GOOD yields on its own: (code, line, column) of each diagnostic.
GOOD_FINDINGS = [("FL107", 8, 19), ("FL204", 17, 8)]

# name -> (content, expected code, a fragment of the expected message)
HOSTILE: dict[str, tuple[bytes, str, str]] = {
    "syntax_error.py": (b"import mcp_fusion\ndef broken(:\n    pass\n", "FL000", "syntax error"),
    "python2.py": (b'import mcp_fusion\nprint "hello"\n', "FL000", "syntax error"),
    "invalid_utf8.py": (b"import mcp_fusion\nx = '\xff\xfe\xfa'\n", "FL001", "not valid utf-8"),
    "unknown_cookie.py": (b"# -*- coding: klingon -*-\nimport mcp_fusion\n", "FL001", "klingon"),
    "lying_cookie.py": (b"# coding: ascii\nimport mcp_fusion\nname = 'caf\xc3\xa9'\n", "FL001", "ascii"),
    "nul_bytes.py": (b"import mcp_fusion\nx = 1\x00\n", "FL000", "null"),
    "binary.py": (
        b"\x89PNG\r\n\x1a\n" + random.Random(9).randbytes(2000) + b"mcp_fusion" + random.Random(4).randbytes(500),
        "FL001",
        "not valid utf-8",
    ),
    "deep_parentheses.py": (
        b"import mcp_fusion\nx = " + b"(" * 3000 + b"1" + b")" * 3000 + b"\n",
        "FL000",
        "parenthes",
    ),
    "deep_lists.py": (b"import mcp_fusion\nx = " + b"[" * 1500 + b"]" * 1500 + b"\n", "FL000", "too many nested"),
    # CPython 3.11 and 3.12 refuse these themselves (recursion), 3.10 and 3.13 parse them: the gate's
    # own bound stops them there, before libcst (which runs for minutes on them).
    "attribute_chain.py": (b"import mcp_fusion\nx = a" + b".b" * 20_000 + b"\n", "FL000", "recursion|nests deeper"),
    "addition_chain.py": (
        b"import mcp_fusion\nx = " + b" + ".join([b"a"] * 20_000) + b"\n",
        "FL000",
        "recursion|nests deeper",
    ),
    "subscript_chain.py": (b"import mcp_fusion\nx = a" + b"[0]" * 2_900 + b"\n", "FL000", "recursion|nests deeper"),
    "call_chain.py": (b"import mcp_fusion\nx = a" + b"()" * 1_500 + b"\n", "FL000", "nests deeper"),
}


# CPython accepts it and the analysis follows it in-process (its walks over CPython's tree iterate,
# or recurse no deeper than a chain of names). 600 terms, where libcst's code generator, which
# placed the facts until they were read from CPython's tree, ran out of stack in-process at ~480.
DEEP_IN_A_FUNCTION = (
    "import mcp_fusion\n\n\ndef total(a):\n    raise mcp_fusion.not_found(" + " + ".join(["a"] * 600) + ")\n"
)


def _good_variants() -> dict[str, bytes]:
    lf = GOOD.encode()
    return {
        "good.py": lf,
        "good_bom.py": codecs.BOM_UTF8 + lf,
        "good_crlf.py": lf.replace(b"\n", b"\r\n"),
    }


def _write_tree(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for name, content in {**_good_variants(), **{n: c for n, (c, _, _) in HOSTILE.items()}}.items():
        (root / name).write_bytes(content)
    # Larger than the limit; a comment line repeated keeps it cheap to write and valid Python.
    line = b"# padding padding padding padding padding padding padding padding padding\n"
    (root / "huge.py").write_bytes(b"import mcp_fusion\n" + line * (pipeline.MAX_FILE_BYTES // len(line) + 1))


def _findings(report: engine.Report, root: Path) -> dict[str, list[tuple[str, int, int]]]:
    found: dict[str, list[tuple[str, int, int]]] = {}
    for d in report.diagnostics:
        found.setdefault(Path(d.path).relative_to(root).as_posix(), []).append((d.code, d.span.line, d.span.col))
    return found


@pytest.fixture(scope="module")
def hostile_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    _write_tree(root)
    return root


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_hostile_file_costs_one_diagnostic_and_good_files_are_intact(hostile_tree: Path, jobs: int) -> None:
    report = lint(Options(paths=[str(hostile_tree)], use_cache=False, jobs=jobs))
    by_file = {d.path: [] for d in report.diagnostics}
    for d in report.diagnostics:
        by_file[d.path].append(d)
    found = {Path(p).name: ds for p, ds in by_file.items()}

    assert "FL999" not in {d.code for d in report.diagnostics}
    for name, (_, code, fragment) in HOSTILE.items():
        assert [d.code for d in found.get(name, [])] == [code], (name, found.get(name))
        assert any(part in found[name][0].message.lower() for part in fragment.lower().split("|")), (
            name,
            found[name][0].message,
        )
    assert [d.code for d in found["huge.py"]] == ["FL001"]
    assert "too large" in found["huge.py"][0].message
    for name in _good_variants():  # a BOM and CRLF line endings change nothing
        assert [(d.code, d.span.line, d.span.col) for d in found[name]] == GOOD_FINDINGS, name
    assert report.files_checked == len(HOSTILE) + len(_good_variants()) + 1


def test_the_cli_exits_1_without_a_traceback(hostile_tree: Path) -> None:
    result = CliRunner().invoke(cli.main, [str(hostile_tree), "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "FL999" not in result.output
    assert result.output.count("FL000") == sum(1 for _, code, _ in HOSTILE.values() if code == "FL000")


def test_a_deep_chain_is_analysed_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 600-term chain in a raise's message, in-process (no worker, default recursion limit): the
    file is analysed like any other (libcst's renderer ran out of stack on it: FL000)."""
    monkeypatch.setattr(runner, "isolation_context", lambda files: None)
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "chain.py").write_text(DEEP_IN_A_FUNCTION)
    (tmp_path / "good.py").write_text(GOOD)
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1))
    found = _findings(report, tmp_path)
    assert "chain.py" not in found
    assert found["good.py"] == GOOD_FINDINGS


def test_a_file_only_libcst_rejected_is_analysed(tmp_path: Path) -> None:
    """``(x): int = 1`` is valid Python that libcst's parser rejected (FL000 while the facts came
    from libcst's tree); CPython's tree, which the gate builds anyway, serves for it."""
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text("(x): int = 1\n" + GOOD)
    (tmp_path / "good.py").write_text(GOOD)
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1))
    found = _findings(report, tmp_path)
    assert [code for code, _, _ in found["app.py"]] == [code for code, _, _ in GOOD_FINDINGS]
    assert found["good.py"] == GOOD_FINDINGS


def test_a_worker_runs_deep_files_that_the_in_process_path_cannot(tmp_path: Path) -> None:
    """Workers raise the recursion limit: there, a stack overflow would cost one file only."""
    if runner.isolation_context(1) is None:
        pytest.skip("no cheap worker processes here (other threads running, or no fork)")
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "chain.py").write_text(DEEP_IN_A_FUNCTION)
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1))
    assert report.diagnostics == []


# ----- worker processes that die or hang ----------------------------------------------------------

MARK = b"# simulate: "


def _simulating(original: workers.Analyze) -> workers.Analyze:
    def analyze(path: str, data: bytes, runtime_modules: object) -> object:
        if MARK + b"segfault" in data:
            faulthandler.disable()  # pytest's, inherited by the fork: it would print a stack dump
            os.kill(os.getpid(), signal.SIGSEGV)
        if MARK + b"exit" in data:
            os._exit(3)
        if MARK + b"hang" in data:
            time.sleep(120)
        return original(path, data, runtime_modules)  # type: ignore[arg-type]

    return analyze


def _tree_with(root: Path, marked: dict[str, str], good: int) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for index in range(good):
        (root / f"good_{index:02d}.py").write_text(GOOD)
    for name, how in marked.items():
        (root / name).write_bytes(GOOD.encode() + MARK + how.encode() + b"\n")


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the simulation replaces the worker function in forked children")
    monkeypatch.setattr(runner, "isolation_context", lambda files: multiprocessing.get_context("fork"))
    monkeypatch.setattr(runner, "analyze_one", _simulating(runner.analyze_one))


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.usefixtures("forking")
def test_a_worker_killed_by_a_crash_costs_only_the_file_it_held(tmp_path: Path, jobs: int) -> None:
    _tree_with(tmp_path, {"crashes.py": "segfault", "exits.py": "exit"}, good=14)
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=jobs))
    found = _findings(report, tmp_path)
    assert [c for c, _, _ in found.pop("crashes.py")] == ["FL000"]
    assert [c for c, _, _ in found.pop("exits.py")] == ["FL000"]
    messages = {Path(d.path).name: d.message for d in report.diagnostics if d.code == "FL000"}
    assert "killed by SIGSEGV" in messages["crashes.py"]
    assert "exited with status 3" in messages["exits.py"]
    assert found == {f"good_{i:02d}.py": GOOD_FINDINGS for i in range(14)}


@pytest.mark.usefixtures("forking")
def test_a_worker_stuck_on_a_file_is_killed_and_the_file_is_fl000(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workers, "TIMEOUT_BASE_S", 1.0)
    _tree_with(tmp_path, {"hangs.py": "hang"}, good=3)
    started = time.monotonic()
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=2))
    assert time.monotonic() - started < 60  # not a timing assertion: the sleep is 120 s
    found = _findings(report, tmp_path)
    assert [c for c, _, _ in found.pop("hangs.py")] == ["FL000"]
    assert "did not finish within 1 s" in next(d.message for d in report.diagnostics if d.code == "FL000")
    assert found == {f"good_{i:02d}.py": GOOD_FINDINGS for i in range(3)}


@pytest.mark.usefixtures("forking")
def test_a_crash_is_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree_with(tmp_path, {"flaky.py": "segfault"}, good=1)
    first = lint(Options(paths=[str(tmp_path)], use_cache=True, jobs=1))
    assert "FL000" in {d.code for d in first.diagnostics}
    monkeypatch.undo()  # the real worker function again: the file must be parsed anew, not read from the cache
    second = lint(Options(paths=[str(tmp_path)], use_cache=True, jobs=1))
    assert _findings(second, tmp_path)["flaky.py"] == GOOD_FINDINGS


# ----- our own bugs -----------------------------------------------------------------------------------


def test_an_exception_inside_a_rule_is_fl999_and_the_other_rules_still_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    all_rules()
    broken = REGISTRY["FL107"]

    def explode(self: object, entry: object, project: object) -> object:
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(broken, "check_entry", explode)
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(GOOD)
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1))
    codes = [d.code for d in report.diagnostics]
    assert "FL107" not in codes and "FL204" in codes
    internal = [d for d in report.diagnostics if d.code == "FL999"]
    assert len(internal) == 1
    assert "FL107" in internal[0].message and broken.name in internal[0].message
    assert "ZeroDivisionError: simulated bug" in internal[0].message
    assert internal[0].path == str(tmp_path / "app.py")


def test_an_exception_while_extracting_one_file_is_fl999_for_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fusion_lint.facts.extract as extract_module

    original = extract_module.extract

    def extract(module: object, path: str, *args: object) -> object:
        if path.endswith("victim.py"):
            raise KeyError("simulated extractor bug")
        return original(module, path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(extract_module, "extract", extract)
    monkeypatch.setattr(runner, "isolation_context", lambda files: None)
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "victim.py").write_text(GOOD)
    (tmp_path / "other.py").write_text(GOOD.replace("get_item", "get_other"))
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1))
    found = _findings(report, tmp_path)
    assert [c for c, _, _ in found["victim.py"]] == ["FL999"]
    assert found["other.py"] == GOOD_FINDINGS


def test_an_internal_error_is_one_line_unless_verbose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(options: object) -> object:
        raise RuntimeError("simulated")

    monkeypatch.setattr(engine, "lint", fail)
    (tmp_path / "app.py").write_text(GOOD)
    quiet = CliRunner().invoke(cli.main, [str(tmp_path), "--no-cache"])
    assert quiet.exit_code == 2
    assert "Traceback" not in quiet.output
    assert "internal error: RuntimeError: simulated" in quiet.output
    verbose = CliRunner().invoke(cli.main, [str(tmp_path), "--no-cache", "--verbose"])
    assert verbose.exit_code == 2
    assert "Traceback" in verbose.output
