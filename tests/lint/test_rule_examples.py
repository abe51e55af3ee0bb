"""Every rule's VALID and INVALID examples are its documentation: run them all, in memory.

A VALID snippet must not fire its rule; an INVALID one fires exactly where its ``# error: FLxxx``
comments say (each message containing the fragment given there, and starting with the label of the
definition it concerns), and an example with a ``fixed`` form is what the rule's fixes make of it.
A rule's ``fix_safety`` is the applicability of every fix it offers.
"""

from __future__ import annotations

import pytest
from harness import lint_example, lint_sources

from fusion_lint.check.engine import ENGINE_RULES
from fusion_lint.rules import Rule, all_rules

LABEL_PREFIXES = ("tool '", "resource '", "prompt '", "server '")  # a low-level dispatcher: "server 'x' call_tool"
#: The engine's own rules (FL000 parse error, FL001 unreadable, FL900 unused suppressions, FL999
#: internal error) have no definition to label; FL000's example still runs.
RULES = all_rules()
DEFINITION_RULES = [rule for rule in RULES if rule.code not in ENGINE_RULES]


def _cases(kind: str) -> list:
    return [
        pytest.param(rule, example, id=f"{rule.code}-{kind}-{index}")
        for rule in RULES
        for index, example in enumerate(rule.valid_examples() if kind == "valid" else rule.invalid_examples())
    ]


def test_every_definition_rule_has_examples() -> None:
    assert {r.code for r in DEFINITION_RULES} >= {
        f"FL{n}" for n in (*range(100, 118), 190, *range(200, 208), *range(300, 306))
    }
    for rule in DEFINITION_RULES:
        assert rule.VALID, f"{rule.code} has no VALID example"
        assert rule.INVALID, f"{rule.code} has no INVALID example"
        assert all(e.expectations() for e in rule.invalid_examples()), f"{rule.code}: an INVALID example marks nothing"


@pytest.mark.parametrize(("rule", "example"), _cases("valid"))
def test_valid_example_does_not_fire(rule: type[Rule], example) -> None:
    linted = lint_example(rule, example)
    fired = linted.of(rule.code)
    assert not fired, [(d.span.line - linted.offset, d.message) for d in fired]
    # A rule's documentation must not show code that trips parse or internal errors.
    assert not linted.of("FL000") and not linted.of("FL999"), linted.report.diagnostics


@pytest.mark.parametrize(("rule", "example"), _cases("invalid"))
def test_invalid_example_fires_where_it_says(rule: type[Rule], example) -> None:
    linted = lint_example(rule, example)
    expected = [(line, fragment) for line, code, fragment in example.expectations() if code == rule.code]
    assert expected, "the example marks no finding of its own rule"
    fired = sorted((d.span.line - linted.offset, d.message) for d in linted.of(rule.code))
    assert [line for line, _ in fired] == sorted(line for line, _ in expected), fired
    for (line, fragment), (_, message) in zip(sorted(expected), fired):
        assert fragment in message, (line, fragment, message)
    for diagnostic in linted.of(rule.code):
        assert diagnostic.severity == rule.severity
        if rule.code not in ENGINE_RULES:
            assert diagnostic.message.startswith(LABEL_PREFIXES), diagnostic.message
    assert not linted.of("FL999"), linted.report.diagnostics


@pytest.mark.parametrize(("rule", "example"), [c for c in _cases("invalid") if c.values[1].fixed is not None])
def test_fixed_example_is_what_the_fix_makes(rule: type[Rule], example) -> None:
    assert lint_example(rule, example).fixed() == example.fixed_snippet


@pytest.mark.parametrize("rule", DEFINITION_RULES, ids=[r.code for r in DEFINITION_RULES])
def test_fix_safety_is_what_the_fixes_say(rule: type[Rule]) -> None:
    """``fix_safety`` is data, checked against the fixes the rule actually returns: a rule that
    documents a fix offers one on its first INVALID example, with that applicability; a rule
    without a fix offers none."""
    fixes = [d.fix for example in rule.invalid_examples() for d in lint_example(rule, example).of(rule.code) if d.fix]
    if rule.fix is None:
        assert rule.fix_safety is None and not fixes
        return
    assert rule.fix_safety in ("safe", "unsafe")
    assert fixes, f"{rule.code} documents a fix but offers none on its INVALID examples"
    assert {fix.applicability for fix in fixes} == {rule.fix_safety}


def test_opt_in_rule_needs_selecting() -> None:
    from fusion_lint.rules.fl207_service_reason_unraised import ServiceReasonUnraised

    assert not ServiceReasonUnraised.default_enabled
    example = ServiceReasonUnraised.invalid_examples()[0]
    source = {"app.py": ServiceReasonUnraised.prelude + example.snippet}
    assert not [d for d in lint_sources(source).diagnostics if d.code == "FL207"]
    assert [d for d in lint_sources(source, extend_select=["FL207"]).diagnostics if d.code == "FL207"]


def test_the_harness_reads_nothing_from_disk(tmp_path, monkeypatch) -> None:
    """An in-memory project is linted from its sources alone, whatever the working directory holds."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\nignore = ['ALL']\n")
    rule = next(r for r in RULES if r.code == "FL300")
    assert lint_example(rule, rule.invalid_examples()[0]).of("FL300")
