"""FL999 internal-error: a rule raised an exception."""

from __future__ import annotations

from fusion_lint.rules import Rule, register


@register
class InternalError(Rule):
    code, name, severity = "FL999", "internal-error", "error"
    summary = "A rule raised an exception on this file: a bug in fusion-lint, reported with the rule and file."
    why = "One failing rule must not hide the others' findings or stop the run; this makes the failure visible."
    limits = "Reported by the engine for the whole file: a line suppression cannot silence it."
