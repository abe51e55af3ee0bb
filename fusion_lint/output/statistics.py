"""``--statistics``: the findings counted per rule, instead of the findings (ruff's habit).

As text, ``count  code  [*] name`` per rule, most frequent first (``[*]``: ``--fix`` fixes some),
then the summary (unless ``--quiet``); with ``--output-format json`` (or ``json-lines``), a JSON
list of ``{"code", "name", "count", "fixable", "fixable_count"}``. The document formats (SARIF,
JUnit) keep their findings and carry the counts inside the document instead.
"""

from __future__ import annotations

import json
from typing import Any

from fusion_lint.check.report import Report
from fusion_lint.output.common import statistics, statistics_lines, summary_lines


def statistics_json(report: Report) -> list[dict[str, Any]]:
    safe: dict[str, int] = {}
    for diagnostic in report.diagnostics:
        if diagnostic.fix is not None and diagnostic.fix.applicability == "safe":
            safe[diagnostic.code] = safe.get(diagnostic.code, 0) + 1
    return [
        {"code": code, "name": name, "count": count, "fixable": fixable, "fixable_count": safe.get(code, 0)}
        for count, code, name, fixable in statistics(report)
    ]


def statistics_report(report: Report, *, as_json: bool = False, quiet: bool = False) -> str:
    if as_json:
        return json.dumps(statistics_json(report), indent=2) + "\n"
    out = statistics_lines(report)
    if not quiet:
        out.extend(["", *summary_lines(report)] if out else summary_lines(report))
    return "\n".join(out) + ("\n" if out else "")
