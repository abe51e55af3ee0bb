"""What ``--fix`` costs (issue 30): a generated project of N modules with one safe fix each
(FL301, ``McpError(JsonRpcErrorCode.NOT_FOUND, ...)`` to ``not_found(...)``), linted with and
without ``--fix`` side by side in one run, cold (``--no-cache``) and with the cache, on fresh copies.
Also checks that a run without fixes never imports libcst.

    python bench/fix_cost.py [--modules 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODULE = '''\
"""Tools of part {n}."""
from mcp_fusion import ErrorContract, JsonRpcErrorCode, McpError, tool

ENTRIES_{n} = [
    ErrorContract(reason="missing_{n}", code=JsonRpcErrorCode.NOT_FOUND, when="No item {n}",
                  recovery="Call list_items_{n} to see which ids exist."),
]


@tool("list_items_{n}")
def list_items_{n}(ctx) -> list:
    return []


@tool("get_item_{n}", errors=ENTRIES_{n})
def get_item_{n}(ctx, item_id: str) -> dict:
    if not item_id:
        raise McpError(JsonRpcErrorCode.NOT_FOUND, "No item {n}", {{"reason": "missing_{n}"}})
    return {{"id": item_id}}
'''


def write_project(root: Path, modules: int) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for n in range(modules):
        (package / f"tools_{n:04d}.py").write_text(MODULE.format(n=n))


def timed(root: Path, *flags: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fusion_lint", str(root), *flags], capture_output=True, text=True)
    return time.perf_counter() - started, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        template = Path(work) / "template"
        template.mkdir()
        write_project(template, args.modules)
        rows = {"lint": [], "fix": [], "lint (cache)": [], "fix (cache)": []}
        for _ in range(args.repeat):
            for label, flags in (("lint", ("--no-cache",)), ("fix", ("--no-cache", "--fix"))):
                copy = Path(work) / label
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(template, copy)
                seconds, stderr = timed(copy, *flags)
                rows[label].append(seconds)
                if label == "fix":
                    assert f"Fixed {args.modules} findings" in stderr, stderr[-2000:]
            for label, flags in (("lint (cache)", ()), ("fix (cache)", ("--fix",))):
                copy = Path(work) / label.replace(" ", "_")
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(template, copy)
                timed(copy)  # the cache of the unfixed tree: what CI has before a fix run
                seconds, _ = timed(copy, *flags)
                rows[label].append(seconds)
        medians = {label: statistics.median(times) for label, times in rows.items()}
        print(f"{args.modules} modules, one FL301 fix each, median of {args.repeat}:")
        for label, seconds in medians.items():
            print(f"  {label:<14} {seconds:6.2f} s")
        print(
            f"  --fix / lint, cold: {medians['fix'] / medians['lint']:.2f}x; with the cache: "
            f"{medians['fix (cache)'] / medians['lint (cache)']:.2f}x"
        )
        probe = (
            "import sys; from fusion_lint.cli.main import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('libcst' in sys.modules, file=sys.stderr)"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe, str(Path(work) / "lint"), "--no-cache"], capture_output=True, text=True
        )
        print(f"  a run without fixes imports libcst: {done.stderr.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
