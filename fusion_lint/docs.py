"""Rule documentation, generated from the rule classes (their code, name, severity, summary, why,
fix and VALID/INVALID examples): ``fusion-lint rule`` prints one rule or the list, and
``python -m fusion_lint.docs`` writes ``docs/rules.md`` (``--check`` says whether it is stale).

The rule classes are the single source: the page, the terminal help, the SARIF ``helpUri`` and the
LSP code links all come from them, and ``Rule.url()``'s anchor is the one GitHub derives from the
page's ``## <CODE> <name>`` heading.
"""
from __future__ import annotations

import difflib
import sys
import textwrap
from pathlib import Path
from typing import Optional, Sequence

from .rules import Rule, all_rules

DEFAULT_TARGET = Path("docs/rules.md")
WIDTH = 96
NO_FIX = "None automatic; the message says what to change."
# Reported by the engine for a whole file: a line suppression cannot reach them.
PER_FILE_RULES = frozenset({"FL000", "FL001", "FL999"})

SECTIONS = (
    ("FL0", "Files", "Problems that stop a file from being checked at all."),
    ("FL1", "Contract shape", "Each entry of `errors=` is well formed (DESIGN §5.1)."),
    ("FL2", "Handler conformance", "The handler and the code it calls raise what the contract declares (§5.2)."),
    ("FL3", "Handler body", "How the handler raises and catches (§5.3)."),
    ("FL4", "Recovery text", "The recovery hint names a step the agent can take: a tool of this server (§5.4)."),
    ("FL9", "Suppressions and internal errors", "About the linter's own run."),
)


class UnknownRule(LookupError):
    """No rule has that code or name; the message suggests the closest ones."""


def find_rule(key: str) -> type[Rule]:
    """The rule with this code (any case) or name; ``UnknownRule`` with suggestions otherwise."""
    wanted = key.strip()
    for rule in all_rules():
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule
    codes = [r.code for r in all_rules()]
    if wanted[:2].upper() == "FL":
        # FL4O0, FL2l2: letters typed for the digits they look like
        digits = wanted[2:].upper().translate(str.maketrans("OIL", "011"))
        close = [f"FL{digits}"] if f"FL{digits}" in codes else difflib.get_close_matches(wanted.upper(), codes, n=3)
    else:
        close = difflib.get_close_matches(wanted.lower(), [r.name for r in all_rules()], n=3)
    hint = f"; did you mean {', '.join(close[:-1]) + ' or ' if len(close) > 1 else ''}{close[-1]}?" if close else ""
    raise UnknownRule(f"no rule with code or name '{key}'{hint} (list them all: fusion-lint rule --all)")


def examples(rule: type[Rule]) -> tuple[Optional[str], Optional[str]]:
    """(a snippet that fires the rule, its fixed form): the first INVALID example, and what its fix
    produces or else the VALID example closest to it, so the two read as a before and after."""
    if not rule.INVALID:
        return None, (rule.VALID[0] if rule.VALID else None)
    bad = rule.INVALID[0]
    if bad.fixed is not None:
        return bad.code, bad.fixed
    if not rule.VALID:
        return bad.code, None
    closest = max(rule.VALID, key=lambda good: difflib.SequenceMatcher(None, bad.code, good).ratio())
    return bad.code, closest


def _status(rule: type[Rule]) -> str:
    enabled = "on by default" if rule.default_enabled else f"opt-in (--extend-select {rule.code})"
    return f"{rule.severity}, {enabled}"


def _suppression(rule: type[Rule]) -> Optional[str]:
    if rule.code in PER_FILE_RULES:
        return None
    return f"`# noqa: {rule.code}` or `# fusion-lint: ignore[{rule.name}]` on the reported line"


# ----- the terminal ---------------------------------------------------------------------------


def _paragraph(title: str, text: str) -> list[str]:
    return ["", title, textwrap.indent(textwrap.fill(text, WIDTH - 2), "  ")]


def _code_block(title: str, code: str) -> list[str]:
    return ["", title, textwrap.indent(code.rstrip(), "    ")]


