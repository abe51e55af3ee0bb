"""A seeded, reproducible sample of the linter's findings on ``../shared/corpus``, for judging (issue 19).

    python bench/precision_sample.py                      # writes /tmp/precision/{sample.md,sample.json}
    python bench/precision_sample.py --out DIR --seed 19 --size 50
    python bench/precision_sample.py --rules FL306,FL307  # only these rules
    python bench/precision_sample.py --corpus PATH        # another copy of the corpus

Each unit of the corpus README's table is linted as a project of its own, the way its authors would
run the linter: the command line, JSON output, ``--no-cache``, every rule selected (``--select FL``,
the opt-in rules included). For each sampled rule (FL300-FL307, FL118, FL208 when the linter has
it) at most ``--size`` findings are drawn with ``random.Random(seed)`` from the rule's findings in a
fixed order (unit, file, line, column, message), so the same corpus and linter give the same sample.
The sample is written with each finding's source context (the enclosing ``def`` and the lines above
the finding) to a folder outside the project; the verdicts live in ``docs/precision.md``.
Prints the per-rule totals of every rule. Exit status 0, also when the corpus is absent (a message
says so and nothing is run).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from census import find_corpus, read_units  # noqa: E402

SAMPLED = ("FL300", "FL301", "FL302", "FL303", "FL304", "FL305", "FL306", "FL307", "FL118", "FL208")
SEED = 19
SIZE = 50
CONTEXT_ABOVE = 14


def lint_unit(folder: Path) -> list[dict]:
    """The linter's findings on one unit, every rule selected, as the JSON formatter prints them."""
    command = [
        sys.executable,
        "-m",
        "fusion_lint",
        "check",
        str(folder),
        "--select",
        "FL",
        "--output-format",
        "json",
        "--no-cache",
        "--exit-zero",
        "--quiet",
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"fusion-lint failed on {folder} (exit {done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout or "[]")


def known_codes() -> set[str]:
    """The rule codes this linter has (a rule not yet built is not sampled)."""
    sys.path.insert(0, str(REPO))
    from fusion_lint.rules import all_rules

    return {rule.code for rule in all_rules()}


def context(path: Path, line: int) -> str:
    """The finding's line with the lines above it (from the enclosing ``def`` where that is near),
    numbered, the finding's line marked."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    start = max(0, line - 1 - CONTEXT_ABOVE)
    for number in range(line - 1, -1, -1):
        text = lines[number].lstrip()
        if text.startswith(("def ", "async def ")):
            if number >= start:
                start = number
            else:
                # Far above: show the def line, then the window.
                return (
                    _numbered(lines, number, number + 1, line)
                    + "\n     ...\n"
                    + _numbered(lines, start, line + 2, line)
                )
            break
    return _numbered(lines, start, line + 2, line)


def _numbered(lines: list[str], start: int, end: int, mark: int) -> str:
    return "\n".join(f"{'>' if n + 1 == mark else ' '}{n + 1:5} {lines[n]}" for n in range(start, min(end, len(lines))))


def sample(findings: list[dict], code: str, size: int, seed: int) -> list[dict]:
    """At most ``size`` findings of ``code``, drawn with a fixed seed from a fixed order."""
    of_rule = sorted(
        (f for f in findings if f["code"] == code),
        key=lambda f: (f["unit"], f["filename"], f["location"]["row"], f["location"]["column"], f["message"]),
    )
    if len(of_rule) <= size:
        return of_rule
    chosen = random.Random(f"{seed}:{code}").sample(range(len(of_rule)), size)
    return [of_rule[i] for i in sorted(chosen)]


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="the corpus folder (default: ../shared/corpus)")
    parser.add_argument("--out", default="/tmp/precision", help="where the sample is written (outside the project)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--size", type=int, default=SIZE, help="findings sampled per rule at most")
    parser.add_argument("--rules", help="comma-separated codes to sample (default: FL300-FL307, FL118, FL208)")
    parser.add_argument("--unit", help="only units whose name contains this")
    args = parser.parse_args(argv)
    corpus = find_corpus(args.corpus)
    if corpus is None:
        print("precision_sample: the corpus (../shared/corpus with its README.md) is absent: nothing to sample")
        return 0
    out = Path(args.out).resolve()
    if out == REPO or REPO in out.parents:
        raise SystemExit(f"--out {out} is inside the project: the sample holds the corpus's code, write it elsewhere")
    wanted = args.rules.split(",") if args.rules else list(SAMPLED)
    codes = [code for code in wanted if code in known_codes()]
    missing = [code for code in wanted if code not in codes]

    findings: list[dict] = []
    for unit in read_units(corpus):
        if args.unit and args.unit not in unit["unit"]:
            continue
        folder = corpus / unit["folder"]
        for finding in lint_unit(folder):
            finding["unit"] = unit["unit"]
            finding["file"] = (folder / finding["filename"]).resolve().relative_to(corpus).as_posix()
            findings.append(finding)

    totals = Counter(f["code"] for f in findings)
    print(f"{len(findings)} findings on {corpus}; per rule:")
    for code, count in sorted(totals.items()):
        print(f"  {code}: {count}")
    if missing:
        print(f"not in this linter (not sampled): {', '.join(missing)}")

    out.mkdir(parents=True, exist_ok=True)
    report = [f"# Precision sample (seed {args.seed}, at most {args.size} per rule)\n"]
    samples = {}
    for code in codes:
        chosen = sample(findings, code, args.size, args.seed)
        samples[code] = {"total": totals.get(code, 0), "sample": chosen}
        report.append(f"\n## {code}: {totals.get(code, 0)} findings, {len(chosen)} sampled\n")
        for number, finding in enumerate(chosen, 1):
            row = finding["location"]["row"]
            report.append(
                f"\n### {code}-{number}: {finding['file']}:{row}\n\n{finding['message']}\n\n```\n"
                f"{context(corpus / finding['file'], row)}\n```\n"
            )
    (out / "sample.md").write_text("".join(report), encoding="utf-8")
    (out / "sample.json").write_text(
        json.dumps({"seed": args.seed, "size": args.size, "totals": totals, "samples": samples}, indent=1),
        encoding="utf-8",
    )
    (out / "findings.json").write_text(json.dumps(findings, indent=1), encoding="utf-8")
    print(f"sample written to {out / 'sample.md'} ({sum(len(s['sample']) for s in samples.values())} findings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
