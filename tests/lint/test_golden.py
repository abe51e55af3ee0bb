"""Golden output: every diagnostic on the fixtures and on a frozen copy of the rule examples, in
every output format, byte for byte as committed.

The expected files were produced by the linter before the restructuring of issue 14 (rules as pure
functions of resolved definitions); a restructuring must leave them unchanged. A deliberate change
of behaviour regenerates them (``FUSION_LINT_REGENERATE_GOLDEN=1 python -m pytest
tests/lint/test_golden.py``) and the diff shows, in review, exactly what changed for users.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.output import FORMATTERS

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


@cache
def _report(cwd: Path, target: str, flags: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """One lint per case, as ``fusion-lint TARGET --no-cache [--select ...]`` runs it from ``cwd``."""
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        select = list(flags[1:]) if flags[:1] == ("--select",) else None
        return lint(Options(paths=[target], selection=Selection(select=select), use_cache=False))
    finally:
        os.chdir(previous)


def _run(cwd: Path, target: str, flags: tuple[str, ...], output_format: str, monkeypatch: pytest.MonkeyPatch) -> str:
    report = _report(cwd, target, flags)
    assert report.diagnostics
    monkeypatch.chdir(cwd)  # paths are shown relative to it
    produced = FORMATTERS[output_format](report, show_source=False, quiet=False, statistics=False)
    # SARIF names the repository root as the base of its relative URIs (the checkout's root: the
    # examples, run from their own folder, are still named from it).
    return produced.replace(REPO.resolve().as_uri() + "/", "file://CWD/")


@pytest.mark.parametrize("output_format", FORMATS)
@pytest.mark.parametrize(("name", "cwd", "target", "flags"), CASES, ids=[case[0] for case in CASES])
def test_output_is_unchanged(
    name: str, cwd: Path, target: str, flags: tuple[str, ...], output_format: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    produced = _run(cwd, target, flags, output_format, monkeypatch)
    expected_path = GOLDEN / "expected" / f"{name}.{output_format}"
    if os.environ.get("FUSION_LINT_REGENERATE_GOLDEN"):
        expected_path.write_text(produced)
    assert produced == expected_path.read_text()
