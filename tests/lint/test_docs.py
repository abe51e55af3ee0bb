"""Rule documentation: ``fusion-lint rule`` for every code and name, and the committed
``docs/rules.md`` generated from the rule classes (stale page = failing test)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fusion_lint.output.docs as docs
from fusion_lint.rules import all_rules, without_markers

RULES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
RULES = all_rules()


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a markdown heading (github-slugger): lower-case, drop everything but
    letters, digits, ``_``, ``-`` and spaces, then spaces become hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_rules_page_is_up_to_date() -> None:
    assert RULES_PAGE.is_file(), "docs/rules.md is missing: run `python -m fusion_lint.output.docs`"
    assert RULES_PAGE.read_text(encoding="utf-8") == docs.render_markdown(), (
        "docs/rules.md is stale: regenerate it with `python -m fusion_lint.output.docs`"
    )


def test_every_rule_url_points_at_its_heading_on_the_page() -> None:
    page = RULES_PAGE.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", page, flags=re.MULTILINE)
    anchors = [github_anchor(h) for h in headings]
    assert len(anchors) == len(set(anchors)), "two headings share an anchor: GitHub would suffix one"
    for rule in RULES:
        fragment = rule.url().rsplit("#", 1)[1]
        assert f"{rule.code} {rule.name}" in headings, rule.code
        assert fragment == github_anchor(f"{rule.code} {rule.name}")
        assert f"[{rule.code}](#{fragment})" in page, f"the index does not link {rule.code} to its section"
    linked = re.findall(r"\]\(#([^)]+)\)", page)
    assert set(linked) <= set(anchors), set(linked) - set(anchors)


def test_the_page_documents_every_rule_with_why_and_examples() -> None:
    page = docs.render_markdown()
    sections = re.split(r"^## ", page, flags=re.MULTILINE)[1:]
    assert [s.split("\n", 1)[0] for s in sections] == [f"{r.code} {r.name}" for r in RULES]
    for rule, section in zip(RULES, sections):
        assert f"**What it does.** {rule.summary}" in section
        assert f"**Why is this bad?** {rule.why}" in section
        assert "**Fix safety.** " in section
        if rule.INVALID:
            shown = without_markers(rule.invalid_examples()[0].snippet).rstrip()
            assert shown in section, f"{rule.code}: failing example missing"
        if rule.VALID or (rule.INVALID and rule.invalid_examples()[0].fixed):
            assert "**Use instead:**" in section or "**After the fix:**" in section, (
                f"{rule.code}: fixed example missing"
            )
        for title, text in (("Options", rule.options), ("Known limits", rule.limits)):
            assert (f"**{title}.** {text}" in section) == bool(text), (rule.code, title)


def test_the_readme_table_is_generated_from_the_rules() -> None:
    readme = (RULES_PAGE.parents[1] / "README.md").read_text(encoding="utf-8")
    assert docs.render_table() in readme, "the README's rule table is stale: run `python -m fusion_lint.output.docs`"
    for rule in RULES:
        assert f"| [{rule.code}]({rule.url()}) | `{rule.name}` |" in readme


def test_the_fixed_example_is_the_fix_output_or_the_closest_valid_snippet() -> None:
    fixable = next(r for r in RULES if r.invalid_examples() and r.invalid_examples()[0].fixed)
    example = fixable.invalid_examples()[0]
    assert docs.examples(fixable) == (without_markers(example.snippet), without_markers(example.fixed_snippet))
    from fusion_lint.rules.fl401_recovery_unknown_tool import RecoveryUnknownTool

    bad, good = docs.examples(RecoveryUnknownTool)
    assert bad == without_markers(RecoveryUnknownTool.invalid_examples()[0].snippet)
    assert good == without_markers(RecoveryUnknownTool.valid_examples()[0].snippet)


def test_the_docs_show_snippets_without_the_prelude_or_the_expectations() -> None:
    page = docs.render_markdown()
    assert "# error: FL" not in page
    assert "ENTRIES = [ErrorContract(" not in page  # the handler rules' prelude stays hidden
    assert 'raise ctx.fail("no_match") from e' in page  # FL302's fixed form, as its fix writes it


def test_docs_check_mode_reports_a_stale_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "rules.md"
    assert docs.main([str(target), "--check"]) == 1  # missing
    assert docs.main([str(target)]) == 0
    assert target.read_text(encoding="utf-8") == docs.render_markdown()
    assert docs.main([str(target), "--check"]) == 0
    target.write_text(target.read_text(encoding="utf-8").replace("## FL202", "## FL2O2"), encoding="utf-8")
    assert docs.main([str(target), "--check"]) == 1
    assert "stale" in capsys.readouterr().err


@pytest.mark.parametrize(
    "key",
    [key for rule in RULES for key in (rule.code, rule.name)] + [RULES[0].code.lower(), RULES[-1].name.upper()],
)
def test_rule_command_documents_every_code_and_name(key: str, run_cli) -> None:
    rule = docs.find_rule(key)
    outcome = run_cli("rule", key)
    assert outcome.exit_code == 0, outcome.stderr
    assert outcome.stdout.startswith(f"{rule.code} {rule.name} ")
    assert "What it does" in outcome.stdout and "Why is this bad?" in outcome.stdout
    assert "Fix safety" in outcome.stdout
    assert rule.url() in outcome.stdout
    if rule.INVALID:
        last_line = without_markers(rule.invalid_examples()[0].snippet).splitlines()[-1].strip()
        assert "Example" in outcome.stdout and last_line in outcome.stdout


def test_rule_command_shows_the_fix(run_cli) -> None:
    fixable = next(r for r in RULES if r.fix)
    outcome = run_cli("rule", fixable.code)
    assert "After the fix\n" in outcome.stdout or "Use instead\n" in outcome.stdout
    assert " ".join(fixable.fix.split()) in " ".join(outcome.stdout.split())
    assert ("The fix is safe" if fixable.fix_safety == "safe" else "The fix is unsafe") in outcome.stdout


def test_rule_all_lists_every_rule(run_cli) -> None:
    outcome = run_cli("rule", "--all")
    assert outcome.exit_code == 0
    listed = [line.split()[:2] for line in outcome.stdout.splitlines() if line.startswith("FL")]
    assert listed == [[r.code, r.name] for r in RULES]
    assert run_cli("rule").stdout == outcome.stdout


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [("FL4O0", "FL400"), ("recovery-unknown-tools", "recovery-unknown-tool"), ("no-such-rule-at-all", None)],
)
def test_unknown_rule_is_a_usage_error(key: str, suggestion, run_cli) -> None:
    outcome = run_cli("rule", key)
    assert outcome.exit_code == 2
    assert outcome.stdout == ""
    assert f"no rule with code or name '{key}'" in outcome.stderr
    assert "fusion-lint rule --all" in outcome.stderr
    if suggestion:
        assert f"did you mean {suggestion}" in outcome.stderr


def test_rule_key_and_all_together_is_a_usage_error(run_cli) -> None:
    outcome = run_cli("rule", "FL400", "--all")
    assert outcome.exit_code == 2 and "not both" in outcome.stderr


def test_the_readme_shows_what_the_quickstart_command_prints() -> None:
    """The README's first command and its printed output, run for real from the checkout's root
    (as a new user would, without a terminal: no colour)."""
    root = RULES_PAGE.parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    shown = readme.split("What the first command prints:\n\n```text\n", 1)[1].split("```", 1)[0]
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "NO_COLOR")}
    run = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "--no-cache", "fixtures/example_server"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert (run.returncode, run.stderr) == (1, "")
    assert run.stdout == shown, "the README's quickstart output is stale: paste what the command prints"


def test_the_readme_is_a_package_page() -> None:
    """DESIGN §13.5: read in five minutes — at most 300 lines, no commit hashes or issue numbers
    (measurements and internals live in docs/), its two commands each in a venv of its own, and the
    pre-commit snippet's lock hook explained before it is used."""
    readme = (RULES_PAGE.parents[1] / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert not re.search(r"\b[0-9a-f]{7,40}\b", readme.replace("fusion-lint", "")), "a commit hash in the README"
    assert not re.search(r"\b[Ii]ssues? #?\d+|#\d{2,}\b", readme), "an issue number in the README"
    for heading in ("## Install", "## First run", "## Where it runs", "## Adopting contracts"):
        assert heading in readme
    commands = re.findall(r"^python3 -m venv (\S+) && \. (\S+)/bin/activate", readme, re.MULTILINE)
    assert len(commands) == 2 and commands[0][0] != commands[1][0], commands
    pre_commit = readme.index("id: fusion-lint-lock")
    assert readme.index("`fusion-lint lock`") < pre_commit, "say to create the lockfile before the hook"
