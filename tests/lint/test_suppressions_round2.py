"""Suppressions, round two (DESIGN §13.5): a ``# noqa`` after the closing quotes of a multi-line
string covers the string (ruff's convention), FL900 points at the directive, a ``# fusion-lint:``
comment that is no directive is FL900, and a file with CR-only line endings is numbered as its LF
twin is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.fix.apply import apply_edits, noqa_edits
from tests.lint.harness import lint_sources

IMPORTS = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode\n"
# FL112 (recovery too short) fires on line 2, where the multi-line recovery string starts.
STRING_TOOL = (
    IMPORTS
    + '@tool("get_item", errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="Gone", reason="no_match", recovery="""\n'
    + "Call get_item again.\n"
    + '""")]){comment}\n'
    + "def get_item(item_id: str):\n"
    + "    return item_id\n"
)


def report(source: str | bytes, **selection: list[str]) -> list[tuple[str, int, int, str]]:
    data = source if isinstance(source, bytes) else source.encode()
    found = lint_sources({"app.py": data.decode("utf-8")}, **selection)  # type: ignore[arg-type]
    return [(d.code, d.span.line, d.span.col, d.message) for d in found.diagnostics]


def codes_at(found: list[tuple[str, int, int, str]]) -> list[tuple[str, int]]:
    return [(code, line) for code, line, _, _ in found]


# ----- a noqa after the closing quotes of a multi-line string ---------------------------------------


def test_without_a_comment_the_strings_finding_is_reported() -> None:
    assert codes_at(report(STRING_TOOL.format(comment=""))) == [("FL112", 2)]


@pytest.mark.parametrize("comment", ["  # noqa: FL112", "  # noqa", "  # fusion-lint: ignore[FL112]"])
def test_a_noqa_after_the_closing_quotes_suppresses_the_strings_findings(comment: str) -> None:
    assert report(STRING_TOOL.format(comment=comment)) == []


def test_the_strings_noqa_is_used_so_fl900_does_not_report_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(STRING_TOOL.format(comment="  # noqa: FL112"))
    options = Options(paths=[str(tmp_path)], use_cache=False, jobs=1, report_unused_suppressions=True)
    assert [d.code for d in lint(options).diagnostics] == []


def test_the_strings_noqa_names_what_it_silences() -> None:
    assert codes_at(report(STRING_TOOL.format(comment="  # noqa: FL300"))) == [("FL112", 2)]


def test_a_noqa_after_one_string_does_not_cover_another_statement() -> None:
    # The string closes on line 4; the finding of the statement after it (line 7) is kept.
    source = IMPORTS + 'NOTE = """\nhello\n"""  # noqa\n' + STRING_TOOL.format(comment="").removeprefix(IMPORTS)
    assert codes_at(report(source)) == [("FL112", 5)]


def test_add_noqa_writes_the_comment_after_the_closing_quotes() -> None:
    source = STRING_TOOL.format(comment="")
    found = lint_sources({"app.py": source}).diagnostics
    edits, unplaced = noqa_edits(source, found)
    assert unplaced == []
    fixed = apply_edits(source, edits)
    assert fixed.split("\n")[3] == '""")])  # noqa: FL112'
    assert report(fixed) == []


# ----- FL900 at the comment, and a comment of ours that is no directive ------------------------------


def test_fl900_points_at_the_directive_not_at_column_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(
        IMPORTS
        + "import os  # why: kept  # noqa: FL300\n"
        + "    # fusion-lint: noqa: FL302\n".lstrip()
        + "import re  # fusion-lint: ignore[FL204]\n"
    )
    options = Options(paths=[str(tmp_path)], use_cache=False, jobs=1, report_unused_suppressions=True)
    found = [(d.code, d.span.line, d.span.col, d.span.end_col) for d in lint(options).diagnostics]
    line2 = "import os  # why: kept  # noqa: FL300"
    line4 = "import re  # fusion-lint: ignore[FL204]"
    assert found == [
        ("FL900", 2, line2.index("# noqa"), len(line2)),
        ("FL900", 3, 0, len("# fusion-lint: noqa: FL302")),
        ("FL900", 4, line4.index("#"), len(line4)),
    ]


