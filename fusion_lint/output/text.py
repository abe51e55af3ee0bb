"""``text``: ``path:line:col: CODE [name] message`` grouped per file, then the summary (DESIGN §7).

With ``color`` (``--color``, or a terminal), the path is bold and the code red (an error) or yellow
(a warning), as ruff draws them; the characters are the same either way.
"""

from __future__ import annotations

import click

from fusion_lint.check.report import Report
from fusion_lint.output.common import display_path, source_excerpt, statistics_lines, summary_lines


def text(
    report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False, color: bool = False
) -> str:
    def style(value: str, **how: object) -> str:
        return click.style(value, **how) if color else value  # type: ignore[arg-type]

    out: list[str] = []
    current = None
    if not quiet or report.diagnostics:
        for diagnostic in report.diagnostics:
            if current is not None and diagnostic.path != current:
                out.append("")
            current = diagnostic.path
            span = diagnostic.span
            code = style(diagnostic.code, fg="red" if diagnostic.severity == "error" else "yellow", bold=True)
            # Exactly DESIGN §7's shape, so editors' and CI's problem matchers can parse every line.
            out.append(
                f"{style(display_path(diagnostic.path), bold=True)}:{span.line}:{span.col + 1}: {code} "
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
        out.extend(style(line, bold=True) for line in summary_lines(report))
    return "\n".join(out) + ("\n" if out else "")
