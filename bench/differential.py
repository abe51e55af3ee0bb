"""The differential harness's long run (issue 29, DESIGN §13.1): many seeded random edit sequences,
each step checked three ways (the warm CLI in every format, ``--no-cache``, the language server's
lint of a buffer); the test suite runs a bounded few (tests/lint/test_differential.py).

    python bench/differential.py                       # seeds 1-20, 100 steps each (~2 h on 2 cores)
    python bench/differential.py --seeds 1 2 3 --steps 30
    python bench/differential.py --linter /tmp/old-src # an older checkout, to see what it catches
    python bench/differential.py --corpus --steps 10   # each ../shared/corpus unit, edited at random

Prints each sequence's steps and differences, then the totals. A difference stops its sequence
(later steps rest on it); keep its seed as a regression case in tests/lint/test_differential.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lint"))

from differential import CHECKOUT, CORPUS, CorpusEdits, Difference, Runner, corpus_units  # noqa: E402


def _report(sequence: str, steps: int, found: list[Difference]) -> None:
    print(f"{sequence}: {steps} steps, {len(found)} differences", flush=True)
    for difference in found:
        print(f"  {difference}", flush=True)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 21)))
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--modules", type=int, default=4)
    parser.add_argument("--linter", type=Path, default=CHECKOUT, help="the checkout whose linter runs")
    parser.add_argument("--corpus", action="store_true", help="edit each ../shared/corpus unit instead")
    args = parser.parse_args(list(argv) or None)

    steps = differing = 0
    began = time.perf_counter()
    if args.corpus:
        units = corpus_units()
        if not units:
            print("../shared/corpus is absent: nothing to run")
            return 0
        for number, unit in enumerate(units):
            with tempfile.TemporaryDirectory(prefix="fusion-differential-") as work:
                edits = CorpusEdits(unit, Path(work), args.seeds[number % len(args.seeds)], args.linter)
                found = edits.run(args.steps)
            steps += edits.steps
            differing += bool(found)
            _report(str(unit.relative_to(CORPUS)), edits.steps, found)
        print(
            f"\n{steps} edit steps over {len(units)} corpus units: {differing} with a difference ({time.perf_counter() - began:.0f} s)"
        )
        return 1 if differing else 0
    for seed in args.seeds:
        with tempfile.TemporaryDirectory(prefix="fusion-differential-") as work:
            runner = Runner(Path(work), seed, args.modules, args.linter)
            try:
                found = runner.run(args.steps)
            finally:
                runner.close()
        steps += runner.steps
        differing += bool(found)
        _report(f"seed {seed}", runner.steps, found)
    print(
        f"\n{steps} edit steps over {len(args.seeds)} seeds: {differing} sequences with a difference "
        f"({time.perf_counter() - began:.0f} s)"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