def render_rule(rule: type[Rule]) -> str:
    """``fusion-lint rule CODE``: what it checks, why, a failing and a fixed example, the fix."""
    bad, good = examples(rule)
    lines = [f"{rule.code} {rule.name} ({_status(rule)})"]
    lines += _paragraph("What it checks", rule.summary)
    lines += _paragraph("Why it matters", rule.why)
    if bad:
        lines += _code_block("Example (fires)", bad)
    if good:
        lines += _code_block("Fixed" if rule.INVALID and rule.INVALID[0].fixed else "Instead", good)
    lines += _paragraph("Fix", rule.fix or NO_FIX)
    suppression = _suppression(rule)
    if suppression:
        lines += _paragraph("Suppress", suppression.replace("`", ""))
    lines += ["", f"Docs: {rule.url()}"]
    return "\n".join(lines) + "\n"


def render_rule_list() -> str:
    """``fusion-lint rule --all``: one line per rule."""
    rules = all_rules()
    width = max(len(r.name) for r in rules)
    lines = [f"{'code':<6} {'name':<{width}} {'severity':<8} {'default':<7} {'fix':<3}  what it checks", ""]
    for rule in rules:
        default = "on" if rule.default_enabled else "opt-in"
        fix = "yes" if rule.fix else ""
        lines.append(f"{rule.code:<6} {rule.name:<{width}} {rule.severity:<8} {default:<7} {fix:<3}  {rule.summary}")
    lines += ["", "Details: fusion-lint rule CODE_OR_NAME"]
    return "\n".join(lines) + "\n"


# ----- docs/rules.md ----------------------------------------------------------------------------


def anchor(rule: type[Rule]) -> str:
    return rule.url().rsplit("#", 1)[1]


def heading(rule: type[Rule]) -> str:
    return f"{rule.code} {rule.name}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fenced(code: str) -> list[str]:
    return ["```python", code.rstrip(), "```"]


def render_markdown() -> str:
    rules = all_rules()
    out = [
        "# fusion-lint rules",
        "",
        "<!-- Generated from the rule classes by `python -m fusion_lint.docs`; do not edit by hand. "
        "A test fails when this file is stale. -->",
        "",
        "Every rule has a stable code and name; both work in `--select`, `--ignore`, `per-file-ignores` and "
        "suppression comments. `fusion-lint rule CODE_OR_NAME` prints the same page in the terminal.",
    ]
    sectioned = {rule.code for prefix, _, _ in SECTIONS for rule in rules if rule.code.startswith(prefix)}
    others = ("FL", "Other rules", "") if any(rule.code not in sectioned for rule in rules) else None
    for prefix, title, intro in [*SECTIONS, *([others] if others else [])]:
        members = [rule for rule in rules if rule.code.startswith(prefix)]
        if prefix == "FL":
            members = [rule for rule in members if rule.code not in sectioned]
        if not members:
            continue
        out += ["", f"**{title}.** {intro}", "", "| code | name | severity | fix | what it checks |",
                "|---|---|---|:---:|---|"]  # fmt: skip
        for rule in members:
            severity = rule.severity + ("" if rule.default_enabled else " (opt-in)")
            out.append(
                f"| [{rule.code}](#{anchor(rule)}) | `{rule.name}` | {severity} | {'yes' if rule.fix else ''} "
                f"| {_cell(rule.summary)} |"
            )
    for rule in rules:
        out += ["", f"## {heading(rule)}", "", f"*{_status(rule)}*", "", f"**What it checks.** {rule.summary}",
                "", f"**Why it matters.** {rule.why}"]  # fmt: skip
        bad, good = examples(rule)
        if bad:
            out += ["", "**Example** (fires):", "", *_fenced(bad)]
        if good:
            label = "**Fixed:**" if rule.INVALID and rule.INVALID[0].fixed else "**Instead:**"
            out += ["", label, "", *_fenced(good)]
        out += ["", f"**Fix.** {rule.fix or NO_FIX}"]
        suppression = _suppression(rule)
        if suppression:
            out += ["", f"**Suppress.** {suppression}."]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] = ()) -> int:
    """``python -m fusion_lint.docs [PATH] [--check]``: write the page (default ``docs/rules.md``,
    relative to the current directory: run it from the repository root), or with ``--check`` exit 1
    when it is missing or stale (for CI and pre-commit)."""
    args = list(argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    target = Path(paths[0]) if paths else DEFAULT_TARGET
    rendered = render_markdown()
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if check:
        if current != rendered:
            print(f"{target} is stale: regenerate it with `python -m fusion_lint.docs`", file=sys.stderr)
            return 1
        return 0
    if current != rendered:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(rendered, encoding="utf-8", newline="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
