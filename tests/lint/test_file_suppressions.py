"""Whole-file suppressions (``# fusion-lint: noqa``, ``# fusion-lint: noqa: FL300, FL302``) and what
FL900 judges: only fusion-lint's own codes and names (DESIGN §12.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.source.pipeline import file_suppressions

IMPORTS = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode\n"
# Line 3: FL107 (reason format); line 5: FL300 (a builtin exception in the handler).
TOOL = (
    IMPORTS
    + '@tool("get_item", errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="Gone",\n'
    + '    reason="NoMatch", recovery="Call get_item again with a valid id.")])\n'
    + "def get_item(item_id: str):\n"
    + "    raise ValueError('bad')\n"
)


def run(
    tmp_path: Path, source: str, unused: bool = False, select: Sequence[str] | None = None, config: str = ""
) -> list[tuple[str, int, str]]:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n" + config)
    (tmp_path / "app.py").write_text(source)
    report = lint(
        Options(
            paths=[str(tmp_path)],
            use_cache=False,
            jobs=1,
            report_unused_suppressions=unused,
            selection=Selection(select=list(select) if select else None),
        )
    )
    return [(d.code, d.span.line, d.message) for d in report.diagnostics]


def _report(tmp_path: Path, source: str) -> list:
    (tmp_path / "app.py").write_text(source)
    return lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1)).diagnostics


def codes(found: list[tuple[str, int, str]]) -> list[tuple[str, int]]:
    return [(code, line) for code, line, _ in found]


def test_without_a_suppression_both_findings_are_reported(tmp_path: Path) -> None:
    assert codes(run(tmp_path, TOOL)) == [("FL107", 3), ("FL300", 5)]


@pytest.mark.parametrize(
    "comment",
    [
        "# fusion-lint: noqa",
        "#fusion-lint:noqa",
        "# FUSION-LINT: NOQA",
        "    # fusion-lint: noqa  ",
    ],
)
def test_a_whole_file_suppression_anywhere_silences_every_finding(tmp_path: Path, comment: str) -> None:
    assert run(tmp_path, TOOL + comment + "\n") == []
    assert run(tmp_path, comment + "\n" + TOOL) == []


@pytest.mark.parametrize(
    "comment",
    [
        "# fusion-lint: noqa: FL300",
        "# fusion-lint: noqa: fl300, FL302",
        "# fusion-lint: noqa:FL300 FL999",
        "# fusion-lint: noqa: prefer-mcp-error-in-handler",
    ],
)
def test_a_whole_file_suppression_with_codes_silences_those(tmp_path: Path, comment: str) -> None:
    assert codes(run(tmp_path, comment + "\n" + TOOL)) == [("FL107", 4)]


@pytest.mark.parametrize(
    ("source", "typo"),
    [
        # after code: not a line of its own
        (TOOL.replace("    raise", "    x = 1  # fusion-lint: noqa\n    raise"), (5, 11, "'# fusion-lint: noqa'")),
        (TOOL + '"""\n# fusion-lint: noqa\n"""\n', None),  # inside a string: no comment at all
        (TOOL + "# fusion-lint: noqa FL300\n", (6, 0, "'# fusion-lint: noqa FL300'")),  # no colon: must not silence all
        (TOOL + "# fusion-lint: noqa:\n", (6, 0, "'# fusion-lint: noqa:'")),  # a colon and no code
        (TOOL + "# fusion-lint: noqa-later\n", (6, 0, "'# fusion-lint: noqa-later'")),
    ],
)
def test_what_is_not_a_whole_file_suppression(tmp_path: Path, source: str, typo: tuple | None) -> None:
    """It silences nothing; a comment of ours that is no directive is FL900 at the comment."""
    found = run(tmp_path, source)
    assert {code for code, _ in codes(found)} - {"FL900"} == {"FL107", "FL300"}
    fl900 = [(d.span.line, d.span.col, d.message) for d in _report(tmp_path, source) if d.code == "FL900"]
    if typo is None:
        assert fl900 == []
    else:
        line, col, quoted = typo
        assert [(n, c) for n, c, _ in fl900] == [(line, col)]
        assert fl900[0][2].startswith(f"unknown directive {quoted} suppresses nothing")


