"""``azure``: Azure Pipelines logging commands, one ``##vso[task.logissue ...]`` per finding, which
the agent turns into errors and warnings on the run's summary.

The agent reads a command from one line: properties are ``key=value`` pairs separated by ``;`` up
to the first ``]``, the message is the rest of the line. So in properties and message alike ``;``,
``]``, CR and LF are written ``%3B``, ``%5D``, ``%0D``, ``%0A``, and ``%`` itself ``%AZP25`` (the
agent decodes each back; ``%AZP25`` is its escape for a literal percent sign).
"""

from __future__ import annotations

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.report import Report
from fusion_lint.output.common import display_path, statistics_lines, summary_lines

#: In this order: ``%`` first, so that the escapes written next are not escaped again.
_ESCAPES = (("%", "%AZP25"), (";", "%3B"), ("\r", "%0D"), ("\n", "%0A"), ("]", "%5D"))


def escape(value: str) -> str:
    for token, replacement in _ESCAPES:
        value = value.replace(token, replacement)
    return value


def azure_issue(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    properties = {
        "type": "error" if diagnostic.severity == "error" else "warning",
        "sourcepath": display_path(diagnostic.path),
        "linenumber": str(max(span.line, 1)),
        "columnnumber": str(span.col + 1),
        "code": diagnostic.code,
    }
    rendered = "".join(f"{key}={escape(value)};" for key, value in properties.items())
    return f"##vso[task.logissue {rendered}]{escape(f'[{diagnostic.name}] {diagnostic.message}')}"


def azure(report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    # Plain lines are log text to the agent: the summary after the commands is safe there.
    out = [azure_issue(diagnostic) for diagnostic in report.diagnostics]
    if statistics:
        out.extend(statistics_lines(report))
    if not quiet:
        out.extend(summary_lines(report))
    # A plain line naming a file called '##vso[...' must stay text: the agent's own neutraliser.
    out[len(report.diagnostics) :] = [line.replace("##vso[", "**vso[") for line in out[len(report.diagnostics) :]]
    return "\n".join(out) + ("\n" if out else "")
