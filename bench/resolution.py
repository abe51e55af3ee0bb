"""How much of ``../shared/corpus`` the linter resolves (issue 20, DESIGN §12.3).

    python bench/resolution.py                  # per-unit table
    python bench/resolution.py --unit redis     # units whose name contains "redis"
    python bench/resolution.py --json out.json  # and every unresolved handler and callee, one record each
    python bench/resolution.py --corpus PATH    # another copy of the corpus
    python bench/resolution.py --tree fixtures  # any tree, as one unit

For each unit of the corpus README's table, the linter analyses the unit's folder as a project of its
own (no configuration, no cache) and reports:

* definitions: the tools, resources and prompts it recognises;
* FL190: the diagnostics of error-contract-unresolved (a contract, a field, a reason or a handler that
  could not be resolved statically);
* handlers unresolved: definitions whose handler is no function of the project (FL190 names each);
* callees: the calls of every reached function, by how they were followed — followed (a project
  function, methods through their bases), into a project class, not followed (a name inside a project
  module that is no function: an attribute of an instance of unknown class, a name bound at run time),
  and outside the project (libraries, builtins, local values: never followed, by design).

Until the linter recognises the frameworks' tools (issue 19), the corpus, which never imports
``mcp_fusion``, shows few definitions: most files are not even parsed (the pre-scan). The script
works the same on any tree. Exit status 0, also when the corpus is absent (a message says so).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from census import find_corpus, read_units  # noqa: E402

from fusion_lint.check.engine import Options, analyse, check  # noqa: E402
from fusion_lint.config.settings import LoadedConfig, Settings  # noqa: E402
from fusion_lint.rules import rule_by_code_or_name  # noqa: E402

OUTCOMES = ("followed", "class", "unresolved", "outside")


def measure(folder: Path) -> dict:
    """The figures of one tree, linted as a project of its own."""
    config = LoadedConfig(settings=Settings(), path=None)
    options = Options(paths=[str(folder)], config=config, use_cache=False, jobs=1)
    analysis = analyse(options, config, config.settings)
    project = analysis.resolved()
    fl190 = rule_by_code_or_name("FL190")
    assert fl190 is not None
    diagnostics = [reported.diagnostic for reported in check(project, [fl190], analysis.report_set)]
    kinds = Counter(d.kind for d in project.definitions)
    unresolved_handlers = [
        {
            "definition": d.label,
            "file": str(Path(d.path).relative_to(folder)),
            "line": d.definition.span.line,
            "handler": d.definition.handler_unresolved or d.definition.handler_ref or d.definition.handler,
        }
        for d in project.definitions
        if d.handler is None
    ]
    outcomes: Counter = Counter()
    not_followed = []
    for function in project.functions:
        for qname in function.function.calls:
            outcome = analysis.index.call_outcome(qname)
            outcomes[outcome] += 1
            if outcome == "unresolved":
                not_followed.append(
                    {
                        "function": function.function.qualname,
                        "file": str(Path(function.path).relative_to(folder)),
                        "call": qname,
                    }
                )
    return {
        "files": len(analysis.results),
        "parsed": sum(1 for r in analysis.results if r.facts is not None),
        "tools": kinds["tool"],
        "resources": kinds["resource"],
        "prompts": kinds["prompt"],
        "fl190": len(diagnostics),
        "fl190_messages": [f"{Path(d.path).relative_to(folder)}:{d.span.line}: {d.message}" for d in diagnostics],
        "handlers_unresolved": len(unresolved_handlers),
        "unresolved_handlers": unresolved_handlers,
        "reached_functions": len(project.functions),
        "callees": {outcome: outcomes[outcome] for outcome in OUTCOMES},
        "not_followed": not_followed,
    }


def run(corpus: Path, unit_filter: str | None) -> list[dict]:
    results = []
    for unit in read_units(corpus):
        if unit_filter and unit_filter not in unit["unit"]:
            continue
        folder = corpus / unit["folder"]
        started = time.perf_counter()
        try:
            figures = measure(folder)
        except Exception as error:  # noqa: BLE001 (a bug of ours is reported, the other units still run)
            figures = {"error": f"{type(error).__name__}: {error}"}
        figures.update(unit=unit["unit"], seconds=round(time.perf_counter() - started, 2))
        results.append(figures)
    return results


def print_table(results: list[dict]) -> None:
    header = (
        "unit",
        "files",
        "parsed",
        "defs",
        "FL190",
        "handlers unresolved",
        "callees followed",
        "into classes",
        "not followed",
        "outside",
    )
    print(" | ".join(header))
    totals: Counter = Counter()
    for r in results:
        if "error" in r:
            print(f"{r['unit']} | error: {r['error']}")
            continue
        definitions = r["tools"] + r["resources"] + r["prompts"]
        callees = r["callees"]
        row = (
            r["files"],
            r["parsed"],
            definitions,
            r["fl190"],
            r["handlers_unresolved"],
            callees["followed"],
            callees["class"],
            callees["unresolved"],
            callees["outside"],
        )
        totals.update(dict(zip(header[1:], row)))
        print(" | ".join([r["unit"], *map(str, row)]))
    print(" | ".join(["total", *(str(totals[column]) for column in header[1:])]))


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="the corpus folder (default: ../shared/corpus)")
    parser.add_argument("--unit", help="only units whose name contains this")
    parser.add_argument("--json", metavar="PATH", help="write every unit's figures and lists as JSON")
    parser.add_argument("--tree", help="measure this tree as one unit instead of the corpus")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.tree:
        results = [{**measure(Path(args.tree).resolve()), "unit": args.tree}]
        print_table(results)
        _write(args.json, args.tree, results)
        return 0
    corpus = find_corpus(args.corpus)
    if corpus is None:
        print("resolution: the corpus (../shared/corpus with its README.md) is absent: nothing to measure")
        return 0
    results = run(corpus, args.unit)
    print_table(results)
    print(f"resolution: {len(results)} units in {time.perf_counter() - started:.1f} s")
    _write(args.json, str(corpus), results)
    return 0


def _write(path: str | None, source: str, results: list[dict]) -> None:
    if path:
        Path(path).write_text(json.dumps({"measured": source, "units": results}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
