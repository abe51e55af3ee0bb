"""FL900 unused-suppression: a suppression comment that suppresses nothing."""

from __future__ import annotations

from fusion_lint.rules import Rule, register


@register
class UnusedSuppression(Rule):
    code, name, severity = "FL900", "unused-suppression", "warning"
    summary = (
        "A `# noqa` or `# fusion-lint: ignore[...]` comment that suppresses nothing (only with "
        "--report-unused-suppressions), or a `# fusion-lint:` comment that is no directive."
    )
    why = "A stale suppression silently hides the next real finding on that line; removing it keeps the checks honest."
    options = (
        "Reported only with `--report-unused-suppressions`, except a `# fusion-lint:` comment that is no "
        "directive (`# fusion-lint: ignored`, a whole-file `# fusion-lint: noqa` after code or without the "
        "colon before its codes): it suppresses nothing while its author believes it does, so it is reported "
        "whenever FL900 is enabled."
    )
    limits = (
        "Points at the directive in the comment. Judges only fusion-lint's own codes and names: another "
        "linter's codes in a shared `# noqa: F401, FL300`, and a bare `# noqa`, are left alone."
    )
