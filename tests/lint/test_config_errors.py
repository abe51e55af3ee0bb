"""Every configuration error names the file and the key (DESIGN §6, §12.4, issue 17): these were
"internal error: …", or accepted and then nothing was checked."""

from __future__ import annotations

from pathlib import Path

import pytest

BROKEN = {
    "a reversed range in exclude": (
        b"exclude = ['[z-a]']\n",
        "pyproject.toml: [tool.fusion-lint] key 'exclude': cannot parse the pattern '[z-a]': bad character range z-a",
    ),
    "a reversed range in extend-exclude": (
        b"extend-exclude = ['build/', 'gen/[9-0]*.py']\n",
        "key 'extend-exclude': cannot parse the pattern 'gen/[9-0]*.py': bad character range 9-0",
    ),
    "a keyword as a module name": (
        b"runtime-modules = ['import']\n",
        "key 'runtime-modules': 'import' is not a module name: 'import' is a Python keyword",
    ),
    "a keyword inside a dotted name": (
        b"runtime-modules = ['vendor.class.fusion']\n",
        "key 'runtime-modules': 'vendor.class.fusion' is not a module name: 'class' is a Python keyword",
    ),
    "invalid UTF-8": (
        b"select = ['FL1']\nexclude = ['caf\xe9']\n",
        "pyproject.toml: line 3 (key 'exclude'): not valid UTF-8 (byte 51); TOML files are UTF-8",
    ),
    "arrays nested too deeply": (
        b"select = " + b"[" * 5000 + b"]" * 5000 + b"\n",
        "pyproject.toml: line 2 (key 'select'): invalid TOML: arrays or tables nested too deeply",
    ),
    "inline tables nested too deeply": (
        b"per-file-ignores = " + b"{a = " * 5000 + b"1" + b"}" * 5000 + b"\n",
        "pyproject.toml: line 2 (key 'per-file-ignores'): invalid TOML: arrays or tables nested too deeply",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_configuration_is_one_line_naming_file_and_key(tmp_path: Path, run_cli, case: str) -> None:
    table, expected = BROKEN[case]
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.fusion-lint]\n" + table)
    (tmp_path / "app.py").write_text("import mcp_fusion\n")
    outcome = run_cli("check", ".", "--no-cache")
    assert outcome.exit_code == 2, outcome.stderr
    assert expected in outcome.stderr
    assert "internal error" not in outcome.stderr and "Traceback" not in outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1


def test_a_bracket_that_closes_a_set_first_is_part_of_it(tmp_path: Path, run_cli) -> None:
    """``[]]`` is the set holding ``]`` (fnmatch, git): a valid pattern, not an error."""
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\nextend-exclude = ['gen[]]*.py']\n")
    (tmp_path / "gen].py").write_text("import mcp_fusion\ndef broken(:\n")
    (tmp_path / "app.py").write_text("import mcp_fusion\n")
    outcome = run_cli("check", ".", "--no-cache")
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr


def test_a_gitignore_pattern_that_cannot_be_parsed_is_skipped_not_a_crash(tmp_path: Path, run_cli) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / ".gitignore").write_text("[z-a]\nignored.py\n")
    (tmp_path / "ignored.py").write_text("import mcp_fusion\ndef broken(:\n")
    (tmp_path / "app.py").write_text("import mcp_fusion\n")
    outcome = run_cli("check", ".", "--no-cache")
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
