"""Property tests (issue 9): nothing a file contains makes the linter raise or report FL999.

Inputs: programs generated from Python's grammar (hypothesmith), tool modules generated from the
runtime's API with every kind of mistake, line-level mutations of the fixtures, random bytes.
Each is linted as a one-file project (parsed in a worker, as the CLI does); ``--fix`` on the
generated tool modules must leave code CPython accepts. The spans of facts read from CPython's tree
are checked against libcst's own ``PositionProvider`` (their first definition) on generated programs.

The example budget is fixed and the examples derandomized, so CI runs the same bounded set
(well under a minute). For a longer local fuzzing run (random examples, any budget):

    FUSION_LINT_FUZZ_EXAMPLES=5000 python -m pytest tests/lint/test_properties.py -p no:cacheprovider
"""

from __future__ import annotations

import ast
import multiprocessing
from collections import Counter
from pathlib import Path
from unittest import mock

import hypothesmith
import libcst as cst
import pytest
from budget import budget
from click.testing import CliRunner
from hypothesis import assume, given
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

import fusion_lint.cli.main as cli
import fusion_lint.source.runner as runner
from fusion_lint.check.engine import Options, lint
from fusion_lint.check.report import Report
from fusion_lint.facts.positions import SpanRegistry
from fusion_lint.source.pipeline import analyze_file

# Property, determinism and pre-commit tests are the slow part of the suite: `-m "not slow"` skips them.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
FIXTURES = sorted(p for p in (REPO / "fixtures").rglob("*.py") if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def project_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("property")
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\nextend-select = ['ALL']\n")
    return root


def lint_source(root: Path, data: bytes) -> Report:
    """One file, linted the way the CLI lints it (a worker parses it; every rule runs)."""
    (root / "app.py").write_bytes(data)
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with mock.patch.object(runner, "isolation_context", lambda files: context):
        return lint(Options(paths=[str(root)], use_cache=False, jobs=1))


def assert_sound(report: Report) -> None:
    codes = [d.code for d in report.diagnostics]
    assert "FL999" not in codes, [d.message for d in report.diagnostics if d.code == "FL999"]
    problems = [c for c in codes if c in ("FL000", "FL001")]
    assert len(problems) <= 1
    if problems:  # a file that cannot be read yields that one diagnostic and nothing else
        assert len(codes) == 1


# ----- generated programs ------------------------------------------------------------------------------


@budget(60)
@given(hypothesmith.from_grammar())
def test_programs_from_the_grammar_never_make_the_linter_raise(project_dir: Path, source: str) -> None:
    assert_sound(lint_source(project_dir, ("import mcp_fusion\n" + source).encode("utf-8", "surrogatepass")))


REASONS = st.sampled_from(["no_match", "Bad-Reason", "", "x" * 300, "dup", "dup", "ünïcode_reason"])
CODES = st.sampled_from(
    [
        "JsonRpcErrorCode.NOT_FOUND",
        "JsonRpcErrorCode.UNKNOWN_ERROR",
        "JsonRpcErrorCode.NOPE",
        "-32001",
        "42",
        "'NOT_FOUND'",
        "None",
        "codes.NOT_FOUND",
        "JsonRpcErrorCode",
        "JsonRpcErrorCode.NOT_FOUND.value",
    ]
)
TEXTS = st.sampled_from(
    [
        '"Call list_items first to find a valid id, then retry."',
        '"retry"',
        '""',
        '"   "',
        "None",
        "42",
        'f"Call {name} again please now"',
        '"Call _reload() and the cache.flush flag, then `nope_tool`."',
        '"a " "joined" " string with enough words"',
        "RECOVERY",
    ]
)


@st.composite
def contract_entries(draw: st.DrawFn) -> str:
    fields = {
        "reason": lambda: repr(draw(REASONS)),
        "code": lambda: draw(CODES),
        "when": lambda: draw(TEXTS),
        "recovery": lambda: draw(TEXTS),
        "retryable": lambda: draw(st.sampled_from(["True", "False", "'yes'", "None"])),
        "severity": lambda: draw(st.sampled_from(["'warning'", "'Warning'", "'loud'", "None"])),
        "thrown_by": lambda: draw(st.sampled_from(["'service'", "'handler'", "None"])),
        "recovry": lambda: draw(TEXTS),
    }
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=6))
    if draw(st.booleans()):
        return "ErrorContract(" + ", ".join(f"{name}={fields[name]()}" for name in chosen) + ")"
    return "{" + ", ".join(f"{name!r}: {fields[name]()}" for name in chosen) + "}"


