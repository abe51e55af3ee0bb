"""The fusion-lint benchmark (DESIGN §10): every figure next to its floor, measured in one run.

    python bench/run.py                 # ~2 minutes on 2 cores
    python bench/run.py --repeat 3      # best of 3 for every timing (noisy machines)
    python bench/run.py --markdown      # also print the tables for docs/performance.md

What it measures, each as wall time of the real command line (``python -m fusion_lint``, a fresh
process, so start-up and imports count):

1. dense corpus (300 generated modules x 8 tools, ~71k lines): ``--jobs 1 --no-cache`` against the
   floor, libcst's parse of the same files in this process (each tree dropped after parsing);
2. the running interpreter's standard library plus 20 tool modules: default ``--jobs``,
   ``--no-cache``, against the floor of reading every file; the output must hold no FL999;
3. cold against warm cache on the dense corpus (default ``--jobs``);
4. one file edited, then the shared contract module every tool imports: the re-lint with the
   cache re-analyses only the edited file and prints what a cold run prints.

No figure is asserted here or in the tests: targets are printed next to the measurements.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import stdlib_directory, write_dense_corpus, write_mixed_tree  # noqa: E402

CACHE_DIR = ".fusion_lint_cache"


@dataclass
class Run:
    seconds: float
    output: str
    exit_code: int


def lint(tree: Path, *args: str) -> Run:
    """``fusion-lint`` in a fresh interpreter, as a user runs it."""
    command = [sys.executable, "-m", "fusion_lint", str(tree), *args]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return Run(seconds, done.stdout, done.returncode)


def best(repeat: int, measure: Callable[[], float]) -> float:
    return min(measure() for _ in range(repeat))


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if CACHE_DIR not in p.parts)


def parse_floor(files: Sequence[Path], clock: Callable[[], float] = time.perf_counter) -> float:
    """libcst's parse of every file, one process, each tree dropped as the linter drops it."""
    import libcst

    texts = [p.read_bytes().decode("utf-8") for p in files]
    start = clock()
    for text in texts:
        libcst.parse_module(text)
    return clock() - start


def parse_floor_cpu(files: Sequence[Path]) -> float:
    """The floor in CPU time (for comparing with a command's CPU time, its workers included)."""
    return parse_floor(files, time.process_time)


def ast_time(files: Sequence[Path]) -> float:
    texts = [p.read_bytes() for p in files]
    start = time.perf_counter()
    for text in texts:
        ast.parse(text)
    return time.perf_counter() - start


