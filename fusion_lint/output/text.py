"""``text``: ``path:line:col: CODE [name] message`` grouped per file, then the summary (DESIGN §7)."""
from __future__ import annotations

from ..diagnostics import Report
from .common import display_path, source_excerpt, statistics_lines, summary_lines


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
