"""The corpus benchmark (issue 19, DESIGN §10): what fusion-lint costs on real servers, next to its floor.

    python bench/corpus_bench.py                     # ../shared/corpus, 3 rounds (~20 minutes on 2 busy cores)
    python bench/corpus_bench.py --rounds 1          # one round
    python bench/corpus_bench.py --corpus PATH       # another tree
    python bench/corpus_bench.py --markdown          # also the table for the README
    python bench/corpus_bench.py --json out.json     # and every figure, and every file counted, as JSON

In one run, on one tree (read-only for the benchmark and for the linter: the cache it measures lives in a
temporary folder, given by ``--config`` with ``cache-dir``; the per-user cache key by ``XDG_CACHE_HOME``):

1. which files the linter discovers, reads and parses, and for each parsed file whether it defines a tool,
   resource, prompt or contract, is reached from one, is consulted while one is resolved, or is neither
   (``corpus_counts``: the engine run in a child process; issue 19 wants no file parsed for nothing);
2. in rounds that alternate them (the machine is shared and noisy; min and median are reported):
   ``python -m fusion_lint TREE --no-cache`` with the default jobs (wall time) against libcst's parse of
   exactly the files it parsed over as many processes; the same with ``--jobs 1`` (CPU time) against the
   one-process parse; a cold run writing the cache against a warm run with nothing changed; and
   ``ruff check --select ALL --no-cache TREE`` for reference;
3. the peak memory of the linter's process tree: the largest process (from ``wait4``, every round), and
   the sum over the parent and its workers (resident and proportional) from one more sampled run;
4. the diagnostics by code, FL999 (must be 0), and any traceback on stderr (must be none).

Ruff is not a dependency of fusion-lint: ``pip install ruff`` in the venv (or have it on PATH) to get its
figure; without it the benchmark says "ruff not installed" and goes on. Nothing is asserted: targets are
printed next to the figures. Exit status 0, also when the corpus is absent (a message says so).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_measure import MemorySamples, ProcessRun, parse_floor, proc_available, run_measured, run_sampled  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
_DIAGNOSTIC = re.compile(r"^.+:\d+:\d+: (FL\d{3}) ", re.MULTILINE)
TRACEBACK = "Traceback (most recent call last)"
LIST_SHOWN = 25  # files named in the text report per list; --json has them all


def find_corpus(explicit: str | None) -> Path | None:
    """``--corpus PATH``, else ``../shared/corpus`` beside the repository (or beside its worktree folder)."""
    candidates = (
        [Path(explicit)] if explicit else [REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus"]
    )
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


def diagnostic_codes(output: str) -> Counter:
    return Counter(_DIAGNOSTIC.findall(output))


def diagnostic_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if _DIAGNOSTIC.match(line)]


def ruff_command() -> list[str] | None:
    beside = Path(sys.executable).with_name("ruff")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("ruff")
    if found:
        return [found]
    probe = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True, check=False)
    return [sys.executable, "-m", "ruff"] if probe.returncode == 0 else None


@dataclass
class Round:
    wall_default: float
    cpu_default: float
    floor_wall: float
    wall_jobs1: float
    cpu_jobs1: float
    floor_cpu: float
    cold: float
    warm: float
    max_rss_mb: float  # the largest process of any linter run of the round
    ruff: float | None = None


@dataclass
class Checks:
    """What must hold of every linter run: exit 0 or 1, nothing on stderr but warnings, one output."""

    runs: int = 0
    bad_exits: list[str] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)  # runs whose diagnostics differ from the first's
    reference: list[str] | None = None

    def see(self, label: str, run: ProcessRun, compare: bool = True) -> None:
        self.runs += 1
        if run.exit_code not in (0, 1):
            self.bad_exits.append(f"{label}: exit {run.exit_code}")
        if TRACEBACK in run.stderr:
            self.tracebacks.append(f"{label}:\n{run.stderr}")
        elif run.stderr.strip():
            self.stderr.append(f"{label}: {run.stderr.strip()[:2000]}")
        lines = diagnostic_lines(run.stdout)
        if not compare:
            return
        if self.reference is None:
            self.reference = lines
        elif lines != self.reference:
            self.differing.append(label)


class Bench:
    def __init__(self, tree: Path, work: Path, jobs: int):
        self.tree, self.work, self.jobs = tree, work, jobs
        self.cwd = work / "cwd"  # an empty folder: nothing there for the linter to pick up
        self.cwd.mkdir()
        self.env = dict(os.environ, XDG_CACHE_HOME=str(work / "xdg"))
        self.checks = Checks()
        self.first: ProcessRun | None = None

    def lint(self, label: str, *flags: str) -> ProcessRun:
        run = run_measured([sys.executable, "-m", "fusion_lint", str(self.tree), *flags], self.cwd, self.env)
        self.checks.see(label, run)
        self.first = self.first or run
        return run

    def lint_all_rules(self) -> ProcessRun:
        """Every rule, opt-in ones included (``--select ALL``): where an internal error would show."""
        run = run_measured(
            [sys.executable, "-m", "fusion_lint", str(self.tree), "--no-cache", "--select", "ALL"], self.cwd, self.env
        )
        self.checks.see("--select ALL, --no-cache", run, compare=False)
        return run

    def cache_config(self, number: int) -> Path:
        """A config whose ``cache-dir`` is a fresh folder of our own (the tree is never written)."""
        folder = self.work / f"config-{number}"
        folder.mkdir()
        config = folder / "fusion-lint.toml"
        config.write_text(f"cache-dir = {json.dumps(str(self.work / f'cache-{number}'))}\n")
        return config

    def round(self, number: int, parsed: Sequence[str], ruff: list[str] | None) -> Round:
        default = self.lint(f"round {number}: default --jobs, --no-cache", "--no-cache")
        floor_n = parse_floor(parsed, self.jobs)
        single = self.lint(f"round {number}: --jobs 1, --no-cache", "--no-cache", "--jobs", "1")
        floor_1 = parse_floor(parsed, 1)
        ruff_seconds = None
        if ruff is not None:
            ruff_run = run_measured(
                [*ruff, "check", "--select", "ALL", "--no-cache", str(self.tree)], self.cwd, self.env
            )
            ruff_seconds = ruff_run.wall
            if ruff_run.exit_code not in (0, 1):
                print(f"  ruff exited {ruff_run.exit_code}: {ruff_run.stderr.strip()[:500]}")
        config = self.cache_config(number)
        cold = self.lint(f"round {number}: cold cache", "--config", str(config))
        warm = self.lint(f"round {number}: warm cache", "--config", str(config))
        rss = max(default.max_rss_mb, single.max_rss_mb, cold.max_rss_mb, warm.max_rss_mb)
        figures = Round(
            default.wall,
            default.cpu,
            floor_n.wall,
            single.wall,
            single.cpu,
            floor_1.cpu,
            cold.wall,
            warm.wall,
            rss,
            ruff_seconds,
        )
        print(
            f"  round {number}: default {default.wall:.2f} s wall (floor {floor_n.wall:.2f} s) | --jobs 1 "
            f"{single.cpu:.2f} s CPU (floor {floor_1.cpu:.2f} s) | cold {cold.wall:.2f} s, warm {warm.wall:.2f} s | "
            f"ruff {'-' if ruff_seconds is None else f'{ruff_seconds:.2f} s'} | largest process {rss:.0f} MB",
            flush=True,
        )
        return figures


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values)}


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")  # no file parsed: no floor to compare with


def summarise(rounds: list[Round]) -> dict[str, dict[str, float]]:
    def of(name: str) -> dict[str, float]:
        return spread([getattr(r, name) for r in rounds])

    summary = {
        name: of(name)
        for name in (
            "wall_default",
            "cpu_default",
            "floor_wall",
            "wall_jobs1",
            "cpu_jobs1",
            "floor_cpu",
            "cold",
            "warm",
            "max_rss_mb",
        )
    }
    summary["max_rss_mb"] = {"max": max(r.max_rss_mb for r in rounds)}
    summary["wall_ratio"] = spread([_ratio(r.wall_default, r.floor_wall) for r in rounds])
    summary["cpu_ratio"] = spread([_ratio(r.cpu_jobs1, r.floor_cpu) for r in rounds])
    summary["warm_over_cold"] = spread([_ratio(r.warm, r.cold) for r in rounds])
    ruffs = [r.ruff for r in rounds if r.ruff is not None]
    if ruffs:
        summary["ruff"] = spread(ruffs)
    return summary


def _fmt(figure: dict[str, float], unit: str = " s", digits: int = 2) -> str:
    return f"{figure['min']:.{digits}f}{unit} (median {figure['median']:.{digits}f}{unit})"


def _relative(tree: Path, path: str) -> str:
    try:
        return str(Path(path).relative_to(tree))
    except ValueError:
        return path


def print_counts(counts, tree: Path) -> None:  # noqa: ANN001 (corpus_counts.FileCounts)
    ways = Counter(counts.admitted.values())
    print(
        f"files: {counts.discovered} discovered, {counts.read} read, {counts.skipped} skipped by the pre-scan, "
        f"{len(counts.parsed)} parsed ({', '.join(f'{n} {w}' for w, n in sorted(ways.items()))}; "
        f"{counts.lines_parsed:,} lines; {counts.parse_operations} parses)"
    )
    kinds = _kinds_text(counts.definitions) or "no definitions"
    print(
        f"  of the parsed: {len(counts.defines)} define a tool/resource/prompt/contract ({kinds}), "
        f"{len(counts.reached)} are reached from one, {len(counts.consulted)} consulted while one is resolved, "
        f"{len(counts.neither)} neither (target: 0)"
    )
    for framework, per in counts.by_framework.items():
        print(f"    {framework}: {_kinds_text(per)}")
    for path in counts.dynamic:
        print(f"    defines only dynamically (registrations the linter cannot name): {_relative(tree, path)}")
    if counts.unreadable:
        print(f"  unreadable (FL001): {len(counts.unreadable)}")
    if counts.failed:
        print(
            f"  parsed without facts (FL000/FL999): {len(counts.failed)}: "
            + ", ".join(f"{_relative(tree, p)} ({c})" for p, c in sorted(counts.failed.items())[:LIST_SHOWN])
        )
    if counts.neither:
        why = Counter(counts.admitted[p] for p in counts.neither)
        what = Counter(counts.nothing.values())
        print(
            f"  parsed for nothing, by why they were admitted: {dict(why)}; by what they are: "
            + "; ".join(f"{n} {kind}" for kind, n in what.most_common())
        )
        for path in counts.neither[:LIST_SHOWN]:
            print(f"    {_relative(tree, path)} ({counts.admitted[path]}: {counts.nothing[path]})")
        if len(counts.neither) > LIST_SHOWN:
            print(f"    ... and {len(counts.neither) - LIST_SHOWN} more (--json names them all)")
    print(
        f"  in-process phases of that counting run: analyse {counts.seconds['analyse']:.2f} s, "
        f"resolve {counts.seconds['resolve']:.2f} s (on-demand loads included)"
    )


def _codes_text(codes: Counter) -> str:
    return f"{sum(codes.values())} ({', '.join(f'{c} {n}' for c, n in sorted(codes.items())) or 'none'})"


def _kinds_text(kinds: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}s" for k, n in kinds.items())


def markdown(
    counts,
    summary: dict,
    memory: MemorySamples | None,
    codes: Counter,
    all_codes: Counter,  # noqa: ANN001
    checks: Checks,
    jobs: int,
) -> str:
    parsed = len(counts.parsed)
    rows = [
        (
            "files discovered / read / parsed",
            f"{counts.discovered} / {counts.read} / {parsed} ({counts.lines_parsed:,} lines)",
            f"{counts.skipped} skipped by the pre-scan",
            "-",
        ),
        (
            "parsed: define / reached / consulted / neither",
            f"{len(counts.defines)} / {len(counts.reached)} / {len(counts.consulted)} / {len(counts.neither)}"
            + (f" ({len(counts.dynamic)} of the defining register only dynamically)" if counts.dynamic else ""),
            "-",
            "neither = 0",
        ),
        (
            "definitions",
            _kinds_text(counts.definitions),
            "; ".join(f"{f}: {_kinds_text(per)}" for f, per in counts.by_framework.items()),
            "-",
        ),
        (
            f"default --jobs ({jobs}), no cache, wall",
            _fmt(summary["wall_default"]),
            f"libcst parse of the {parsed} parsed files, {jobs} processes: {_fmt(summary['floor_wall'])}",
            f"{summary['wall_ratio']['min']:.2f}x floor (target <= 1.5x)",
        ),
        (
            "--jobs 1, no cache, CPU",
            _fmt(summary["cpu_jobs1"]),
            f"libcst parse, 1 process: {_fmt(summary['floor_cpu'])}",
            f"{summary['cpu_ratio']['min']:.2f}x floor",
        ),
        (
            "warm cache, nothing changed",
            _fmt(summary["warm"]),
            f"cold (cache written): {_fmt(summary['cold'])}",
            f"{100 * summary['warm_over_cold']['min']:.0f}% of cold (target <= 10%)",
        ),
        ("peak memory", _memory_text(summary, memory), "-", "< 1 GB"),
        (
            "ruff check --select ALL --no-cache",
            _fmt(summary["ruff"]) if "ruff" in summary else "ruff not installed",
            "reference",
            "-",
        ),
        ("diagnostics, default rules", _codes_text(codes), f"FL999: {codes.get('FL999', 0)}", "0 FL999"),
        (
            "diagnostics, every rule (--select ALL)",
            _codes_text(all_codes),
            f"FL999: {all_codes.get('FL999', 0)}, tracebacks: {len(checks.tracebacks)}",
            "0 FL999, no traceback",
        ),
    ]
    lines = ["| corpus | fusion-lint | floor / anchor | target |", "|---|---|---|---|"]
    return "\n".join(lines + [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows])


def _memory_text(summary: dict, memory: MemorySamples | None) -> str:
    # Sampled from /proc where it can be; wait4's figure is the largest process of every timed run
    # (forked by a small launcher: Linux keeps a process's peak across exec, so a command forked
    # from this process once reported this process's peak, ~1 GB, as its own).
    if memory is not None and memory.samples:
        return (
            f"largest process {memory.largest_rss_mb:.0f} MB; tree sum {memory.sum_rss_mb:.0f} MB RSS, "
            f"{memory.sum_pss_mb:.0f} MB PSS ({memory.processes} processes; wait4 said "
            f"{summary['max_rss_mb']['max']:.0f} MB)"
        )
    return f"largest process {summary['max_rss_mb']['max']:.0f} MB (wait4)"


def print_report(
    summary: dict,
    memory: MemorySamples | None,
    codes: Counter,
    checks: Checks,
    jobs: int,
    rounds: int,
    summary_line: str,
) -> None:
    print(f"\ntimings, min (median) of {rounds} round(s):")
    print(
        f"  fusion-lint, default --jobs ({jobs}), --no-cache, wall:  {_fmt(summary['wall_default'])}"
        f"  [CPU {_fmt(summary['cpu_default'])}]"
    )
    print(f"  libcst parse floor of the parsed files, {jobs} processes:  {_fmt(summary['floor_wall'])}")
    print(f"    ratio {_fmt(summary['wall_ratio'], 'x')}  (target <= 1.5x)")
    print(
        f"  fusion-lint --jobs 1 --no-cache, CPU:  {_fmt(summary['cpu_jobs1'])}  [wall {_fmt(summary['wall_jobs1'])}]"
    )
    print(f"  libcst parse floor, 1 process, CPU:  {_fmt(summary['floor_cpu'])}")
    print(f"    ratio {_fmt(summary['cpu_ratio'], 'x')}")
    print(f"  cold (cache written): {_fmt(summary['cold'])}; warm, nothing changed: {_fmt(summary['warm'])}")
    print(
        f"    warm/cold {100 * summary['warm_over_cold']['min']:.1f}% (median "
        f"{100 * summary['warm_over_cold']['median']:.1f}%)  (target <= 10%)"
    )
    print(
        f"  ruff check --select ALL --no-cache: {_fmt(summary['ruff']) if 'ruff' in summary else 'ruff not installed'}"
    )
    print(f"peak memory: {_memory_text(summary, memory)}  (target < 1 GB)")
    print(f"diagnostics: {sum(codes.values())}: {', '.join(f'{c} {n}' for c, n in sorted(codes.items())) or 'none'}")
    print(f"  summary line: {summary_line}")
    print(
        f"  FL999: {codes.get('FL999', 0)} (target 0); tracebacks on stderr: {len(checks.tracebacks)} (target 0); "
        f"bad exit codes: {len(checks.bad_exits)}; runs whose diagnostics differ from the first: "
        f"{', '.join(checks.differing) or 'none'} ({checks.runs} runs)"
    )
    for problem in checks.bad_exits + checks.tracebacks + checks.stderr:
        print(f"  ! {problem}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="the tree to measure (default: ../shared/corpus)")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds, linter and floor alternating (default 3)")
    parser.add_argument("--markdown", action="store_true", help="also print the table for the README")
    parser.add_argument("--json", metavar="PATH", help="write every figure and every file counted as JSON")
    args = parser.parse_args(None if argv is None else list(argv))
    tree = find_corpus(args.corpus)
    if tree is None:
        print(f"corpus benchmark: the corpus ({args.corpus or '../shared/corpus'}) is absent: nothing to measure")
        return 0
    from corpus_counts import count_in_subprocess  # imports fusion_lint: only when there is something to count

    from fusion_lint.source.runner import default_jobs

    jobs = default_jobs()
    ruff = ruff_command()
    ruff_version = subprocess.run([*ruff, "--version"], capture_output=True, text=True).stdout.strip() if ruff else None
    print(f"fusion-lint corpus benchmark: {tree}")
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores (default --jobs {jobs}), libcst "
        f"{version('libcst')}, {ruff_version or 'ruff not installed'}",
        flush=True,
    )
    counts = count_in_subprocess(tree)
    print_counts(counts, tree)
    work = Path(tempfile.mkdtemp(prefix="fusion-lint-corpus-bench-"))
    try:
        bench = Bench(tree, work, jobs)
        rounds = [bench.round(number, counts.parsed, ruff) for number in range(1, max(1, args.rounds) + 1)]
        every_rule = bench.lint_all_rules()
        memory = None
        if proc_available():
            sampled, memory = run_sampled(
                [sys.executable, "-m", "fusion_lint", str(tree), "--no-cache"], bench.cwd, bench.env
            )
            bench.checks.see("sampled for memory: default --jobs, --no-cache", sampled)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = summarise(rounds)
    assert bench.first is not None
    codes = diagnostic_codes(bench.first.stdout)
    all_codes = diagnostic_codes(every_rule.stdout)
    summary_line = next((line for line in reversed(bench.first.stdout.splitlines()) if line.strip()), "")
    print_report(summary, memory, codes, bench.checks, jobs, len(rounds), summary_line)
    print(f"every rule (--select ALL): {_codes_text(all_codes)}; FL999: {all_codes.get('FL999', 0)} (target 0)")
    if args.markdown:
        print("\n" + markdown(counts, summary, memory, codes, all_codes, bench.checks, jobs))
    if args.json:
        payload = {
            "corpus": str(tree),
            "python": platform.python_version(),
            "cores": os.cpu_count(),
            "jobs": jobs,
            "libcst": version("libcst"),
            "ruff": ruff_version,
            "counts": counts.as_json(),
            "rounds": [asdict(r) for r in rounds],
            "summary": summary,
            "memory": asdict(memory) if memory is not None else None,
            "diagnostics": dict(sorted(codes.items())),
            "diagnostics_all_rules": dict(sorted(all_codes.items())),
            "summary_line": summary_line,
            "checks": {k: v for k, v in asdict(bench.checks).items() if k != "reference"},
        }
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
