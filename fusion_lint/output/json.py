"""``json``: one object per diagnostic, rows and columns 1-based, fixes with their edits (DESIGN §7)."""

from __future__ import annotations

import json
from typing import Any

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.report import Report
from fusion_lint.output.common import display_path
from fusion_lint.rules import rule_by_code_or_name


def _row_column(text: str, offset: int) -> dict[str, Any]:
    """An offset as a 1-based row and column (code points), like a diagnostic's location."""
    row = text.count("\n", 0, offset) + 1
    return {"row": row, "column": offset - (text.rfind("\n", 0, offset) + 1) + 1}


def diagnostic_json(diagnostic: Diagnostic, text: str | None = None) -> dict[str, Any]:
    """``text``: the file's decoded text; when given, each edit also carries its
    ``location``/``end_location`` (1-based) besides its offsets."""
    span = diagnostic.span
    fix = None
    if diagnostic.fix is not None:
        edits = []
        for e in diagnostic.fix.edits:
            edit: dict[str, Any] = {"start": e.start, "end": e.end, "content": e.content}
            if text is not None and e.end <= len(text):
                edit["location"], edit["end_location"] = _row_column(text, e.start), _row_column(text, e.end)
            edits.append(edit)
        fix = {
            "message": diagnostic.fix.message,
            "applicability": diagnostic.fix.applicability,
            "edits": edits,
        }
    rule = rule_by_code_or_name(diagnostic.code)
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity,
        "message": diagnostic.message,
        "filename": display_path(diagnostic.path),
        "location": {"row": span.line, "column": span.col + 1},
        "end_location": {"row": span.end_line, "column": span.end_col + 1},
        "fix": fix,
        "url": rule.url() if rule else None,
    }


def json_report(report: Report, **_: object) -> str:
    texts = {d.path: report.texts.get(d.path) for d in report.diagnostics if d.fix is not None}
    return json.dumps([diagnostic_json(d, texts.get(d.path)) for d in report.diagnostics], indent=2) + "\n"
