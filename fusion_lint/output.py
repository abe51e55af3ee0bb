"""Reporters (DESIGN §7). Each turns a ``Report`` into text; none of them decides anything."""
from __future__ import annotations

import json
import os
from typing import Callable, Optional

from .diagnostics import Diagnostic
from .engine import Report


def display_path(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _summary(report: Report) -> str:
    files = len({d.path for d in report.diagnostics})
    checked = f"{_plural(report.files_checked, 'file')} checked"
    if not report.diagnostics:
        return f"All checks passed ({checked})."
    return (
        f"Found {_plural(report.errors, 'error')}, {_plural(report.warnings, 'warning')} in "
        f"{_plural(files, 'file')} ({checked})."
    )


def source_excerpt(report: Report, diagnostic: Diagnostic) -> list[str]:
    text = report.texts.get(diagnostic.path)
    if text is None:
        try:
            with open(diagnostic.path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return []
    lines = text.splitlines()
    if not 1 <= diagnostic.span.line <= len(lines):
        return []
    line = lines[diagnostic.span.line - 1]
    number = str(diagnostic.span.line)
    end = diagnostic.span.end_col if diagnostic.span.end_line == diagnostic.span.line else len(line)
    width = max(1, end - diagnostic.span.col)
    return [
        f"  {number} | {line}",
        f"  {' ' * len(number)} | {' ' * diagnostic.span.col}{'^' * width}",
    ]


def text(report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    out: list[str] = []
    current = None
    if not quiet or report.diagnostics:
        for diagnostic in report.diagnostics:
            if current is not None and diagnostic.path != current:
                out.append("")
            current = diagnostic.path
            span = diagnostic.span
            # Exactly DESIGN §7's shape, so editors' and CI's problem matchers can parse every line.
            out.append(
                f"{display_path(diagnostic.path)}:{span.line}:{span.col + 1}: {diagnostic.code} "
                f"[{diagnostic.name}] {diagnostic.message}"
            )
            if show_source:
                out.extend(source_excerpt(report, diagnostic))
    counted = statistics_lines(report) if statistics else []
    if counted:  # a blank line only between blocks: a clean --quiet run prints nothing at all
        out.extend(["", *counted] if out else counted)
    if not quiet:
        if out:
            out.append("")
        out.extend(summary_lines(report))
    return "\n".join(out) + ("\n" if out else "")


def summary_lines(report: Report) -> list[str]:
    """The closing lines: the counts, then how many findings ``--fix`` can fix."""
    lines = [_summary(report)]
    fixable = sum(1 for d in report.diagnostics if d.fix is not None and d.fix.applicability == "safe")
    unsafe = sum(1 for d in report.diagnostics if d.fix is not None and d.fix.applicability == "unsafe")
    if fixable:
        extra = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
        lines.append(f"{fixable} fixable with --fix{extra}.")
    elif unsafe:
        lines.append(f"{unsafe} fixable with --fix --unsafe-fixes.")
    return lines


def statistics_lines(report: Report) -> list[str]:
    counts: dict[tuple[str, str], int] = {}
    for diagnostic in report.diagnostics:
        key = (diagnostic.code, diagnostic.name)
        counts[key] = counts.get(key, 0) + 1
    return [f"{count:>5}  {code}  {name}" for (code, name), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _row_column(text: str, offset: int) -> dict:
    """An offset as a 1-based row and column (code points), like a diagnostic's location."""
    row = text.count("\n", 0, offset) + 1
    return {"row": row, "column": offset - (text.rfind("\n", 0, offset) + 1) + 1}


def diagnostic_json(diagnostic: Diagnostic, text: Optional[str] = None) -> dict:
    """``text``: the file's decoded text; when given, each edit also carries its
    ``location``/``end_location`` (1-based) besides its offsets."""
    span = diagnostic.span
    fix = None
    if diagnostic.fix is not None:
        edits = []
        for e in diagnostic.fix.edits:
            edit: dict = {"start": e.start, "end": e.end, "content": e.content}
            if text is not None and e.end <= len(text):
                edit["location"], edit["end_location"] = _row_column(text, e.start), _row_column(text, e.end)
            edits.append(edit)
        fix = {
            "message": diagnostic.fix.message,
            "applicability": diagnostic.fix.applicability,
            "edits": edits,
        }
    from .rules import rule_by_code_or_name

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


FORMATTERS: dict[str, Callable[..., str]] = {"text": text, "json": json_report}