def read_floor(files: Sequence[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        path.read_bytes()
    return time.perf_counter() - start


def cache_entries(tree: Path) -> set[str]:
    directory = tree / CACHE_DIR
    return (
        {p.name for p in directory.glob("*.pickle") if not p.name.startswith("run-")} if directory.exists() else set()
    )


def count_lines(files: Sequence[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in files)


def codes_in(output: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in output.splitlines():
        parts = line.split(" ")
        if len(parts) > 1 and parts[1].startswith("FL") and parts[1][2:].isdigit():
            counts[parts[1]] = counts.get(parts[1], 0) + 1
    return counts


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, workload: str, measured: str, floor: str, target: str) -> None:
        self.rows.append((workload, measured, floor, target))
        print(f"  {workload:<48} {measured:<26} {floor:<34} {target}")

    def markdown(self) -> str:
        lines = ["| workload | fusion-lint | floor / anchor | target |", "|---|---|---|---|"]
        lines += [f"| {w} | {m} | {f} | {t} |" for w, m, f, t in self.rows]
        return "\n".join(lines)


def dense(work: Path, modules: int, repeat: int, table: Table) -> Path:
    tree = work / "dense"
    files = write_dense_corpus(tree, modules)
    lines = count_lines(files)
    print(f"dense corpus: {len(files)} files, {lines:,} lines ({tree})")
    floors, lints = [], []
    reference = None
    for _ in range(repeat):  # interleaved, so a burst of load hits both sides alike
        floors.append(parse_floor(files))
        run = lint(tree, "--jobs", "1", "--no-cache")
        lints.append(run.seconds)
        reference = reference or run.output
    floor, one = min(floors), min(lints)
    gate = best(repeat, lambda: ast_time(files))
    table.add(
        f"dense: {modules} modules, {lines // 1000}k lines, --jobs 1, no cache",
        f"{one:.2f} s = {one / floor:.2f}x floor",
        f"libcst parse {floor:.2f} s (ast.parse {gate:.2f} s)",
        "<= 2.0x (goal 1.3x)",
    )
    parallel = best(repeat, lambda: lint(tree, "--no-cache").seconds)
    table.add("dense, default --jobs, no cache", f"{parallel:.2f} s", f"{len(files) / parallel:,.0f} files/s", "-")
    codes = codes_in(reference or "")
    print(f"  diagnostics: {sum(codes.values())} ({', '.join(f'{c} {n}' for c, n in sorted(codes.items()))})")
    return tree


def cache(tree: Path, repeat: int, table: Table) -> None:
    shutil.rmtree(tree / CACHE_DIR, ignore_errors=True)
    cold = lint(tree)
    warm_runs = [lint(tree) for _ in range(max(repeat, 2))]
    warm = min(r.seconds for r in warm_runs)
    same = all(r.output == cold.output for r in warm_runs)
    table.add(
        "dense, warm cache, nothing changed",
        f"{warm:.2f} s = {100 * warm / cold.seconds:.0f}% of cold",
        f"cold (cache written) {cold.seconds:.2f} s",
        "<= 10% of cold",
    )
    print(f"  warm output identical to cold: {same}")

    for label, relative, old, new in (
        ("one tool module edited", "benchtools/tools/m007.py", "raise ctx.fail(", "ctx.fail("),  # now FL204
        (
            "shared contract module edited",
            "benchtools/contracts.py",
            "code=JsonRpcErrorCode.SERVICE_UNAVAILABLE",
            "code=JsonRpcErrorCode.NOT_FOUND",
        ),
    ):
        target = tree / relative
        original = target.read_text()
        before = cache_entries(tree)
        target.write_text(original.replace(old, new, 1))
        try:
            edited = lint(tree)
            reanalysed = len(cache_entries(tree) - before)
            fresh = lint(tree, "--no-cache")
        finally:
            target.write_text(original)
        changed = len(set(edited.output.splitlines()) ^ set(cold.output.splitlines()))
        table.add(
            f"dense, {label}, cache",
            f"{edited.seconds:.2f} s, {reanalysed} file(s) re-parsed",
            f"cold {cold.seconds:.2f} s",
            "same diagnostics as a cold run",
        )
        print(
            f"  identical to a --no-cache run of the edited tree: {edited.output == fresh.output}; "
            f"{changed} diagnostic lines appeared or disappeared with the edit"
        )


def mixed(work: Path, tool_modules: int, repeat: int, table: Table) -> None:
    tree = work / "mixed"
    write_mixed_tree(tree, tool_modules)
    files = python_files(tree)
    lines = count_lines(files)
    print(
        f"mixed tree: standard library of {sys.version.split()[0]} ({stdlib_directory()}) + {tool_modules} tool "
        f"modules: {len(files):,} files, {lines:,} lines"
    )
    reading = best(repeat, lambda: read_floor(files))
    run = None
    seconds = []
    for _ in range(repeat):
        run = lint(tree, "--no-cache")
        seconds.append(run.seconds)
    assert run is not None
    codes = codes_in(run.output)
    table.add(
        f"mixed: stdlib + {tool_modules} tool modules, default --jobs, no cache",
        f"{min(seconds):.2f} s, FL999: {codes.get('FL999', 0)}",
        f"reading every file {reading:.2f} s",
        "<= 3 s (goal 1.5 s), no FL999",
    )


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="where to generate the trees (default: a temporary directory)")
    parser.add_argument("--modules", type=int, default=300, help="tool modules in the dense corpus")
    parser.add_argument("--mixed-tools", type=int, default=20, help="tool modules added to the standard library")
    parser.add_argument("--repeat", type=int, default=1, help="best of N for each timing")
    parser.add_argument("--skip-mixed", action="store_true", help="only the dense corpus")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown at the end")
    args = parser.parse_args(list(argv) or None)

    work = args.out or Path(tempfile.mkdtemp(prefix="fusion-lint-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {sys.platform}")
    table = Table()
    try:
        tree = dense(work, args.modules, args.repeat, table)
        cache(tree, args.repeat, table)
        if not args.skip_mixed:
            mixed(work, args.mixed_tools, args.repeat, table)
    finally:
        if args.out is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.markdown:
        print()
        print(table.markdown())


if __name__ == "__main__":
    main()
