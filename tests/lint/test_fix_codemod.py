"""Fixes on libcst (issue 30, DESIGN §13.2): every fix is a codemod of the file it changes, libcst
is imported by the fix engine alone, a fix never makes things worse, and the three wrong fixes
that issue found are regression cases.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest
from harness import lint_example
from test_fix import write_project

from fusion_lint.base.diagnostics import Diagnostic, Edit, Fix, Span
from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.fix.apply import apply_fixes, fixed_by_one
from fusion_lint.fix.codemod import NotApplicable, rewrite
from fusion_lint.rules import all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover (3.10)
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def _fix(root: Path, *, unsafe: bool = True, select: list[str] | None = None, extend: list[str] | None = None):
    options = Options(
        paths=[str(root)],
        selection=Selection(select=select, extend_select=extend or []),
        use_cache=False,
        jobs=1,
    )
    report, _ = apply_fixes(lint(options), options, write=True, unsafe=unsafe)
    return report


def _codes(root: Path, extend: list[str] | None = None) -> list[str]:
    options = Options(paths=[str(root)], selection=Selection(extend_select=extend or []), use_cache=False, jobs=1)
    return sorted(d.code for d in lint(options).diagnostics)


# ----- the shape of the engine ------------------------------------------------------------------------


def test_only_the_fix_engine_imports_libcst() -> None:
    importers = []
    for path in sorted((REPO / "fusion_lint").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name == "libcst" or name.startswith("libcst.") for name in names):
                importers.append(path.relative_to(REPO).as_posix())
    assert sorted(set(importers)) == ["fusion_lint/fix/codemod.py"]


def test_libcst_is_a_core_dependency_capped_below_its_next_major() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    libcst = [d for d in project["dependencies"] if d.startswith("libcst")]
    assert libcst and "<2" in libcst[0], project["dependencies"]


def test_an_edit_that_fits_no_node_is_not_applicable() -> None:
    text = "def f(a):\n    return g(a)  # note\n"
    inside_comment = text.index("note")
    with pytest.raises(NotApplicable):
        rewrite(text, [Edit(inside_comment, inside_comment, "x")])
    # An edit whose result is no longer the node it rewrites widens, and fails when nothing parses.
    close = text.index(")")
    with pytest.raises(NotApplicable):
        rewrite(text, [Edit(close, close, "  # )")])


def test_a_node_rewrite_keeps_everything_around_it() -> None:
    text = (
        "class A:\r\n    def f(self):  # keep\r\n        raise ValueError(  # why\r\n            'm',\r\n        )\r\n"
    )
    start = text.index("ValueError")
    new = rewrite(text, [Edit(start, start + len("ValueError"), "KeyError")])
    assert new == text.replace("ValueError", "KeyError")


# ----- the three wrong fixes of issue 30 ---------------------------------------------------------------


LATE_IMPORT = """\
    \"\"\"A server whose last line imports what a tool calls.\"\"\"
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("x")


    @mcp.tool()
    def fetch(url: str) -> str:
        if not url:
            raise ValueError("url is required.")
        return helper(url)


    from helpers import helper  # late import at the bottom
    """


def test_fl208s_import_goes_into_the_leading_block_not_after_a_late_import(tmp_path: Path) -> None:
    write_project(tmp_path, {"server.py": LATE_IMPORT, "helpers.py": "def helper(url):\n    return url\n"})
    before = _codes(tmp_path, ["FL208"])
    _fix(tmp_path, extend=["FL208"])
    fixed = (tmp_path / "server.py").read_text()
    compile(fixed, "server.py", "exec")
    lines = fixed.splitlines()
    imported = lines.index("from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail")
    assert imported < lines.index('mcp = FastMCP("x")'), fixed
    assert 'raise fail("missing_url", "url is required.")' in fixed
    after = _codes(tmp_path, ["FL208"])
    assert [c for c in after if c not in before and c not in ("FL111", "FL112")] == [], after


CONTRACTED = """\
    from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, not_found, tool

    ENTRIES = [
        ErrorContract(reason="NoMatch", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                      recovery="Call list_invoices to find a valid invoice id."),
    ]


    @tool("get_invoice", errors=ENTRIES)
    async def get_invoice(invoice_id: str, ctx: Context):
        if invoice_id == "x":
            raise ctx.fail("NoMatch")
        raise not_found("No such invoice")
    """


def test_fl107_and_fl201_together_introduce_no_fl203(tmp_path: Path) -> None:
    write_project(tmp_path, {"app.py": CONTRACTED})
    assert "FL203" not in _codes(tmp_path)
    _fix(tmp_path)
    fixed = (tmp_path / "app.py").read_text()
    compile(fixed, "app.py", "exec")
    assert 'raise ctx.fail("no_match", "No such invoice")' in fixed, fixed
    assert "FL203" not in _codes(tmp_path)


def test_a_fix_that_would_comment_out_a_closing_parenthesis_is_never_offered(tmp_path: Path) -> None:
    write_project(tmp_path, {"app.py": CONTRACTED})
    options = Options(paths=[str(tmp_path)], use_cache=False, jobs=1)
    report = lint(options)
    found = next(d for d in report.diagnostics if d.code == "FL301" or d.fix is not None)
    text = (tmp_path / "app.py").read_text()
    close = text.rindex(")")  # not_found("No such invoice")'s closing parenthesis
    broken = Diagnostic(found.code, found.name, found.severity, found.message, found.path, found.span)
    broken.fix = Fix("comment", [Edit(close, close, "  # )")])
    assert fixed_by_one(report, options, broken) is None  # the editor's quick fix is not offered
    assert fixed_by_one(report, options, found) is not None  # the real one is


def test_a_fix_that_introduces_a_diagnostic_is_skipped_and_said(tmp_path: Path, capsys) -> None:
    # FL204's fix (raise the error) on a fail() whose reason the contract lacks would surface FL203.
    write_project(
        tmp_path,
        {
            "app.py": """\
            from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool

            ENTRIES = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                                     recovery="Ask the user for another invoice id.")]


            @tool("get_invoice", errors=ENTRIES)
            async def get_invoice(invoice_id: str, ctx: Context):
                raise ctx.fail("no_match")
            """
        },
    )
    options = Options(paths=[str(tmp_path)], use_cache=False, jobs=1)
    report = lint(options)
    assert report.diagnostics == []
    text = (tmp_path / "app.py").read_text()
    site = text.index('ctx.fail("no_match")') + len('ctx.fail("')
    line = text[:site].count("\n") + 1
    column = site - text.rindex("\n", 0, site) - 1
    template = Diagnostic(
        "FL107",
        "x",
        "warning",
        "m",
        str(tmp_path / "app.py"),
        Span(line, column, line, column + 8, site, site + 8, line),
    )
    template.fix = Fix("rename", [Edit(site, site + len("no_match"), "nomatch")])
    assert fixed_by_one(report, options, template) is None  # 'nomatch' is undeclared: FL203
    report.diagnostics.append(template)
    apply_fixes(report, options, write=True, unsafe=True)
    assert (tmp_path / "app.py").read_text() == text
    assert "FL107 fix skipped: would introduce FL202, FL203" in capsys.readouterr().err


# ----- every fix, on files with a BOM and CRLF line endings ------------------------------------------


FIXED_EXAMPLES = [
    pytest.param(rule, example, id=f"{rule.code}-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.invalid_examples())
    if example.fixed is not None and not example.files
]


@pytest.mark.parametrize(("rule", "example"), FIXED_EXAMPLES)
def test_every_fix_keeps_a_bom_and_crlf_line_endings(rule, example, tmp_path: Path) -> None:
    source = rule.prelude + example.snippet
    expected = lint_example(rule, example).fixed()
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_bytes(b"\xef\xbb\xbf" + source.replace("\n", "\r\n").encode())
    options = Options(paths=[str(tmp_path)], selection=Selection(select=[rule.code]), use_cache=False, jobs=1)
    apply_fixes(lint(options), options, write=True, unsafe=True)
    data = (tmp_path / "app.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    text = data[3:].decode()
    assert "\n" not in text.replace("\r\n", "")  # no bare LF crept in
    assert text.replace("\r\n", "\n")[len(rule.prelude) :] == expected


# ----- fixes around comments, parentheses and line continuations ---------------------------------------

AROUND = [
    (
        "FL204",
        """\
        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            if invoice_id == "x":  # the bad one
                ctx.fail(  # why
                    "no_match",
                )  # after
            return {}
        """,
        'raise ctx.fail(  # why\n            "no_match",\n        )  # after',
    ),
    (
        "FL302",
        """\
        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            try:
                return INVOICES[invoice_id]
            except KeyError as e:  # lookup
                raise (
                    ctx.fail("no_match")  # inside
                )  # after
        """,
        'raise (\n            ctx.fail("no_match")  # inside\n        ) from e  # after',
    ),
    (
        "FL301",
        """\
        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise McpError(JsonRpcErrorCode.NOT_FOUND,  # the code
                           "No such " \\
                           "invoice")  # after
        """,
        'raise not_found(  # the code\n                   "No such " \\\n                   "invoice")  # after',
    ),
]

HANDLER_FILE = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, McpError, tool

ENTRIES = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                         recovery="Call list_invoices to find a valid invoice id.")]
INVOICES = {}


"""