ERRORS = st.one_of(
    st.lists(contract_entries(), max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
    st.lists(contract_entries(), max_size=3).map(lambda items: "(" + "".join(i + ", " for i in items) + ")"),
    st.sampled_from(
        [
            "[]",
            "{}",
            "'errors'",
            "None",
            "SHARED",
            "[*SHARED]",
            "SHARED + [ENTRY]",
            "[ENTRY, *UNKNOWN]",
            "make_errors()",
            "[ErrorContract]",
            "[tool_error('x', 'y')]",
            "list(SHARED)",
        ]
    ),
)
STATEMENTS = st.sampled_from(
    [
        "raise ctx.fail({r})",
        "ctx.fail({r})",
        "return ctx.recovery_for({r})",
        "raise ctx.fail(reason)",
        "raise not_found('gone')",
        "raise not_found('gone', data={{'reason': {r}}})",
        "raise McpError(JsonRpcErrorCode.NOT_FOUND, 'x')",
        "raise McpError(-32002, 'x', {{'reason': {r}}})",
        "raise ValueError('bad')",
        "raise",
        "raise KeyError",
        "fail = ctx.fail\n{i}raise fail({r})",
        "err = conflict('c')\n{i}raise err",
        "raise tool_error('NOT_FOUND', 'x')",
        "raise mcp.MCPError(1, 'x')",
        "try:\n{i}    helper()\n{i}except Exception as e:\n{i}    raise not_found(json.dumps(e))",
        "try:\n{i}    helper()\n{i}except:\n{i}    pass",
        "try:\n{i}    helper()\n{i}except asyncio.CancelledError:\n{i}    log()",
        "try:\n{i}    helper()\n{i}except (KeyError, BaseException) as exc:\n{i}    raise conflict(repr(exc)) from exc",
        "helper()",
        "service.fetch(1)",
        "return helper()",
        "x = lambda: ctx.fail({r})",
        "def inner():\n{i}    raise ctx.fail({r})",
        "for _ in range(3):\n{i}    ctx.fail({r})",
        "if ctx:\n{i}    raise ctx.fail({r})\n{i}else:\n{i}    raise forbidden('no')",
        "match reason:\n{i}    case {r}:\n{i}        raise ctx.fail({r})",
        "with open('x') as f:\n{i}    raise ctx.fail(f)",
        "raise ctx.fail({r}, 'msg', {{'k': 1}}, cause=None)",
        "raise ctx.fail(*args)",
        "raise ctx.fail(reason={r})",
    ]
)
HEADERS = st.sampled_from(
    [
        "from mcp_fusion import *\n",
        "from mcp_fusion import tool, resource, prompt, ErrorContract, JsonRpcErrorCode, Context, McpError, "
        "not_found, conflict, forbidden, tool_error\n",
        "import mcp_fusion as mf\nfrom mcp_fusion import tool as t, ErrorContract, JsonRpcErrorCode\n",
        "from mcp_fusion.errors import not_found as nf\nfrom mcp_fusion import tool, Context\n",
    ]
)


@st.composite
def tool_modules(draw: st.DrawFn) -> str:
    lines = [
        draw(HEADERS),
        "import asyncio, json, mcp\n",
        f"SHARED = {draw(ERRORS)}\nENTRY = {draw(contract_entries())}\nRECOVERY = {draw(TEXTS)}\n",
        "def helper():\n    raise conflict('busy', data={'reason': 'dup'})\n",
    ]
    for index in range(draw(st.integers(1, 3))):
        decorator = draw(st.sampled_from(["tool", "t", "mf.tool", "resource", "prompt"]))
        name = draw(st.sampled_from([f"'get_{index}'", "NAME", f"'res://{{id}}/{index}'", "''"]))
        context = draw(st.sampled_from(["ctx: Context", "ctx", "context: 'Context'", "c: Context", "x"]))
        body = draw(st.lists(STATEMENTS, min_size=1, max_size=5))
        asynchronous = draw(st.sampled_from(["async ", ""]))
        reason = repr(draw(REASONS))
        statements = "".join(f"    {s.format(r=reason, i='    ')}\n" for s in body)
        if draw(st.booleans()):
            lines.append(
                f"@{decorator}({name}, errors={draw(ERRORS)})\n"
                f"{asynchronous}def handler_{index}(item_id: str, {context}):\n{statements}"
            )
        else:
            lines.append(
                f"{asynchronous}def handler_{index}(item_id: str, {context}):\n{statements}"
                f"registered_{index} = {decorator}({name}, errors={draw(ERRORS)})(handler_{index})\n"
            )
    return "\n".join(lines)


@budget(80)
@given(tool_modules())
def test_generated_tool_modules_never_make_the_linter_raise(project_dir: Path, source: str) -> None:
    report = lint_source(project_dir, source.encode())
    assert_sound(report)


@budget(40)
@given(tool_modules())
def test_fix_on_generated_tool_modules_leaves_code_that_parses(project_dir: Path, source: str) -> None:
    (project_dir / "app.py").write_text(source)
    arguments = [str(project_dir), "--no-cache", "--fix", "--unsafe-fixes"]
    result = CliRunner().invoke(cli.main, arguments, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    fixed = (project_dir / "app.py").read_text()
    ast.parse(fixed)


# ----- mutated fixtures and random bytes -------------------------------------------------------------------


MUTATIONS = ("delete", "duplicate", "swap", "truncate", "insert", "dedent", "unclose")


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> bytes:
    lines = draw(st.sampled_from(FIXTURES)).read_text().splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        at = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "delete":
            del lines[at]
        elif kind == "duplicate":
            lines.insert(at, lines[at])
        elif kind == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif kind == "truncate":
            lines[at] = lines[at][: draw(st.integers(0, len(lines[at])))]
            del lines[at + 1 :]
        elif kind == "insert":
            indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
            statement = draw(STATEMENTS).format(r="'no_match'", i=indent + "    ")
            lines.insert(at, indent + statement + "\n")
        elif kind == "dedent":
            lines[at] = lines[at].lstrip()
        else:
            lines[at] = lines[at].rstrip("\n") + draw(st.sampled_from(["(", "[", "{", '"""', "\\", ":"])) + "\n"
    return ("import mcp_fusion\n" + "".join(lines)).encode()


@budget(60)
@given(mutated_fixtures())
def test_mutated_fixtures_never_make_the_linter_raise(project_dir: Path, data: bytes) -> None:
    assert_sound(lint_source(project_dir, data))


@budget(60)
@given(st.binary(max_size=400), st.binary(max_size=400))
def test_random_bytes_never_make_the_linter_raise(project_dir: Path, before: bytes, after: bytes) -> None:
    data = before + b"mcp_fusion" + after  # so that the pre-scan lets it through
    result = analyze_file("app.py", ("mcp_fusion",), data=data, prescan=True)
    assert (result.facts is None) != (result.problem is None)
    assert_sound(lint_source(project_dir, data))


# ----- positions ----------------------------------------------------------------------------------------------
# The facts are read from CPython's tree; their spans keep the ranges they were first defined with
# (libcst's, frozen by the golden outputs). libcst's ``PositionProvider`` is the oracle here: for
# every kind of node a fact is placed at, the multiset of ranges both trees give must be equal.

#: libcst node type -> the ``ast`` node types standing for it.
_PLACED = {
    cst.Call: (ast.Call,),
    cst.Attribute: (ast.Attribute,),
    cst.Dict: (ast.Dict,),
    cst.List: (ast.List,),
    cst.Tuple: (ast.Tuple,),
    cst.GeneratorExp: (ast.GeneratorExp,),
    cst.Raise: (ast.Raise,),
    cst.Return: (ast.Return,),
    cst.Assign: (ast.Assign,),
    cst.AnnAssign: (ast.AnnAssign,),
    cst.ExceptHandler: (ast.ExceptHandler,),
    cst.StarredElement: (ast.Starred,),
}


def _never_placed(module: cst.Module) -> set[int]:
    """Nodes no fact is placed at: an import's dotted names, a class's bases and keywords."""
    found: set[int] = set()

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                stack = [node]
            elif isinstance(node, cst.ClassDef):
                stack = [*node.bases, *node.keywords]
            else:
                return True
            while stack:
                current = stack.pop()
                found.add(id(current))
                stack.extend(current.children)
            return True

    module.visit(Collect())
    return found


def _libcst_ranges(module: cst.Module) -> Counter:
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    skipped = _never_placed(module)
    found: Counter = Counter()
    for node, where in positions.items():
        kind = type(node)
        if id(node) in skipped:
            continue
        if kind is cst.StarredElement and not isinstance(node.value, cst.BaseExpression):
            continue
        if kind in _PLACED or kind is cst.Arg:
            found[(kind.__name__, where.start.line, where.start.column, where.end.line, where.end.column)] += 1
        if kind is cst.FunctionDef:
            name = positions[node.name]
            found[("def", name.start.line, name.start.column, name.end.line, name.end.column)] += 1
    return found


def _ast_ranges(tree: ast.Module, source: str) -> Counter:
    from fusion_lint.facts.syntax import args_of

    registry = SpanRegistry(source)
    names = {ast_kind: kind.__name__ for kind, ast_kinds in _PLACED.items() for ast_kind in ast_kinds}
    found: Counter = Counter()
    # A subscript's ``x[a, b]`` is no tuple to libcst, nor a call's ``*args`` a starred element.
    skipped = {
        id(node.slice) for node in ast.walk(tree) if isinstance(node, ast.Subscript) and type(node.slice) is ast.Tuple
    }
    skipped |= {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for part in (*node.bases, *node.keywords)
        for inner in ast.walk(part)
    }
    skipped |= {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for arg in node.args
        if isinstance(arg, ast.Starred)
    }

    for node in ast.walk(tree):
        kind = type(node)
        if id(node) in skipped:
            continue
        if kind in names:
            span = registry.at(node, 0)
            found[(names[kind], span.line, span.col, span.end_line, span.end_col)] += 1
        if kind is ast.Call:
            for arg in args_of(node):  # type: ignore[arg-type]
                span = registry.arg(arg, 0)
                found[("Arg", span.line, span.col, span.end_line, span.end_col)] += 1
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            span = registry.def_name(node, 0)
            found[("def", span.line, span.col, span.end_line, span.end_col)] += 1
    return found


@budget(60)
@given(hypothesmith.from_grammar())
def test_spans_from_cpythons_tree_match_libcsts_position_provider(source: str) -> None:
    try:
        tree = ast.parse(source)
        module = cst.parse_module(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
        assume(False)
        return
    # fusion-lint counts lines at "\n" (CRLF included) everywhere, positions and suppressions alike;
    # libcst also breaks lines at a lone "\r", an old Mac line ending no current tool writes.
    assume("\r" not in source.replace("\r\n", ""))
    assume(module.code == source)
    assert _libcst_ranges(module) == _ast_ranges(tree, source)


def test_spans_match_libcsts_on_the_fixtures_and_the_rule_examples() -> None:
    paths = [*FIXTURES, *sorted((REPO / "tests" / "lint" / "golden" / "examples").rglob("*.py"))]
    checked = 0
    for path in paths:
        source = path.read_text(encoding="utf-8")
        try:
            tree, module = ast.parse(source), cst.parse_module(source)
        except (SyntaxError, cst.ParserSyntaxError):
            continue  # an FL000 example
        assert _libcst_ranges(module) == _ast_ranges(tree, source), path
        checked += 1
    assert checked >= 20