@pytest.mark.parametrize(
    "comment",
    [
        "# fusion-lint: ignored",
        "# fusion-lint : ignore[FL300]",
        "# fusion-lint: disable=FL300",
        "# fusion-lint: noqa",  # a whole-file directive after code
        "# why  # fusion-lint: skip",
    ],
)
def test_an_unknown_directive_is_fl900_at_the_comment(comment: str) -> None:
    line = f"x = 1  {comment}"
    found = report(IMPORTS + line + "\n")
    directive = comment[comment.rindex("# fusion-lint") :] if "fusion-lint" in comment else comment
    assert [(c, n, col) for c, n, col, _ in found] == [("FL900", 2, line.index(directive))]
    assert found[0][3].startswith(f"unknown directive '{directive}' suppresses nothing")


def test_an_unknown_directive_follows_the_selection() -> None:
    source = IMPORTS + "x = 1  # fusion-lint: ignored\n"
    assert codes_at(report(source)) == [("FL900", 2)]
    assert report(source, select=["FL1"]) == []
    assert codes_at(report(source, select=["FL1", "FL900"])) == [("FL900", 2)]


@pytest.mark.parametrize(
    "comment",
    [
        "# fusion-lint: ignore",
        "# fusion-lint: ignore[FL300]",
        "# fusion-lint: ignore[FL300] reason: legacy",
        "# fusion-lint:ignore",
        "# FUSION-LINT: IGNORE",
    ],
)
def test_known_line_directives_are_not_reported(comment: str) -> None:
    assert report(IMPORTS + f"x = 1  {comment}\n") == []


def test_a_directive_in_a_string_is_no_comment() -> None:
    assert report(IMPORTS + "s = '# fusion-lint: bogus'\n") == []


# ----- CR-only line endings ---------------------------------------------------------------------------

# FL204 on line 7, FL300 on line 9; line 3 carries a suppression, line 10 an unknown directive.
CR_TOOL = (
    "from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool\n"
    "\n"
    '@tool("lookup", errors=[ErrorContract(reason="missing", code=JsonRpcErrorCode.NOT_FOUND,  # noqa: FL999\n'
    '    when="No such key", recovery="Call lookup again with an existing key.")])\n'
    "def lookup(key: str, ctx: Context) -> str:\n"
    "    if not key:\n"
    '        ctx.fail("missing")\n'
    '    if key == "x":\n'
    '        raise ValueError("bad")  # noqa: FL302\n'
    "    return key  # fusion-lint: ignored\n"
)


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
def test_cr_line_endings_give_the_positions_of_lf(ending: str, tmp_path: Path) -> None:
    def run(text: str) -> list[tuple[str, int, int, int, int]]:
        (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
        (tmp_path / "app.py").write_bytes(text.encode())
        options = Options(paths=[str(tmp_path)], use_cache=False, jobs=1, report_unused_suppressions=True)
        diagnostics = lint(options).diagnostics
        return [(d.code, d.span.line, d.span.col, d.span.end_line, d.span.end_col) for d in diagnostics]

    lf = run(CR_TOOL)
    assert [(code, line) for code, line, *_ in lf] == [
        ("FL900", 3),
        ("FL204", 7),
        ("FL300", 9),
        ("FL900", 9),
        ("FL900", 10),
    ]
    assert run(CR_TOOL.replace("\n", ending)) == lf


def test_cr_line_endings_suppress_and_fix_like_lf(tmp_path: Path) -> None:
    source = CR_TOOL.replace('raise ValueError("bad")  # noqa: FL302', 'raise ValueError("bad")  # noqa: FL300')
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    app = tmp_path / "app.py"
    app.write_bytes(source.replace("\n", "\r").encode())
    options = Options(paths=[str(tmp_path)], use_cache=False, jobs=1, selection=Selection(select=["FL204", "FL300"]))
    found = lint(options)
    assert [(d.code, d.span.line) for d in found.diagnostics] == [("FL204", 7)]
    fixed = apply_edits(app.read_bytes().decode(), [e for d in found.diagnostics if d.fix for e in d.fix.edits])
    assert "\n" not in fixed
    assert fixed.split("\r")[6] == '        raise ctx.fail("missing")'
