"""How ``corpus_bench`` measures a process: wall and CPU time, peak memory, and the libcst parse floor.

* ``run_measured``: a command in a fresh process (forked by a small launcher, see ``_LAUNCHER``), its
  wall time, and from ``wait4`` the CPU time and peak resident memory of its whole tree (Linux counts into a process's rusage the children it waited
  for: fusion-lint's worker processes, which it joins). ``ru_maxrss`` is the largest of the processes,
  parent or worker, not their sum.
* ``run_sampled``: the same, sampling ``/proc`` every few milliseconds for the sum over the process
  tree (resident and proportional set sizes: forked workers share pages with their parent, which the
  resident sum counts twice and PSS does not). Sampling costs CPU, so timings are never taken from it.
* ``parse_floor``: libcst's parse of given files in a fresh interpreter, each tree dropped as the
  linter drops it (as ``bench/run.py``), over one process or a pool; the clock starts once the texts
  are in memory and libcst is imported in every worker, so it is the parse alone. Run as
  ``python bench/corpus_measure.py --floor LIST --processes N``, it prints its figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ProcessRun:
    command: list[str]
    wall: float
    cpu: float  # user + system, the process and the children it waited for
    max_rss_mb: float  # the largest single process of the tree
    exit_code: int
    stdout: str
    stderr: str


# Linux keeps a process's peak resident size across ``exec``: a command forked from this process
# reports at least this process's peak as its own ``ru_maxrss`` (``python -c pass`` run from a 1 GB
# parent "uses" 1 GB). So the command is forked by this small launcher instead (``python -S``, a few
# MB), which times it and reports its ``wait4`` figures; the launcher's own start is not timed.
_LAUNCHER = """
import os, sys, time
report, command = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(command[0], command)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(report, "w") as out:
    out.write(repr((wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status))))
"""


def run_measured(command: Sequence[str], cwd: Path, env: dict[str, str]) -> ProcessRun:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "usage"
        subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, str(report), *command],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=err,
            check=False,
        )
        wall, cpu, max_rss_kb, code = eval(report.read_text())  # noqa: S307  (a tuple of numbers we wrote)
        out.seek(0)
        err.seek(0)
        return ProcessRun(
            list(command),
            wall,
            cpu,
            max_rss_kb / 1024,
            code,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
        )


@dataclass
class MemorySamples:
    sum_rss_mb: float = 0.0
    sum_pss_mb: float = 0.0
    largest_rss_mb: float = 0.0
    processes: int = 0  # the most processes seen at once
    samples: int = 0


def run_sampled(
    command: Sequence[str], cwd: Path, env: dict[str, str], every_s: float = 0.02
) -> tuple[ProcessRun, MemorySamples]:
    memory = MemorySamples()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=out, stderr=err)
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            _sample(process.pid, memory)
            time.sleep(every_s)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        return _finished(command, wall, usage, process.returncode, out, err), memory


def _finished(command: Sequence[str], wall: float, usage: object, code: int, out, err) -> ProcessRun:  # noqa: ANN001
    out.seek(0)
    err.seek(0)
    cpu = usage.ru_utime + usage.ru_stime  # type: ignore[attr-defined]
    max_rss_mb = usage.ru_maxrss / 1024  # type: ignore[attr-defined]  (kB on Linux)
    return ProcessRun(
        list(command),
        wall,
        cpu,
        max_rss_mb,
        code,
        out.read().decode("utf-8", "replace"),
        err.read().decode("utf-8", "replace"),
    )


def _tree(root: int) -> list[int]:
    pids, queue = [], [root]
    while queue:
        pid = queue.pop()
        pids.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    queue.extend(int(child) for child in handle.read().split())
        except OSError:
            continue  # it ended between two reads
    return pids


def _field_kb(path: str, name: str) -> int:
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith(name):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _sample(root: int, memory: MemorySamples) -> None:
    pids = _tree(root)
    rss = [_field_kb(f"/proc/{pid}/status", "VmRSS:") for pid in pids]
    pss = [_field_kb(f"/proc/{pid}/smaps_rollup", "Pss:") for pid in pids]
    memory.samples += 1
    memory.processes = max(memory.processes, sum(1 for kb in rss if kb))
    memory.sum_rss_mb = max(memory.sum_rss_mb, sum(rss) / 1024)
    memory.sum_pss_mb = max(memory.sum_pss_mb, sum(pss) / 1024)
    memory.largest_rss_mb = max(memory.largest_rss_mb, max(rss, default=0) / 1024)


def proc_available() -> bool:
    return Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists()


# ----- the parse floor ---------------------------------------------------------------------------


@dataclass
class Floor:
    files: int
    failed: int  # libcst rejected them (the linter reports FL000): their parse time still counts
    wall: float
    cpu: float  # the parsing processes' CPU time, summed


def parse_floor(files: Sequence[str], processes: int) -> Floor:
    """The floor, measured in a fresh interpreter (this process's memory and imports stay out of it)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(files))
    try:
        command = [sys.executable, __file__, "--floor", listing.name, "--processes", str(processes)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"parse floor failed ({done.returncode}):\n{done.stderr}")
        return Floor(**json.loads(done.stdout))
    finally:
        os.unlink(listing.name)


_texts: list[str] = []


def _load_texts(paths: Sequence[str]) -> None:
    import libcst  # noqa: F401  (imported before the clock starts)

    global _texts
    _texts = []
    for path in paths:
        try:
            _texts.append(Path(path).read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            _texts.append("")


def _parse(index: int) -> tuple[float, bool]:
    import libcst

    started = time.process_time()
    try:
        libcst.parse_module(_texts[index])
        ok = True
    except Exception:  # noqa: BLE001 (a syntax error, or a native parser's complaint: still a parse)
        ok = False
    return time.process_time() - started, ok


def _floor_main(listing: Path, processes: int) -> dict:
    paths = [line for line in listing.read_text().splitlines() if line]
    if not paths:
        return {"files": 0, "failed": 0, "wall": 0.0, "cpu": 0.0}
    _load_texts(paths)
    # Largest first, one file at a time: the best any scheduler of these parses could do.
    order = sorted(range(len(paths)), key=lambda i: -len(_texts[i]))
    if processes <= 1:
        start, cpu_start = time.perf_counter(), time.process_time()
        outcomes = [_parse(i) for i in order]
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    else:
        context = multiprocessing.get_context("fork")  # the workers inherit the texts, as the linter's get theirs
        with context.Pool(processes) as pool:
            pool.map(_parse, [order[-1]] * processes * 2)  # every worker started and libcst imported
            start = time.perf_counter()
            outcomes = list(pool.imap_unordered(_parse, order, chunksize=1))
            wall = time.perf_counter() - start
        cpu = sum(seconds for seconds, _ in outcomes)
    return {"files": len(paths), "failed": sum(1 for _, ok in outcomes if not ok), "wall": wall, "cpu": cpu}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="libcst parse floor of the files listed (one path a line)")
    parser.add_argument("--floor", type=Path, required=True)
    parser.add_argument("--processes", type=int, default=1)
    arguments = parser.parse_args()
    print(json.dumps(_floor_main(arguments.floor, arguments.processes)))
