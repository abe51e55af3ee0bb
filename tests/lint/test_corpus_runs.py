"""The linter on the real servers of ``../shared/corpus`` (issue 19): it never fails inside, and a file
named alone (as pre-commit names changed files) gets the diagnostics the whole-tree run gives it.

Both tests are slow (each lints real trees end to end) and skip when the corpus is absent. They read
the corpus only: every run is ``--no-cache`` (the corpus is read-only, and a cache could hide a
difference between the two runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, Selection, analyse, configure, lint

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = (REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus")
CORPUS = next((path for path in CANDIDATES if path.is_dir()), None)
# The unit with the most Python files (153) and tools (123): the largest pre-commit would meet.
LARGEST_UNIT = "awslabs+mcp/src/amazon-bedrock-agentcore-mcp-server"
SAMPLE = 10  # files named alone: the ones defining the most tools, resources and prompts

needs_corpus = pytest.mark.skipif(CORPUS is None, reason="../shared/corpus is absent (real servers, not shipped)")
pytestmark = [pytest.mark.slow, needs_corpus]


def test_every_rule_on_the_whole_corpus_no_internal_error_no_traceback(tmp_path):
    """Every rule selected (``ALL`` includes the opt-in ones), as the CLI runs: exit 0 or 1, nothing
    on stderr, no FL999, and the summary counts definitions (the corpus is full of them)."""
    assert CORPUS is not None
    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", str(CORPUS), "--no-cache", "--select", "ALL", "--output-format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr[-5000:]
    assert done.returncode in (0, 1), done.stderr[-5000:]
    diagnostics = json.loads(done.stdout)
    codes = Counter(d["code"] for d in diagnostics)
    internal = [f"{d['filename']}:{d['location']['row']}: {d['message']}" for d in diagnostics if d["code"] == "FL999"]
    assert internal == []
    # A run that silently analysed nothing would pass the lines above: the corpus's tools raise and
    # return failures as success everywhere (issue 19), so those rules must have fired.
    assert codes["FL300"] > 0 and codes["FL306"] > 0 and codes["FL307"] > 0, codes


def _unit_files_by_definitions(unit: Path) -> list[str]:
    """The unit's files, the ones defining the most definitions first (ties by path)."""
    options = Options(paths=[str(unit)], use_cache=False)
    config, settings = configure(options)
    view = analyse(options, config, settings).resolved()
    per_file = Counter(d.path for d in view.definitions)
    return sorted(per_file, key=lambda path: (-per_file[path], path))


def _diagnostics_of(path: str, report) -> list[tuple]:  # noqa: ANN001 (diagnostics.Report)
    return sorted(
        (d.code, d.span.line, d.span.col, d.span.end_line, d.span.end_col, d.message, d.fix is not None)
        for d in report.diagnostics
        if d.path == path
    )


def test_a_file_named_alone_gets_the_whole_tree_diagnostics_for_it():
    """Pre-commit passes the changed files by name: on the largest unit, each of its busiest files
    linted alone gives exactly the diagnostics (position, message, fix) the whole unit gives it."""
    assert CORPUS is not None
    unit = CORPUS / LARGEST_UNIT
    if not unit.is_dir():
        pytest.skip(f"{LARGEST_UNIT} is not in this copy of the corpus")
    selection = Selection(select=["ALL"])
    whole = lint(Options(paths=[str(unit)], selection=selection, use_cache=False))
    sample = _unit_files_by_definitions(unit)[:SAMPLE]
    assert len(sample) == SAMPLE
    differences = {}
    for path in sample:
        alone = lint(Options(paths=[path], selection=selection, use_cache=False))
        expected, got = _diagnostics_of(path, whole), _diagnostics_of(path, alone)
        if expected != got:
            differences[Path(path).relative_to(unit).as_posix()] = {
                "only in the whole-tree run": sorted(set(expected) - set(got)),
                "only when named alone": sorted(set(got) - set(expected)),
            }
    assert differences == {}
    assert any(_diagnostics_of(path, whole) for path in sample)  # the comparison compared something