@pytest.mark.parametrize(("code", "source", "wanted"), AROUND, ids=[case[0] for case in AROUND])
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_fixes_keep_comments_parentheses_and_continuations(code, source, wanted, newline, tmp_path: Path) -> None:
    text = HANDLER_FILE + textwrap.dedent(source)
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_bytes(text.replace("\n", newline).encode())
    options = Options(paths=[str(tmp_path)], selection=Selection(select=[code]), use_cache=False, jobs=1)
    report = lint(options)
    assert any(d.code == code and d.fix is not None for d in report.diagnostics), report.diagnostics
    apply_fixes(report, options, write=True, unsafe=True)
    fixed = (tmp_path / "app.py").read_bytes().decode()
    compile(fixed, "app.py", "exec")
    assert wanted.replace("\n", newline) in fixed, fixed
    assert fixed.count("#") == text.count("#")  # every comment kept


def test_an_argument_put_before_another_rewrites_the_call_not_a_tuple() -> None:
    # Found on the corpus: '"reason", ' inserted before an f-string parses as a tuple in the
    # f-string's place; the rewrite widens to the call instead (libcst could not render the tuple).
    text = 'def f():\n    try:\n        pass\n    except Exception as e:\n        raise Exception(f"Failed {x}: {e}") from e\n'
    callee, message = text.index("Exception(f"), text.index('f"Failed')
    edits = [Edit(callee, callee + len("Exception"), "fail"), Edit(message, message, '"get_failed", ')]
    assert rewrite(text, edits) == text.replace('Exception(f"', 'fail("get_failed", f"')


