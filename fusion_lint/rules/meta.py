"""Per-file and internal problems. They are reported by the engine, not by checking definitions,
but they are rules like the others: a code, a name, documentation, selectable and suppressible."""
from __future__ import annotations

from . import Example, Rule, register


@register
class ParseError(Rule):
    code, name, severity = "FL000", "parse-error", "error"
    summary = "The file cannot be parsed (CPython's message, or libcst's when only libcst rejects it)."
    why = (
        "A file that does not parse cannot be checked; it is reported once and every other file is still "
        "linted. CPython's parser gates libcst's, so hostile inputs are rejected in milliseconds."
    )
    INVALID = (Example("def broken(:\n    pass\n", lines=(1,), message="syntax error"),)


@register
class FileUnreadable(Rule):
    code, name, severity = "FL001", "file-unreadable", "error"
    summary = "The file cannot be read or decoded (permissions, invalid UTF-8, a wrong coding cookie)."
    why = "What cannot be read cannot be checked; it is said once, clearly, and the run goes on."


@register
class UnusedSuppression(Rule):
    code, name, severity = "FL900", "unused-suppression", "warning"
    summary = "A `# noqa` or `# fusion-lint: ignore[...]` comment that suppresses nothing (only with --report-unused-suppressions)."
    why = "A stale suppression silently hides the next real finding on that line; removing it keeps the checks honest."


@register
class InternalError(Rule):
    code, name, severity = "FL999", "internal-error", "error"
    summary = "A rule raised an exception on this file: a bug in fusion-lint, reported with the rule and file."
    why = "One failing rule must not hide the others' findings or stop the run; this makes the failure visible."
