"""Golden output: every diagnostic on the fixtures and on a frozen copy of the rule examples, in
every output format, byte for byte as committed.

The expected files were produced by the linter before the restructuring of issue 14 (rules as pure
functions of resolved definitions); a restructuring must leave them unchanged. A deliberate change
of behaviour regenerates them (``FUSION_LINT_REGENERATE_GOLDEN=1 python -m pytest
tests/lint/test_golden.py``) and the diff shows, in review, exactly what changed for users.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from fusion_lint.cli import main

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
FORMATS = ("text", "json", "sarif", "github", "junit")

# (name of the expected files, working directory, path argument, extra flags)
CASES = [
    ("fixtures_example_server", REPO, "fixtures/example_server", ()),
    ("fixtures_example_server.ALL", REPO, "fixtures/example_server", ("--select", "ALL")),
    ("fixtures", REPO, "fixtures", ()),
    ("fixtures.ALL", REPO, "fixtures", ("--select", "ALL")),
    ("examples", GOLDEN / "examples", ".", ()),
]


def _run(cwd: Path, target: str, flags: tuple[str, ...], output_format: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, [target, "--no-cache", "--output-format", output_format, *flags])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.output
    # SARIF names the working directory as the base of its relative URIs.
    return result.stdout.replace(cwd.resolve().as_uri() + "/", "file://CWD/")


@pytest.mark.parametrize("output_format", FORMATS)
@pytest.mark.parametrize(("name", "cwd", "target", "flags"), CASES, ids=[case[0] for case in CASES])
def test_output_is_unchanged(name: str, cwd: Path, target: str, flags: tuple[str, ...], output_format: str,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    produced = _run(cwd, target, flags, output_format, monkeypatch)
    expected_path = GOLDEN / "expected" / f"{name}.{output_format}"
    if os.environ.get("FUSION_LINT_REGENERATE_GOLDEN"):
        expected_path.write_text(produced)
    assert produced == expected_path.read_text()
