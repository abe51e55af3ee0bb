"""What FL208's drafted contracts look like on real servers (issue 30, DESIGN §13.2).

Copies each FastMCP/fastmcp unit of ``../shared/corpus`` to a temporary folder (the corpus is never
written), runs ``fusion-lint --extend-select FL208 --fix --unsafe-fixes`` there, and measures the
drafts: every changed file compiles; which drafted entries had their raise site rewritten to
``raise fail("<reason>", ...)``; reasons that are fragments or single generic words; ``when`` texts
cut mid-word or holding ``{``; ``INVALID_PARAMS`` entries for configuration failures; and what a
re-lint finds in the changed files that the original did not have (FL111/FL112 are the recovery
left to write, by design).

    python bench/fl208_drafts.py [--corpus ../shared/corpus] [--json out.json] [--sample 30]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from census import read_units  # noqa: E402

FRAMEWORKS = ("mcp1-FastMCP", "fastmcp")
STOP_ENDINGS = {"non", "to", "of", "for", "with", "and", "or", "be", "is", "are", "must", "the", "a", "an", "in", "on"}
STOP_ENDINGS |= {"at", "by", "from", "not", "no", "if", "when", "than", "as", "should", "can", "cannot", "was", "has"}
GENERIC = {"request", "failure", "error", "failed", "invalid", "value", "data", "tool", "exception", "os", "response"}
GENERIC |= {"result", "input", "issue", "problem", "unknown", "missing", "operation", "runtime", "internal"}
CONFIGURATION = re.compile(
    r"environment variable|env var|\benv\b|not configured|configur|credential|api[_ ]?key|(?-i:\b[A-Z][A-Z0-9]+_[A-Z0-9_]+\b)|"
    r"not set\b|not installed|client not initiali[sz]ed|no (aws )?profile",
    re.I,
)


def run_linter(root: Path, *flags: str) -> subprocess.CompletedProcess:
    """``fusion-lint ROOT --extend-select FL208 --no-cache FLAGS`` in a subprocess."""
    command = [sys.executable, "-m", "fusion_lint", str(root), "--extend-select", "FL208", "--no-cache", *flags]
    return subprocess.run(command, capture_output=True, text=True)


def lint_json(root: Path) -> list[dict]:
    return json.loads(run_linter(root, "--output-format", "json").stdout or "[]")


def drafted_entries(source: str) -> list[dict]:
    """The ``ErrorContract(...)`` calls of a module, as dicts of their literal keywords."""
    entries = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "ErrorContract":
            entry = {"line": node.lineno}
            for keyword in node.keywords:
                if isinstance(keyword.value, ast.Constant):
                    entry[keyword.arg] = keyword.value.value
                elif isinstance(keyword.value, ast.Attribute):
                    entry[keyword.arg] = keyword.value.attr
            entries.append(entry)
    return entries


def fail_messages(source: str) -> dict[str, list[str]]:
    """The message texts each reason is raised with by ``fail("<reason>", <message>)``, holes ``<x>``."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "fail" and len(node.args) > 1:
            if isinstance(node.args[0], ast.Constant):
                message = node.args[1]
                if isinstance(message, ast.Constant) and isinstance(message.value, str):
                    found.setdefault(node.args[0].value, []).append(message.value)
                elif isinstance(message, ast.JoinedStr):
                    text = "".join(v.value if isinstance(v, ast.Constant) else "<x>" for v in message.values)
                    found.setdefault(node.args[0].value, []).append(text)
    return found


def failed_reasons(source: str) -> Counter:
    """How often each reason is raised with ``fail("<reason>", ...)`` in a module."""
    reasons: Counter = Counter()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "fail":
            if node.args and isinstance(node.args[0], ast.Constant):
                reasons[node.args[0].value] += 1
    return reasons


def cut_mid_word(when: str, originals: list[str]) -> bool:
    """Whether ``when`` is the message it was drafted from cut short: a strict prefix whose rest is
    more than punctuation or the next sentence (a word, or the placeholder an f-string was cut at)."""
    stem = re.sub(r"<[^<>]*>", "<x>", when).rstrip(".").lower()
    for text in originals:
        flat = re.sub(r"^\s*(error|failure)\s*[:\-]\s*", "", text.strip(), flags=re.I).lower()
        if (
            flat.startswith(stem)
            and flat[len(stem) :].strip(" .!?:;,\n")
            and not re.match(r"[.!?]\s+[a-z]", flat[len(stem) :])
        ):
            return True
    return False


