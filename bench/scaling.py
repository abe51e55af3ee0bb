"""How fusion-lint's cost grows with the project (issue 15): CPU time against libcst's parse floor,
measured in the same rounds, on the dense generated corpus at several sizes; then the warm paths
and the cache's size on the largest.

    python bench/scaling.py                          # 300, 1,000 and 3,000 modules (~15 min on 2 cores)
    python bench/scaling.py --sizes 300 1000         # fewer sizes
    python bench/scaling.py --before /tmp/old-src    # the same rounds with another checkout side by side
    python bench/scaling.py --skip-warm --skip-shared
    python bench/scaling.py --sizes 3000 --skip-scaling --skip-shared   # only the warm paths and the cache

Each figure is CPU time (user + system) of the real command line ``python -m fusion_lint TREE
--jobs 1 --no-cache`` in a fresh process, its worker processes included; the floor is libcst's
parse of the same files in this process, each tree dropped after parsing (what the linter does).
The exponent is ``log(cpu ratio) / log(lines ratio)`` between the smallest and the largest size:
1.0 is linear. ``--before DIR`` runs a second source tree (``git archive main | tar -x -C DIR``)
in the same rounds, and says whether its output is byte-identical.

No figure is asserted anywhere: targets are printed beside the measurements.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import write_dense_corpus  # noqa: E402
from run import CACHE_DIR, count_lines, parse_floor_cpu  # noqa: E402


@dataclass
class Measured:
    cpu: float  # seconds, user + system, the process and its workers
    wall: float
    output: str


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def lint(tree: Path, *args: str, source: Path | None = None, named: str | None = None) -> Measured:
    """``python -m fusion_lint TREE`` (or ``named`` instead of the tree, relative to it) in a fresh
    interpreter run in the tree; ``source``: import fusion_lint from there."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up as users see it: imports from bytecode
    if source is not None:
        env["PYTHONPATH"] = str(source)
    command = [sys.executable, "-m", "fusion_lint", named or str(tree), *args]
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree, env=env)
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return Measured(cpu, wall, done.stdout)


#: ``--after DIR``: import the measured fusion_lint from there (default: the installed one).
AFTER: Path | None = None


def sides(before: Path | None) -> list[tuple[str, Path | None]]:
    return [("after", AFTER)] + ([("before", before)] if before is not None else [])


def scaling(work: Path, sizes: Sequence[int], before: Path | None, rounds: int) -> dict[int, Path]:
    print("\n## --jobs 1 --no-cache, CPU / libcst parse floor (same rounds)")
    trees: dict[int, Path] = {}
    ratios: dict[str, dict[int, float]] = {name: {} for name, _ in sides(before)}
    lines_at: dict[int, int] = {}
    for modules in sizes:
        tree = trees[modules] = work / f"dense-{modules}"
        files = write_dense_corpus(tree, modules)
        lines_at[modules] = count_lines(files)
        best: dict[str, Measured] = {}
        floors = []
        for _ in range(rounds):  # interleaved, so a burst of load hits every side alike
            floors.append(parse_floor_cpu(files))
            for name, source in sides(before):
                run = lint(tree, "--jobs", "1", "--no-cache", source=source)
                if name not in best or run.cpu < best[name].cpu:
                    best[name] = run
        floor = min(floors)
        row = f"  {modules:>5} modules, {lines_at[modules] // 1000:>4}k lines: floor {floor:6.1f} s CPU"
        for name, run in best.items():
            ratios[name][modules] = run.cpu / floor
            row += f" | {name} {run.cpu:6.1f} s = {run.cpu / floor:.2f}x"
        if "before" in best:
            row += f" | output identical: {best['before'].output == best['after'].output}"
        print(row, flush=True)
    if len(sizes) > 1:
        small, large = min(sizes), max(sizes)
        growth = math.log(lines_at[large] / lines_at[small])
        for name, by_size in ratios.items():
            # The floor is linear in lines, so the lint's exponent is 1 + that of its ratio to the floor.
            exponent = 1 + math.log(by_size[large] / by_size[small]) / growth
            spread = max(by_size.values()) / min(by_size.values()) - 1
            print(
                f"  {name}: exponent {exponent:.2f} ({small} -> {large} modules); ratios spread {100 * spread:.0f}% "
                f"(target <= 1.5x at every size, flat within 10%)"
            )
    return trees


def shared_bad_reason(work: Path, modules: int, before: Path | None) -> None:
    """A shared contract entry whose reason is not snake_case: FL107 and its rename for every holder."""
    print(f"\n## a shared non-snake_case entry, {modules} modules, --jobs 1 --no-cache (CPU)")
    clean = work / f"dense-{modules}"
    if not clean.exists():
        write_dense_corpus(clean, modules)
    shared = work / f"dense-{modules}-shared-bad"
    shutil.rmtree(shared, ignore_errors=True)
    shutil.copytree(clean, shared, ignore=shutil.ignore_patterns(CACHE_DIR))
    contracts = shared / "benchtools" / "contracts.py"
    contracts.write_text(contracts.read_text().replace('reason="upstream_down"', 'reason="UpstreamDown"'))
    for name, source in sides(before):
        base = lint(clean, "--jobs", "1", "--no-cache", source=source)
        bad = lint(shared, "--jobs", "1", "--no-cache", source=source)
        print(
            f"  {name}: clean {base.cpu:.1f} s, shared bad reason {bad.cpu:.1f} s = {bad.cpu / base.cpu:.2f}x "
            f"(target <= 1.1x)",
            flush=True,
        )


