"""``fusion-lint --stdin-filename NAME -``: the buffer is linted as if it were the file NAME — that
file's configuration, that file's project for cross-file resolution, that file's name in the output
(DESIGN §6; the language server relies on the same path)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SEARCH_ERRORS = [
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="Nothing matched",
                  recovery="Call search again with a broader query string."),
]
"""

CLEAN = """\
from mcp_fusion import Context, tool
from app.contracts import SEARCH_ERRORS


@tool("search", errors=SEARCH_ERRORS)
def search(query: str, ctx: Context) -> str:
    if not query:
        raise ctx.fail("no_match")
    return query
"""

# FL203 needs the contract imported from the sibling file: unresolved, it would be FL190 instead.
UNDECLARED = CLEAN.replace('raise ctx.fail("no_match")', 'raise ctx.fail("no_such_reason")')
DISCARDED = CLEAN.replace('raise ctx.fail("no_match")', 'ctx.fail("no_match")')  # FL204


def _project(root: Path, tools: str = CLEAN, config: str = "") -> None:
    """``root`` becomes the project root: its own config, a package with the contract and the tool."""
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n" + config)
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "contracts.py").write_text(CONTRACTS)
    (root / "app" / "tools.py").write_text(tools)


def _json(stdout: str) -> list[dict]:
    return json.loads(stdout)


def test_the_buffer_is_linted_not_the_file_on_disk(tmp_path: Path, run_cli) -> None:
    _project(tmp_path)  # the disk holds the clean version
    outcome = run_cli(
        "--stdin-filename", "app/tools.py", "--output-format", "json", "--no-cache", "-", input=UNDECLARED
    )
    assert outcome.exit_code == 1, outcome.stdout + outcome.stderr
    found = _json(outcome.stdout)
    assert [(d["code"], d["filename"], d["location"]["row"]) for d in found] == [("FL203", "app/tools.py", 8)]
    assert "no_such_reason" in found[0]["message"]


def test_a_clean_buffer_over_a_broken_file_is_clean(tmp_path: Path, run_cli) -> None:
    _project(tmp_path, tools=UNDECLARED)
    outcome = run_cli("--stdin-filename", "app/tools.py", "--no-cache", input=CLEAN)
    assert outcome.exit_code == 0, outcome.stdout
    assert "All checks passed (1 tool; 1 file checked)." in outcome.stdout


def test_a_new_file_resolves_its_siblings(tmp_path: Path, run_cli) -> None:
    """A file that does not exist yet (an unsaved editor buffer) still sees its project."""
    _project(tmp_path)
    outcome = run_cli(
        "--stdin-filename",
        "app/new_tools.py",
        "--output-format",
        "json",
        "--no-cache",
        input=UNDECLARED.replace('"search"', '"search_again"').replace("def search(", "def search_again("),
    )
    found = _json(outcome.stdout)
    assert [(d["code"], d["filename"]) for d in found] == [("FL203", "app/new_tools.py")], found


def test_relative_import_of_the_contract_resolves(tmp_path: Path, run_cli) -> None:
    _project(tmp_path)
    buffer = UNDECLARED.replace("from app.contracts import", "from .contracts import")
    outcome = run_cli("--stdin-filename", "app/tools.py", "--output-format", "json", "--no-cache", input=buffer)
    assert [d["code"] for d in _json(outcome.stdout)] == ["FL203"]


def test_the_files_own_config_applies(tmp_path: Path, run_cli) -> None:
    """Run from outside the project: the config is the one above the named file, not the cwd's."""
    outer = tmp_path
    (outer / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    project = outer / "service"
    project.mkdir()
    _project(project, config='ignore = ["fail-not-raised"]\n')
    ignored = run_cli("--stdin-filename", "service/app/tools.py", "--no-cache", "-", input=DISCARDED)
    assert ignored.exit_code == 0, ignored.stdout
    (project / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    reported = run_cli("--stdin-filename", "service/app/tools.py", "--no-cache", "-", input=DISCARDED)
    assert reported.exit_code == 1
    assert "service/app/tools.py:8:9: FL204" in reported.stdout


def test_an_excluded_name_is_not_reported(tmp_path: Path, run_cli) -> None:
    """Configured excludes apply to a name given explicitly (pre-commit, editors): also to stdin's."""
    _project(tmp_path, config='extend-exclude = ["app/tools.py"]\n')
    outcome = run_cli("--stdin-filename", "app/tools.py", "--no-cache", input=DISCARDED)
    assert outcome.exit_code == 0, outcome.stdout
    assert "0 files checked" in outcome.stdout


def test_show_source_quotes_the_buffer(tmp_path: Path, run_cli) -> None:
    _project(tmp_path)
    shifted = "# a comment the disk does not have\n" + DISCARDED
    outcome = run_cli("--stdin-filename", "app/tools.py", "--no-cache", "--show-source", "-q", input=shifted)
    first, quoted = outcome.stdout.splitlines()[:2]
    assert first.startswith("app/tools.py:9:9: FL204 ")
    assert quoted == '  9 |         ctx.fail("no_match")'


def test_a_syntax_error_in_the_buffer_is_fl000(tmp_path: Path, run_cli) -> None:
    _project(tmp_path)
    outcome = run_cli(
        "--stdin-filename", "app/tools.py", "--no-cache", "--output-format", "json", input=CLEAN + "def broken(:\n"
    )
    found = _json(outcome.stdout)
    assert [(d["code"], d["location"]["row"]) for d in found] == [("FL000", 10)]


def test_the_buffer_is_decoded_like_a_file(tmp_path: Path, run_cli) -> None:
    """A coding cookie applies to the bytes on stdin as it would to the file."""
    _project(tmp_path)
    latin = "# -*- coding: latin-1 -*-\n" + DISCARDED.replace("return query", "return query + 'caf\u00e9'")
    outcome = run_cli(
        "--stdin-filename", "app/tools.py", "--no-cache", "--output-format", "json", input=latin.encode("latin-1")
    )
    assert [(d["code"], d["location"]["row"]) for d in _json(outcome.stdout)] == [("FL204", 9)]


def test_usage_errors(tmp_path: Path, run_cli) -> None:
    _project(tmp_path)
    dash_alone = run_cli("-", input=CLEAN)
    assert dash_alone.exit_code == 2 and "--stdin-filename" in dash_alone.stderr
    with_paths = run_cli("--stdin-filename", "app/tools.py", "app", input=CLEAN)
    assert with_paths.exit_code == 2 and "standard input" in with_paths.stderr


def test_every_format_names_the_stdin_file(tmp_path: Path, run_cli) -> None:
    _project(tmp_path)
    for output_format, expected in (
        ("github", "::error file=app/tools.py,line=8,col=9,"),
        ("sarif", '"uri": "app/tools.py"'),
        ("junit", 'file="app/tools.py"'),
    ):
        outcome = run_cli(
            "--stdin-filename", "app/tools.py", "--no-cache", "--output-format", output_format, input=DISCARDED
        )
        assert outcome.exit_code == 1
        assert expected in outcome.stdout, textwrap.shorten(outcome.stdout, 400)