# ----- 200 mutants: comments and odd layout around every fixable construct ---------------------------

MUTANTS_PER_EXAMPLE = 200 // max(1, len(FIXED_EXAMPLES)) + 1


def _commented(source: str, seed: int) -> str | None:
    """``source`` with comments (``# m<k>``) and line breaks put after some ``(``, ``[`` and ``,``
    inside brackets, and at the end of some lines: legal everywhere, and what a fix must keep."""
    import io
    import random
    import tokenize

    chooser = random.Random(seed)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    inserts: list[tuple[int, str]] = []
    depth = 0
    for index, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        at = starts[token.end[0] - 1] + token.end[1]
        if depth > 0 and token.type == tokenize.OP and token.string in "([{," and chooser.random() < 0.35:
            if following is not None and following.type not in (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE):
                inserts.append((at, f"  # m{len(inserts)}\n" + " " * (4 * depth + 4)))
        elif token.type == tokenize.NEWLINE and token.string and chooser.random() < 0.3:
            previous = tokens[index - 1]
            if previous.type != tokenize.COMMENT:
                inserts.append((starts[token.start[0] - 1] + token.start[1], f"  # m{len(inserts)}"))
    if not inserts:
        return None
    for at, text in sorted(inserts, reverse=True):
        source = source[:at] + text + source[at:]
    try:
        ast.parse(source)
    except SyntaxError:
        return None
    return source


MUTANTS = [
    pytest.param(rule, example, seed, id=f"{rule.code}-{index}-{seed}")
    for rule in all_rules()
    for index, example in enumerate(rule.invalid_examples())
    if example.fixed is not None and not example.files
    for seed in range(MUTANTS_PER_EXAMPLE)
]


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "example", "seed"), MUTANTS)
def test_fixes_on_commented_mutants_keep_every_comment_and_converge(rule, example, seed, tmp_path: Path) -> None:
    import re

    source = _commented(rule.prelude + example.snippet, seed)
    if source is None:
        pytest.skip("no place for a comment in this example")
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    path = tmp_path / "app.py"
    path.write_text(source)
    options = Options(paths=[str(tmp_path)], selection=Selection(select=[rule.code]), use_cache=False, jobs=1)
    apply_fixes(lint(options), options, write=True, unsafe=True)
    fixed = path.read_text()
    compile(fixed, "app.py", "exec")
    kept = set(re.findall(r"# m\d+", fixed))
    wanted = set(re.findall(r"# m\d+", source))
    if rule.code != "FL101":  # FL101 drops an `errors=[]` argument, and a comment inside it with it
        assert kept == wanted, sorted(wanted - kept)
    apply_fixes(lint(options), options, write=True, unsafe=True)
    assert path.read_text() == fixed  # a second --fix changes nothing
