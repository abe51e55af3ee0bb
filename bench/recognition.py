"""How many of the corpus's tool definitions the linter recognises, unit by unit (issue 19).

    python bench/census.py --json /tmp/census.json      # the independent count (plain ast)
    python bench/recognition.py /tmp/census.json        # the linter's, compared site by site

A tool definition is a high-level registration or a low-level ``call_tool`` dispatcher. A census
site counts as recognised when the linter has a definition on the same file and line (a site that
registers several tools, in a loop, needs as many), or reports FL190 there (a registration it sees
but whose handler it cannot resolve, ``mcp.tool(getattr(module, name))``: every tool of the site),
or defines a tool of the same name elsewhere in the unit (a ``Tool.from_function`` object that a
loop registers later). Prints the per-unit table and, with ``--misses``, every site not recognised.
Skips cleanly when the corpus is absent.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusion_lint.check.engine import Options, analyse, configure  # noqa: E402

TOOL_KINDS = ("tool", "dispatcher")


def linter_sites(folder: Path) -> tuple[Counter, Counter]:
    """(definitions by (relative file, line), definitions by tool name) of a unit."""
    options = Options(paths=[str(folder)], use_cache=False)
    config, settings = configure(options)
    analysis = analyse(options, config, settings)
    view = analysis.resolved()
    found: Counter = Counter()
    names: Counter = Counter()
    for resolved in view.definitions:
        if resolved.kind == "tool":
            site = (_relative(resolved.path, folder), resolved.definition.span.line)
            # A registration whose handler cannot be resolved is FL190 at its site: recognised, not read.
            found[site] += 1000 if resolved.handler is None else 1
            names[resolved.definition.name] += 1
    return found, names


def _relative(path: str, folder: Path) -> str:
    return Path(path).resolve().relative_to(folder.resolve()).as_posix()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("census", help="the JSON written by bench/census.py --json")
    parser.add_argument("--misses", action="store_true", help="list every census site the linter misses")
    args = parser.parse_args(argv)
    census = json.loads(Path(args.census).read_text())
    corpus = Path(census["corpus"])
    if not corpus.is_dir():
        print(f"no corpus at {corpus}: nothing to measure")
        return 0
    total_expected = total_found = 0
    rows = []
    misses = []
    for unit in census["units"]:
        folder = corpus / unit["folder"]
        expected: Counter = Counter()
        expected_names: dict = {}
        for record in unit["registrations"]:
            if record["kind"] in TOOL_KINDS:
                file = Path(corpus / record["file"]).resolve().relative_to(folder.resolve()).as_posix()
                expected[(file, record["line"])] += 1
                expected_names.setdefault((file, record["line"]), []).append(record.get("name"))
        found, names = linter_sites(folder)
        matched = 0
        for site, count in expected.items():
            here = min(count, found[site])
            # A tool the linter defines elsewhere (a ``Tool.from_function`` object registered later):
            # recognised by its name.
            for name in expected_names[site][here:]:
                if name is not None and names[name] > 0:
                    names[name] -= 1
                    here += 1
            matched += here
            if here < count:
                misses.append((unit["unit"], site, count - here))
        extra = sum(max(0, count - expected[site]) for site, count in found.items())
        want = sum(expected.values())
        total_expected += want
        total_found += matched
        share = matched / want if want else 1.0
        rows.append((unit["unit"], want, matched, extra, share))
    print(f"{'unit':<80} {'census':>6} {'found':>6} {'extra':>6} {'share':>7}")
    for name, want, matched, extra, share in rows:
        flag = "  <90%" if share < 0.9 else ""
        print(f"{name:<80} {want:>6} {matched:>6} {extra:>6} {share:>7.1%}{flag}")
    print(f"{'total':<80} {total_expected:>6} {total_found:>6} {'':>6} {total_found / max(total_expected, 1):>7.1%}")
    if args.misses:
        for name, (file, line), count in misses:
            print(f"missed {count}: {name}: {file}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
