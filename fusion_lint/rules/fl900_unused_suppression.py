"""FL900 unused-suppression: a suppression comment that suppresses nothing."""

from __future__ import annotations

from fusion_lint.rules import Rule, register


@register
class UnusedSuppression(Rule):
    code, name, severity = "FL900", "unused-suppression", "warning"
    summary = "A `# noqa` or `# fusion-lint: ignore[...]` comment that suppresses nothing (only with --report-unused-suppressions)."
    why = "A stale suppression silently hides the next real finding on that line; removing it keeps the checks honest."
    options = "Reported only with `--report-unused-suppressions`."
