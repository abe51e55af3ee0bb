"""Warm equals cold (issue 29, DESIGN §13.1): the differential harness (``differential.py``) over
seeded random edit sequences, bounded for CI (``bench/differential.py`` runs thousands of steps),
and every failure it ever found, kept as a regression case. Each case was checked to fail on the
code that had the defect (``differences(..., linter=<that checkout>)``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from differential import CHECKOUT, CORPUS, CorpusEdits, Entry, Project, Runner, Tool, differences

pytestmark = pytest.mark.slow


def no_differences(found: list) -> None:
    assert not found, "\n\n".join(map(str, found))


# ----- regression cases -----------------------------------------------------------------------------


def test_seed_1_a_guarded_handler_calling_another_file_does_not_crash_the_warm_run() -> None:
    """Found at the first step of seed 1: a tool under a project decorator that wraps the handler in
    ``try/except``, whose handler calls a function in another file. The warm CLI exited 2
    (``AttributeError: 'tuple' object has no attribute 'handlers'``: the snapshot's digest of the
    wrappers walked one level too shallow) where ``--no-cache`` passed."""
    no_differences(differences(1, 0))


def _probe_case(runner: Runner) -> list:
    """A shared INVALID_PARAMS entry held by a tool of another file; the probe rule (it reads the
    holder's handler's parameters, which no earlier rule read) is dropped in; the tool then loses
    its parameters: the warm run must report what the cold one does."""

    def first(project: Project) -> None:
        project.tools.clear()
        project.services.clear()
        project.shared = [Entry("bad_page", "INVALID_PARAMS", "The page is out of range", "Retry with page 1.")]
        project.tools["tools_a"] = [Tool("list_widgets", "fusion", ["page"], shared=True)]
        project.tools["tools_b"] = [Tool("list_gadgets", "fusion", ["page"], shared=True)]

    def no_params(project: Project) -> None:
        project.tools["tools_a"][0].params = []

    found = runner.apply("a shared entry held by two tools", first)
    found += runner.apply("probe rule dropped into the linter", lambda project: None)
    return found + runner.apply("tools_a's tool loses its parameters", no_params)


def test_a_rule_reading_a_field_no_rule_read_before_is_warm_as_cold() -> None:
    """The rule added as CONTRIBUTING.md says, reading a field no earlier rule read: the warm run
    after the edit must report what the cold one does (seed 11 below found the case this one misses)."""
    no_differences(differences(0, 0, edits=_probe_case))


#: (unit, seed, steps) of the corpus sequences that found a difference (``bench/differential.py
#: --corpus``): a repaired syntax error in a file loaded on demand (a helper, a server module the
#: pre-scan skips) replayed the answer of the broken file. test_cache_safety has the same without
#: the corpus.
CORPUS_CASES = [
    ("awslabs+mcp/src/aws-documentation-mcp-server", 203, 6),
    ("awslabs+mcp/src/valkey-mcp-server", 204, 3),
]


@pytest.mark.parametrize(("unit", "seed", "steps"), CORPUS_CASES)
def test_corpus_sequences_that_found_a_difference(unit: str, seed: int, steps: int, tmp_path: Path) -> None:
    if not (CORPUS / unit).is_dir():
        pytest.skip("../shared/corpus is absent")
    no_differences(CorpusEdits(CORPUS / unit, tmp_path, seed, CHECKOUT).run(steps))


# ----- random sequences -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seed",
    [
        2,
        5,
        # Seed 11 found the probe rule's defect by itself at step 9 (a holder's handler loses its
        # parameters), while the snapshot digested a hand-kept list of what shared items read.
        11,
    ],
)
def test_random_edit_sequences_are_warm_as_cold(seed: int) -> None:
    no_differences(differences(seed, 10))