def directory_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def warm(tree: Path, before: Path | None) -> None:
    """Cold, warm with nothing changed, one tool module edited, one file named alone; the cache's size."""
    files = sorted(p for p in tree.rglob("*.py") if CACHE_DIR not in p.parts)
    source_bytes = sum(p.stat().st_size for p in files)
    edited = tree / "benchtools" / "tools" / "m007.py"
    original = edited.read_text()
    print(f"\n## warm paths, {len(files) - 4} modules, default --jobs (wall / CPU)")
    for name, source in sides(before):
        shutil.rmtree(tree / CACHE_DIR, ignore_errors=True)
        cold = lint(tree, source=source)
        size = directory_bytes(tree / CACHE_DIR)
        same = lint(tree, source=source)
        edited.write_text(original.replace("raise ctx.fail(", "ctx.fail(", 1))
        try:
            one = lint(tree, source=source)
            fresh = lint(tree, "--no-cache", source=source)
        finally:
            edited.write_text(original)
        lint(tree, source=source)  # back to the unedited tree's cache
        alone_cold = lint(tree, "--no-cache", source=source, named=str(edited.relative_to(tree)))
        lint(tree, source=source, named=str(edited.relative_to(tree)))  # pre-commit's first run writes the cache
        alone = lint(tree, source=source, named=str(edited.relative_to(tree)))
        print(
            f"  {name}: cold {cold.wall:.1f} s / {cold.cpu:.1f} s CPU; nothing changed {same.wall:.2f} s = "
            f"{100 * same.wall / cold.wall:.1f}% of cold (target <= 2%); one module edited {one.wall:.2f} s = "
            f"{100 * one.wall / cold.wall:.1f}% (target <= 5%), identical to --no-cache: {one.output == fresh.output}; "
            f"one file named alone: warm {alone.wall:.2f} s (target <= 0.5 s), --no-cache {alone_cold.wall:.1f} s "
            f"(target <= 10 s); cache {size / 1e6:.1f} MB = "
            f"{size / source_bytes:.2f}x the source's {source_bytes / 1e6:.1f} MB (target <= 1.0x)",
            flush=True,
        )


ONE_FILE_TARGETS = ("benchtools/tools/m007.py", "benchtools/services.py")


def one_file_cold(tree: Path, before: Path | None, rounds: int) -> None:
    """Pre-commit without the cache: one file named alone, ``--no-cache``, side by side (a tool
    module: the rest read lightly; the services, which every module reaches: resolved whole)."""
    modules = len(list((tree / "benchtools" / "tools").glob("m*.py")))
    print(f"\n## one file named alone, --no-cache, {modules} modules, default --jobs (wall / CPU, best of {rounds})")
    for target in ONE_FILE_TARGETS:
        measured = {
            name: min(
                (lint(tree, "--no-cache", source=source, named=target) for _ in range(rounds)), key=lambda m: m.wall
            )
            for name, source in sides(before)
        }
        after = measured["after"]
        line = f"  {target}: after {after.wall:.1f} s / {after.cpu:.1f} s CPU"
        if "before" in measured:
            old = measured["before"]
            line += (
                f"; before {old.wall:.1f} s / {old.cpu:.1f} s CPU; {after.wall / old.wall:.2f}x wall, "
                f"{after.cpu / old.cpu:.2f}x CPU; identical output: {after.output == old.output}"
            )
        print(line + " (target <= 10 s)", flush=True)


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="where to generate the trees (default: a temporary directory)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000], help="tool modules per tree")
    parser.add_argument("--rounds", type=int, default=1, help="best of N rounds for each timing")
    parser.add_argument("--before", type=Path, help="another source tree of fusion_lint to run side by side")
    parser.add_argument("--after", type=Path, help="import the measured fusion_lint from this source tree")
    parser.add_argument("--skip-scaling", action="store_true", help="no --no-cache scaling rounds")
    parser.add_argument("--skip-shared", action="store_true", help="no shared non-snake_case entry case")
    parser.add_argument("--skip-warm", action="store_true", help="no warm-path and cache-size case")
    parser.add_argument("--one-file", action="store_true", help="also the cold one-file case, side by side")
    args = parser.parse_args(list(argv) or None)
    global AFTER
    AFTER = args.after
    work = args.out or Path(tempfile.mkdtemp(prefix="fusion-lint-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {sys.platform}")
    try:
        if args.skip_scaling:
            trees = {modules: work / f"dense-{modules}" for modules in args.sizes}
            for modules, tree in trees.items():
                write_dense_corpus(tree, modules)
        else:
            trees = scaling(work, args.sizes, args.before, args.rounds)
        if not args.skip_shared:
            shared_bad_reason(work, 1000 if 1000 in args.sizes else min(args.sizes), args.before)
        if args.one_file:
            one_file_cold(trees[max(args.sizes)], args.before, args.rounds)
        if not args.skip_warm:
            warm(trees[max(args.sizes)], args.before)
    finally:
        if args.out is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
