"""Every rule's VALID and INVALID examples are its documentation: run them all.

A VALID snippet must not fire its rule; an INVALID one fires exactly ``count`` times, on ``lines``
when given, each message containing ``message`` and starting with the definition's label.
"""
from __future__ import annotations

import pytest

from fusion_lint.rules import Example, Rule, all_rules

LABEL_PREFIXES = ("tool '", "resource '", "prompt '")
#: The engine's own per-file rules (FL000 parse error, FL001 unreadable, FL999 internal error,
#: unused suppressions) live in ``rules.meta``: they have no definition to label and are tested
#: with the engine. Every other rule checks definitions and is documented by its examples.
RULES = [rule for rule in all_rules() if rule.__module__ != "fusion_lint.rules.meta"]


def _valid_cases() -> list:
    return [
        pytest.param(rule, snippet, id=f"{rule.code}-valid-{index}")
        for rule in RULES
        for index, snippet in enumerate(rule.VALID)
    ]


def _invalid_cases() -> list:
    return [
        pytest.param(rule, example, id=f"{rule.code}-invalid-{index}")
        for rule in RULES
        for index, example in enumerate(rule.INVALID)
    ]


def _lint_with(rule: type[Rule], lint_project, source: str):
    # The default set plus the rule itself: opt-in rules (FL207) must be asked for.
    return lint_project({"app.py": source}, extend_select=[rule.code], dedent=False)


def test_every_definition_rule_has_examples() -> None:
    assert {r.code for r in RULES} >= {f"FL{n}" for n in (*range(100, 118), 190, *range(200, 208), *range(300, 306))}
    for rule in RULES:
        assert rule.VALID, f"{rule.code} has no VALID example"
        assert rule.INVALID, f"{rule.code} has no INVALID example"


@pytest.mark.parametrize(("rule", "snippet"), _valid_cases())
def test_valid_example_does_not_fire(rule: type[Rule], snippet: str, lint_project) -> None:
    linted = _lint_with(rule, lint_project, snippet)
    fired = linted.of(rule.code)
    assert not fired, [(d.span.line, d.message) for d in fired]
    # A rule's documentation must not show code that trips parse or internal errors.
    assert not linted.of("FL000") and not linted.of("FL999"), linted.summary()


@pytest.mark.parametrize(("rule", "example"), _invalid_cases())
def test_invalid_example_fires(rule: type[Rule], example: Example, lint_project) -> None:
    linted = _lint_with(rule, lint_project, example.code)
    fired = linted.of(rule.code)
    assert len(fired) == example.count, [(d.span.line, d.message) for d in fired]
    if example.lines:
        assert sorted(d.span.line for d in fired) == sorted(example.lines)
    for diagnostic in fired:
        assert example.message in diagnostic.message
        assert diagnostic.message.startswith(LABEL_PREFIXES), diagnostic.message
        assert diagnostic.severity == rule.severity
    assert not linted.of("FL999"), linted.summary()


def test_opt_in_rule_needs_selecting(lint_project) -> None:
    from fusion_lint.rules.handler import ServiceReasonUnraised

    assert not ServiceReasonUnraised.default_enabled
    example = ServiceReasonUnraised.INVALID[0]
    assert not lint_project({"app.py": example.code}, dedent=False).of("FL207")
    assert lint_project({"app.py": example.code}, extend_select=["FL207"], dedent=False).of("FL207")
