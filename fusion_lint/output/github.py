"""``github``: workflow commands the Actions runner turns into annotations (DESIGN §7).

Only ``::`` lines become annotations, so the plain summary lines after them are safe there.
"""

from __future__ import annotations

from pathlib import Path

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.report import Report
from fusion_lint.output.common import display_path, statistics_lines, summary_lines


def escape_data(value: str) -> str:
    """The message part of a workflow command: ``%``, CR and LF are the command's own syntax."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A property value: also ``:`` (ends the properties) and ``,`` (separates them)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github_annotation(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    command = "error" if diagnostic.severity == "error" else "warning"
    properties = {
        "file": Path(display_path(diagnostic.path)).as_posix(),
        "line": str(span.line),
        "col": str(span.col + 1),
        "endLine": str(max(span.end_line, span.line)),
        "endColumn": str(span.end_col + 1),
        "title": f"{diagnostic.code} {diagnostic.name}",
    }
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{command} {rendered}::{escape_data(diagnostic.message)}"


def github(report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    # --show-source has no place here: the annotation is drawn on the line itself in the diff view.
    out = [github_annotation(diagnostic) for diagnostic in report.diagnostics]
    if statistics:
        out.extend(statistics_lines(report))
    if not quiet:
        out.extend(summary_lines(report))
    return "\n".join(out) + ("\n" if out else "")
