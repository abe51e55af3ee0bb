"""``rdjson``: the Reviewdog Diagnostic Format's ``DiagnosticResult``, for ``reviewdog -f=rdjson``.

One object: ``source`` (our name and URL), ``severity``, and ``diagnostics``, each with
``message``, ``location.path`` and ``location.range`` (``start``/``end``, the end exclusive),
``severity`` (``ERROR`` or ``WARNING``), ``code`` (``value`` and ``url``) and, where a fix exists,
``suggestions`` (a range and its replacement text). Lines start at 1; columns start at 1 and count
**UTF-8 bytes**, as the format defines them (``'a𐐀b'``: ``b`` is column 6), not code points.
"""

from __future__ import annotations

import json
from typing import Any

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.report import Report
from fusion_lint.output.common import INFORMATION_URI, display_path, file_lines
from fusion_lint.rules import rule_by_code_or_name

SEVERITY = {"error": "ERROR", "warning": "WARNING"}


def _position(lines: list[str], line: int, column: int) -> dict[str, Any]:
    """Line (1-based) and code-point column (0-based) as rdjson's line and UTF-8 byte column."""
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    return {"line": max(line, 1), "column": len(text[:column].encode("utf-8", "surrogatepass")) + 1}


def _offset_position(text: str, offset: int) -> dict[str, Any]:
    """A character offset into the decoded text as rdjson's line and byte column."""
    start_of_line = text.rfind("\n", 0, offset) + 1
    return {
        "line": text.count("\n", 0, offset) + 1,
        "column": len(text[start_of_line:offset].encode("utf-8", "surrogatepass")) + 1,
    }


def _suggestions(report: Report, diagnostic: Diagnostic) -> list[dict[str, Any]]:
    text = report.texts.get(diagnostic.path)
    if diagnostic.fix is None or text is None:
        return []
    return [
        {
            "range": {"start": _offset_position(text, edit.start), "end": _offset_position(text, edit.end)},
            "text": edit.content,
        }
        for edit in diagnostic.fix.edits
        if edit.end <= len(text)
    ]


def rdjson_diagnostic(report: Report, diagnostic: Diagnostic, lines: list[str]) -> dict[str, Any]:
    span = diagnostic.span
    rule = rule_by_code_or_name(diagnostic.code)
    code: dict[str, Any] = {"value": diagnostic.code}
    if rule is not None:
        code["url"] = rule.url()
    found: dict[str, Any] = {
        "message": f"[{diagnostic.name}] {diagnostic.message}",
        "location": {
            "path": display_path(diagnostic.path),
            "range": {
                "start": _position(lines, span.line, span.col),
                "end": _position(lines, max(span.end_line, span.line), span.end_col),
            },
        },
        "severity": SEVERITY[diagnostic.severity],
        "code": code,
    }
    suggestions = _suggestions(report, diagnostic)
    if suggestions:
        found["suggestions"] = suggestions
    return found


def rdjson(report: Report, **_: object) -> str:
    cache: dict[str, list[str]] = {}
    document = {
        "source": {"name": "fusion-lint", "url": INFORMATION_URI},
        "severity": "ERROR" if report.errors else ("WARNING" if report.diagnostics else "INFO"),
        "diagnostics": [rdjson_diagnostic(report, d, file_lines(report, d.path, cache)) for d in report.diagnostics],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
