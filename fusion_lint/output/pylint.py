"""``pylint``: pylint's parseable shape, ``path:line: [CODE] message``, one finding per line, for
the tools that read pylint's output (Jenkins' warnings parsers, editors' problem matchers). A
message never spans lines (a line break in it becomes a space); nothing else is printed. As with
pylint's own lines, a parser that reads the code up to the *last* ``] `` (Jenkins') cuts a message
that quotes one."""

from __future__ import annotations

from fusion_lint.check.report import Report
from fusion_lint.output.common import display_path


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())


def pylint(report: Report, **_: object) -> str:
    return "".join(
        f"{display_path(d.path)}:{max(d.span.line, 1)}: [{d.code}] {_one_line(d.message)}\n" for d in report.diagnostics
    )
