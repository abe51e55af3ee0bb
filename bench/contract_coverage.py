"""What the contract coverage plugin costs a test run, off and on, side by side in one run (issue 22).

    python bench/contract_coverage.py                       # the example servers' contract suites
    python bench/contract_coverage.py --rounds 7 tests/contracts/test_contracts_billing.py

Runs the same pytest command in a fresh process three ways, in paired rounds whose order rotates
every round so all three see the same machine load:

* ``unloaded``: ``-p no:fusion-contract-coverage`` (as if fusion-lint were not installed);
* ``off``: the plugin installed but not asked for (what every user of fusion-lint gets);
* ``on``: ``--contract-coverage`` (the recorder at the boundary, then the linter's reading of the project).

Wall times are the median per way; ratios are the median of the rounds' ratios to ``unloaded``.
The claim measured: off costs nothing (≈ 1.00×); on costs the recorder and the linter's reading of
the project once per session (its cache warm after the first run, as when a developer re-runs).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
WAYS = {
    "unloaded": ["-p", "no:fusion-contract-coverage"],
    "off": [],
    "on": ["--contract-coverage"],
}


def run_once(suite: list[str], extra: list[str]) -> float:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suite, *extra]
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if completed.returncode not in (0, 1):  # 1: a threshold or a test failed; still a timed run
        raise SystemExit(f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout}{completed.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "suite", nargs="*", default=["tests/contracts"], help="what pytest runs (default: tests/contracts)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    names = list(WAYS)
    times: dict[str, list[float]] = {name: [] for name in names}
    run_once(args.suite, WAYS["on"])  # warm the OS's file cache and the linter's
    for round_number in range(args.rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(run_once(args.suite, WAYS[name]))
    print(f"pytest {' '.join(args.suite)}: {args.rounds} rounds, Python {sys.version.split()[0]}")
    print(f"{'way':<10} {'median':>9}  {'ratio to unloaded: median (range)':>34}")
    for name in names:
        ratios = [mine / base for mine, base in zip(times[name], times["unloaded"])]
        spread = f"({min(ratios):.2f}–{max(ratios):.2f})"
        print(f"{name:<10} {statistics.median(times[name]):8.2f}s  {statistics.median(ratios):20.2f}× {spread}")


if __name__ == "__main__":
    main()