def test_the_table_of_whole_file_suppressions() -> None:
    text = "# fusion-lint: noqa: FL300, error-contract-empty\nx = 1\n  # fusion-lint: noqa\ns = '# fusion-lint: noqa'\n"
    assert file_suppressions(text) == {1: frozenset({"FL300", "error-contract-empty"}), 3: frozenset({"*"})}
    assert file_suppressions("x = 1\n") == {}


# ----- FL900: only fusion-lint's own -------------------------------------------------------------


def test_another_linters_code_in_a_shared_noqa_is_left_alone(tmp_path: Path) -> None:
    source = "import os  # noqa: F401, FL300\n" + TOOL
    found = run(tmp_path, source, unused=True)
    assert codes(found) == [("FL900", 1), ("FL107", 4), ("FL300", 6)]
    assert found[0][2] == "unused suppression: FL300 suppresses nothing here; remove it"
    assert "F401" not in found[0][2]
    # used: nothing is reported about the line, whatever else it lists
    used = TOOL.replace("raise ValueError('bad')", "raise ValueError('bad')  # noqa: BLE001, FL300, E501")
    assert codes(run(tmp_path, used, unused=True)) == [("FL107", 3)]


@pytest.mark.parametrize("comment", ["# noqa: F401", "# noqa: F401,E501", "# noqa", "# type: ignore  # noqa: PLR0913"])
def test_foreign_codes_and_a_bare_noqa_are_never_reported(tmp_path: Path, comment: str) -> None:
    assert codes(run(tmp_path, f"import os  {comment}\n" + TOOL, unused=True)) == [("FL107", 4), ("FL300", 6)]


def test_our_own_unused_suppressions_are_reported(tmp_path: Path) -> None:
    source = (
        "import os  # fusion-lint: ignore\n"  # a bare one of ours
        "import re  # noqa: FL399\n"  # a code of ours naming no rule
        "import io  # fusion-lint: ignore[fail-not-raised]\n" + TOOL
    )
    found = run(tmp_path, source, unused=True)
    assert [message for code, _, message in found if code == "FL900"] == [
        "unused suppression: '# fusion-lint: ignore' suppresses nothing here; remove it",
        "unused suppression: FL399 suppresses nothing here; remove it",
        "unused suppression: fail-not-raised suppresses nothing here; remove it",
    ]


def test_a_code_of_a_rule_that_did_not_run_is_not_judged(tmp_path: Path) -> None:
    source = "import os  # noqa: FL207, FL204\n" + TOOL  # FL207 is opt-in; FL204 runs
    found = run(tmp_path, source, unused=True)
    assert [m for c, _, m in found if c == "FL900"] == ["unused suppression: FL204 suppresses nothing here; remove it"]
    assert [c for c, _, _ in run(tmp_path, source, unused=True, select=["FL3"])] == ["FL300"]


def test_unused_whole_file_suppressions(tmp_path: Path) -> None:
    found = run(tmp_path, "# fusion-lint: noqa: FL300, FL302\n" + TOOL, unused=True)
    assert codes(found) == [("FL900", 1), ("FL107", 4)]
    assert found[0][2] == "unused suppression: FL302 suppresses nothing in this file; remove it"
    clean = TOOL.replace("    raise ValueError('bad')", "    return None").replace('"NoMatch"', '"no_match"')
    blanket = run(tmp_path, "# fusion-lint: noqa\n" + clean, unused=True)
    assert blanket == [
        ("FL900", 1, "unused suppression: '# fusion-lint: noqa' suppresses nothing in this file; remove it")
    ]
    assert run(tmp_path, "# fusion-lint: noqa\n" + TOOL, unused=True) == []


def test_a_line_suppression_is_used_before_the_files(tmp_path: Path) -> None:
    source = "# fusion-lint: noqa: FL300\n" + TOOL.replace(
        "raise ValueError('bad')", "raise ValueError('bad')  # noqa: FL300"
    )
    assert codes(run(tmp_path, source, unused=True)) == [("FL900", 1), ("FL107", 4)]
