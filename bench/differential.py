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
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lint"))

from differential import CHECKOUT, FORMATS, Difference, LinterCopy, Runner, cli, shown  # noqa: E402

from fusion_lint.memo.stat_index import RACY_S  # noqa: E402

CORPUS = CHECKOUT.parent / "shared" / "corpus"
STRING = re.compile(r"""(["'])([A-Za-z][^"'\\\n]{2,60})\1""")
REASON = re.compile(r"""reason=(["'])([a-z_]+)\1""")


def corpus_units() -> list[Path]:
    """The units of ``../shared/corpus`` (its README's table: one folder per unit)."""
    readme = CORPUS / "README.md"
    if not readme.is_file():
        return []
    folders = [line.split("|")[2].strip() for line in readme.read_text().splitlines() if line.count("|") > 6]
    return [CORPUS / folder for folder in folders if (CORPUS / folder).is_dir()]


class CorpusEdits:
    """A copy of a real server edited at random, in text: a message, a reason, a line shift above
    everything, a raise turned into a bare call, a syntax error (repaired at the next step), a file
    deleted, a file touched; each step checked warm CLI against ``--no-cache``."""

    def __init__(self, unit: Path, work: Path, seed: int, linter: Path):
        self.rng = random.Random(seed)
        self.project = work / "project"
        shutil.copytree(unit, self.project)
        self.linter = LinterCopy(work, linter)
        self.clock = 1_600_000_000
        self.broken: Path | None = None
        self.steps = 0

    def _files(self) -> list[Path]:
        return sorted(self.project.rglob("*.py"))

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text)
        self.clock += 2
        os.utime(path, (self.clock, self.clock))

    def edit(self) -> str:
        if self.broken is not None:
            path, self.broken = self.broken, None
            self._write(path, path.read_text().replace("\ndef broken(:\n", "\n"))
            return f"syntax error removed from {path.name}"
        path = self.rng.choice(self._files())
        text = path.read_text(errors="replace")
        kind = self.rng.choice(("message", "reason", "shift", "raise", "syntax", "delete", "touch"))
        if kind == "message" and (found := list(STRING.finditer(text))):
            hit = self.rng.choice(found)
            text = text[: hit.start(2)] + "edited " + text[hit.start(2) :]
        elif kind == "reason" and (found := list(REASON.finditer(text))):
            hit = self.rng.choice(found)
            text = text[: hit.end(2)] + "_edited" + text[hit.end(2) :]
        elif kind == "raise" and "    raise " in text:
            text = text.replace("    raise ", "    ", 1)
        elif kind == "syntax":
            text, self.broken = text + "\ndef broken(:\n", path
        elif kind == "delete" and len(self._files()) > 1:
            path.unlink()
            return f"{path.name} deleted"
        elif kind == "touch":
            self.clock += 2
            os.utime(path, (self.clock, self.clock))
            return f"{path.name} touched"
        else:
            kind, text = "shift", "# edited above everything\n" + text
        self._write(path, text)
        return f"{kind} in {path.relative_to(self.project)}"

    def check(self, edit: str) -> list[Difference]:
        time.sleep(RACY_S + 0.1)  # every write older than the racy window: the snapshot is used
        found = []
        other = FORMATS[self.steps % len(FORMATS)]
        for output_format in dict.fromkeys((other, "json")):
            args = ["--output-format", output_format, "."]
            warm = cli(self.linter, self.project, args)
            cold = cli(self.linter, self.project, [*args[:2], "--no-cache", "."])
            if warm != cold:
                found.append(
                    Difference(self.steps, edit, f"warm != --no-cache ({output_format})", shown(cold), shown(warm))
                )
            if warm[0] not in (0, 1):
                found.append(Difference(self.steps, edit, f"exit {warm[0]}", "exit 0 or 1", warm[1]))
        return found

    def run(self, steps: int) -> list[Difference]:
        found = self.check("the first run")
        while not found and self.steps < steps:
            self.steps += 1
            found = self.check(self.edit())
        return found


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
