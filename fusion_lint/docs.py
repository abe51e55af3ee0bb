"""Rule documentation: ``fusion-lint rule`` and the generated ``docs/rules.md``, from the rule classes."""
from __future__ import annotations

import textwrap

from .rules import Rule, all_rules


def _example(rule: type[Rule]) -> tuple[str, str]:
    bad = rule.INVALID[0].code if rule.INVALID else ""
    good = ""
    if rule.INVALID and rule.INVALID[0].fixed:
        good = rule.INVALID[0].fixed
    elif rule.VALID:
        good = rule.VALID[0]
    return bad, good


def render_rule(rule: type[Rule]) -> str:
    bad, good = _example(rule)
    parts = [
        f"{rule.code} {rule.name} ({rule.severity}{'' if rule.default_enabled else ', opt-in'})",
        "",
        "What it does",
        textwrap.indent(textwrap.fill(rule.summary, 96), "  "),
        "",
        "Why it matters",
        textwrap.indent(textwrap.fill(rule.why, 96), "  "),
    ]
    if bad:
        parts += ["", "Example (fires)", textwrap.indent(bad.rstrip(), "    ")]
    if good:
        parts += ["", "Instead", textwrap.indent(good.rstrip(), "    ")]
    parts += ["", "Fix", "  " + (rule.fix or "None automatic; the message says what to change.")]
    parts += ["", f"Docs: {rule.url()}"]
    return "\n".join(parts) + "\n"


def render_rule_list() -> str:
    rows = [f"{r.code}  {r.name:<38} {r.severity:<8} {'' if r.default_enabled else '(opt-in) '}{r.summary}" for r in all_rules()]
    return "\n".join(rows) + "\n"


def render_markdown() -> str:
    out = [
        "# fusion-lint rules",
        "",
        "Generated from the rule classes by `python -m fusion_lint.docs`; a test fails when this file is stale.",
        "",
        "| code | name | severity | fix | what |",
        "|---|---|---|:---:|---|",
    ]
    for rule in all_rules():
        anchor = f"{rule.code.lower()}-{rule.name}"
        sev = rule.severity + ("" if rule.default_enabled else " (opt-in)")
        out.append(f"| [{rule.code}](#{anchor}) | {rule.name} | {sev} | {'yes' if rule.fix else ''} | {rule.summary} |")
    for rule in all_rules():
        bad, good = _example(rule)
        out += ["", f"## {rule.code} {rule.name}", "", f"**{rule.severity}**" + ("" if rule.default_enabled else ", opt-in"),
                "", f"**What it does.** {rule.summary}", "", f"**Why it matters.** {rule.why}"]
        if bad:
            out += ["", "**Example** (fires):", "", "```python", bad.rstrip(), "```"]
        if good:
            out += ["", "**Instead:**", "", "```python", good.rstrip(), "```"]
        out += ["", f"**Fix.** {rule.fix or 'None automatic; the message says what to change.'}"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules.md")
    target.write_text(render_markdown(), encoding="utf-8")