def measure_unit(unit: dict, corpus: Path, work: Path) -> dict:
    source = corpus / unit["folder"]
    root = work / unit["folder"].replace("/", "+")
    shutil.copytree(source, root, copy_function=shutil.copyfile)  # writable copies: the corpus is read-only
    originals = {p: p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*.py")}
    before = Counter((d["filename"], d["code"]) for d in lint_json(root))
    done = run_linter(root, "--fix", "--unsafe-fixes")
    after = Counter((d["filename"], d["code"]) for d in lint_json(root))
    result = {
        "unit": unit["unit"],
        "changed": 0,
        "not_compiling": [],
        "entries": [],
        "stderr": done.stderr.splitlines(),
    }
    for path, old in originals.items():
        new = path.read_text(encoding="utf-8", errors="replace")
        if new == old:
            continue
        result["changed"] += 1
        try:
            compile(new, str(path), "exec")
        except SyntaxError as exc:
            result["not_compiling"].append(f"{path}: {exc}")
            continue
        old_entries = {(e.get("reason"), e.get("when")) for e in drafted_entries(old)}
        raised = failed_reasons(new)
        raised_before = failed_reasons(old)
        messages = fail_messages(new)
        for entry in drafted_entries(new):
            if (entry.get("reason"), entry.get("when")) in old_entries:
                continue
            reason, when = str(entry.get("reason", "")), str(entry.get("when", ""))
            words = reason.split("_")
            entry.update(
                path=str(path.relative_to(work)),
                rewritten=raised[reason] > raised_before[reason],
                fragment=words[-1] in STOP_ENDINGS or any(w in ("non",) for w in words),
                generic=len(words) == 1 and reason in GENERIC,
                brace="{" in when,
                cut=cut_mid_word(when, messages.get(reason, [])),
                config_as_params=entry.get("code") == "INVALID_PARAMS" and bool(CONFIGURATION.search(when)),
            )
            result["entries"].append(entry)
    changed = {str(p) for p, old in originals.items() if p.read_text(encoding="utf-8", errors="replace") != old}
    introduced = Counter()
    for (filename, code), count in after.items():
        if filename in changed and code[:3] in ("FL1", "FL2") and code not in ("FL111", "FL112"):
            extra = count - before.get((filename, code), 0)
            if extra > 0:
                introduced[code] += extra
    result["introduced"] = dict(introduced)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--sample", type=int, default=0, help="print this many drafts, seeded, to judge")
    parser.add_argument("--seed", type=int, default=30, help="the sample's seed")
    parser.add_argument("--units", nargs="*", help="only these units")
    args = parser.parse_args()
    if not (args.corpus / "README.md").is_file():
        print(f"no corpus at {args.corpus}: nothing to measure")
        return
    units = [u for u in read_units(args.corpus) if u["framework"].startswith(FRAMEWORKS)]
    if args.units:
        units = [u for u in units if u["unit"] in args.units]
    results = []
    with tempfile.TemporaryDirectory() as work:
        for unit in units:
            results.append(measure_unit(unit, args.corpus, Path(work)))
    entries = [e for r in results for e in r["entries"]]
    total = len(entries) or 1
    summary = {
        "units": len(results),
        "files changed": sum(r["changed"] for r in results),
        "files not compiling": sum(len(r["not_compiling"]) for r in results),
        "entries": len(entries),
        "rewritten": sum(e["rewritten"] for e in entries),
        "rewritten %": round(100 * sum(e["rewritten"] for e in entries) / total, 1),
        "fragment reasons": sum(e["fragment"] for e in entries),
        "generic reasons": sum(e["generic"] for e in entries),
        "when with {": sum(e["brace"] for e in entries),
        "when cut mid-word": sum(e["cut"] for e in entries),
        "INVALID_PARAMS for configuration": sum(e["config_as_params"] for e in entries),
        "codes": dict(Counter(e.get("code") for e in entries).most_common()),
        "introduced on re-lint (not FL111/FL112)": dict(sum((Counter(r["introduced"]) for r in results), Counter())),
        "skipped fixes": sum(1 for r in results for line in r["stderr"] if "fix skipped" in line),
        "not applicable": sum(1 for r in results for line in r["stderr"] if "not applicable" in line),
    }
    print(json.dumps(summary, indent=2))
    for label in ("fragment", "generic", "brace", "cut", "config_as_params"):
        bad = [e for e in entries if e[label]][:5]
        for e in bad:
            print(f"  {label}: {e.get('reason')!r} {e.get('code')} {e.get('when')!r}")
    if args.sample:
        for e in random.Random(args.seed).sample(entries, min(args.sample, len(entries))):
            print(
                f"- {e['path']}:{e['line']} reason={e.get('reason')!r} code={e.get('code')} when={e.get('when')!r} rewritten={e['rewritten']}"
            )
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "results": results}, indent=1))


if __name__ == "__main__":
    main()
