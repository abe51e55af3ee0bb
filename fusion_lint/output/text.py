"""``concise`` (also called ``text``): ``path:line:col: CODE [name] message`` grouped per file, then
the summary (DESIGN §7); ``full``: the same with each finding's source line, a caret under the span
and, where ``--fix`` can fix it, what the fix does (ruff's two text formats).

With ``color`` (``--color``, or a terminal), the path is bold and the code red (an error) or yellow
(a warning), as ruff draws them; the characters are the same either way.
"""

from __future__ import annotations

import click

from fusion_lint.check.report import Report
from fusion_lint.output.common import display_path, source_excerpt, statistics_lines, summary_lines


def text(
    report: Report,
    *,
    show_source: bool = False,
    quiet: bool = False,
    statistics: bool = False,
    color: bool = False,
    show_fixes: bool = False,
) -> str:
    """``show_fixes``: under each finding with a fix, what the fix does and whether it is safe."""

    def style(value: str, **how: object) -> str:
        return click.style(value, **how) if color else value  # type: ignore[arg-type]  # the caller passes click.style's own keywords

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
            if show_fixes and diagnostic.fix is not None:
                unsafe = " (unsafe: --unsafe-fixes)" if diagnostic.fix.applicability == "unsafe" else ""
                out.append(f"  {style('fix', bold=True)}: {diagnostic.fix.message}{unsafe}")
    counted = statistics_lines(report) if statistics else []
    if counted:  # a blank line only between blocks: a clean --quiet run prints nothing at all
        out.extend(["", *counted] if out else counted)
    if not quiet:
        if out:
            out.append("")
        out.extend(style(line, bold=True) for line in summary_lines(report))
    return "\n".join(out) + ("\n" if out else "")


def full(report: Report, **flags: object) -> str:
    """``concise`` with the source line and caret of every finding and what its fix does."""
    flags.pop("show_source", None)
    flags.pop("show_fixes", None)  # always shown here
    return text(report, show_source=True, show_fixes=True, **flags)  # type: ignore[arg-type]  # the formatters' flags are text()'s own keywords
