"""Suppression comments (DESIGN §5, §12.4), applied after the rules ran.

* On a line: ``# noqa: FL300``, ``# fusion-lint: ignore[name-or-code]``, a bare ``# noqa`` or
  ``# fusion-lint: ignore`` — on the diagnostic's line or on the first line of its statement; after
  the closing quotes of a multi-line string, for every line of the string (ruff's convention).
* For the whole file (ruff's ``# ruff: noqa``): ``# fusion-lint: noqa`` on a line of its own,
  anywhere in the file, silences every finding in it; ``# fusion-lint: noqa: FL300, FL302`` those
  codes (or names).

With ``--report-unused-suppressions`` (FL900), a suppression that silenced nothing is reported —
judging only what is fusion-lint's: its own codes (``FL`` and three digits) and rule names, and
only rules that ran on that file. Other linters' codes in a shared ``# noqa: F401, FL300`` and a
bare ``# noqa`` (which every linter reads) are left alone: removing them would break ruff or flake8.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fusion_lint.base.diagnostics import Diagnostic, Span
from fusion_lint.base.lines import split_lines
from fusion_lint.facts.model import FileFacts
from fusion_lint.rules import FixBuilder, Rule


@dataclass
class Reported:
    """A diagnostic before suppression, with the fix its rule described (built only if it is kept)."""

    diagnostic: Diagnostic
    fix: FixBuilder | None = None


Used = dict[tuple[str, int], set[str]]  # (path, line of the comment) -> the codes and names it silenced

#: A code in fusion-lint's namespace (an unknown one is ours too: it can never suppress anything).
OWN_CODE = re.compile(r"FL\d{3}")
#: A bare ``# fusion-lint: ignore`` (ours), as opposed to a bare ``# noqa`` (every linter's).
_OWN_BLANKET = re.compile(r"#\s*fusion-lint:\s*ignore(?!\s*\[)", re.IGNORECASE)


def suppress(reported: list[Reported], files: dict[str, FileFacts]) -> tuple[list[Reported], Used]:
    """What no suppression comment silences, and which comments silenced what (a line's own
    comment is looked at before the file's)."""
    kept: list[Reported] = []
    used: Used = {}
    for item in reported:
        diagnostic = item.diagnostic
        facts = files.get(diagnostic.path)
        line = _suppressing_line(diagnostic, facts)
        if line is None:
            line = _file_suppression_line(diagnostic, facts)
        if line is None:
            kept.append(item)
        else:
            used.setdefault((diagnostic.path, line), set()).update({diagnostic.code, diagnostic.name})
    return kept, used


def _names(tokens: frozenset[str], diagnostic: Diagnostic) -> bool:
    return "*" in tokens or diagnostic.code in tokens or diagnostic.name in tokens


def _suppressing_line(diagnostic: Diagnostic, facts: FileFacts | None) -> int | None:
    """The line of the comment that suppresses ``diagnostic``: on its line, on its statement's first,
    or after the closing quotes of the multi-line string its line is in."""
    if facts is None or not facts.suppressions:
        return None
    span = diagnostic.span
    lines = [span.line, span.stmt_line]
    if facts.string_lines:
        lines += [facts.string_lines[n] for n in lines if n in facts.string_lines]
    for line in dict.fromkeys(lines):
        tokens = facts.suppressions.get(line)
        if tokens and _names(tokens, diagnostic):
            return line
    return None


def _file_suppression_line(diagnostic: Diagnostic, facts: FileFacts | None) -> int | None:
    """The line of the first ``# fusion-lint: noqa`` of the file that names ``diagnostic``."""
    if facts is None:
        return None
    return next((line for line, tokens in sorted(facts.file_suppressions.items()) if _names(tokens, diagnostic)), None)


def unused_suppressions(
    used: Used,
    files: dict[str, FileFacts],
    report_set: Iterable[str],
    rule: type[Rule],
    rules: Iterable[type[Rule]],
    enabled: Callable[[str], frozenset[str]],
    text: Callable[[str], str | None],
) -> list[Reported]:
    """FL900 for each suppression of ours that silenced nothing in this run: ``enabled`` gives the
    rules that ran on a file (a code of a rule that did not run is not judged), ``text`` the file's
    text (to tell a bare ``# fusion-lint: ignore`` from a bare ``# noqa``)."""
    code_of = {r.name: r.code for r in rules}
    code_of.update({r.code: r.code for r in rules})
    unused = []
    for path in sorted(report_set):
        facts = files.get(path)
        if facts is None or not (facts.suppressions or facts.file_suppressions):
            continue
        ran = enabled(path)
        line_text = _Lines(path, text)
        for line, tokens in sorted(facts.suppressions.items()):
            hits = used.get((path, line), set())
            names = _stale(tokens, hits, ran, code_of)
            if "*" in tokens and not hits and _OWN_BLANKET.search(line_text(line)):
                names = ["'# fusion-lint: ignore'", *names]
            if names:
                col, end = _directive_columns(line_text(line), _LINE_DIRECTIVE)
                message = f"unused suppression: {', '.join(names)} suppresses nothing here; remove it"
                unused.append(_fl900(rule, path, line, col, end, message))
        for line, tokens in sorted(facts.file_suppressions.items()):
            hits = used.get((path, line), set())
            names = ["'# fusion-lint: noqa'"] if "*" in tokens and not hits else _stale(tokens, hits, ran, code_of)
            if names:
                col, end = _directive_columns(line_text(line), _FILE_DIRECTIVE)
                message = f"unused suppression: {', '.join(names)} suppresses nothing in this file; remove it"
                unused.append(_fl900(rule, path, line, col, end, message))
    return unused


def unknown_directives(files: dict[str, FileFacts], report_set: Iterable[str], rule: type[Rule]) -> list[Reported]:
    """FL900 for each ``# fusion-lint:`` comment that is no directive (a typo of one silences
    nothing, and its author believes it does): reported whether or not unused suppressions are."""
    found = []
    for path in sorted(report_set):
        facts = files.get(path)
        if facts is None or not facts.unknown_directives:
            continue
        for line, (col, directive) in sorted(facts.unknown_directives.items()):
            if re.match(r"#\s*fusion-lint:\s*noqa\b", directive, re.IGNORECASE):
                hint = "a whole-file '# fusion-lint: noqa' stands on a line of its own, codes after a colon"
            else:
                hint = "fusion-lint reads '# fusion-lint: ignore[...]' on a line, '# fusion-lint: noqa[: codes]' alone on one"
            message = f"unknown directive '{directive}' suppresses nothing ({hint})"
            found.append(_fl900(rule, path, line, col, col + len(directive), message))
    return found


#: Where FL900 points: at the directive in the comment (after ``# why``, at its ``noqa: FL300`` part).
_LINE_DIRECTIVE = re.compile(r"#\s*(?:noqa\b|fusion-lint:\s*ignore)([^#]*)", re.IGNORECASE)
_FILE_DIRECTIVE = re.compile(r"#.*", re.IGNORECASE)


_DIRECTIVE_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


def directive_token_at(line: str, column: int) -> str | None:
    """The code or rule name under ``column`` (0-based) inside a suppression comment on ``line``
    (``# noqa: FL300``, ``# fusion-lint: ignore[fail-not-raised]``): what an editor's hover over a
    noqa code explains, as ``ruff server`` does. The directive's own words are not tokens."""
    for directive in _LINE_DIRECTIVE.finditer(line):
        for token in _DIRECTIVE_TOKEN.finditer(line, directive.start(1), directive.end(1)):
            if token.start() <= column <= token.end():
                return token.group(0)
    return None


class _Lines:
    """A file's lines, read only when one is asked for."""

    def __init__(self, path: str, text: Callable[[str], str | None]):
        self.path, self.text = path, text
        self.lines: list[str] | None = None

    def __call__(self, number: int) -> str:
        if self.lines is None:
            self.lines = split_lines(self.text(self.path) or "")
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""


def _directive_columns(line: str, pattern: re.Pattern[str]) -> tuple[int, int]:
    """The columns of the last directive on ``line`` (a comment comes after any string on its line)."""
    matches = list(pattern.finditer(line))
    if not matches:
        return 0, 0
    last = matches[-1]
    return last.start(), last.start() + len(last.group(0).rstrip())


def _fl900(rule: type[Rule], path: str, line: int, col: int, end: int, message: str) -> Reported:
    return Reported(
        Diagnostic(rule.code, rule.name, rule.severity, message, path, Span(line, col, line, end, 0, 0, line))
    )


def _stale(tokens: frozenset[str], hits: set[str], ran: frozenset[str], code_of: dict[str, str]) -> list[str]:
    """The tokens of ours that silenced nothing: codes and names of rules that ran on the file, and
    codes of ours that name no rule (they never can). Another linter's code is not ours to judge,
    nor one of a rule that did not run here (another selection may need it)."""
    found = []
    for token in sorted(tokens - hits - {"*"}):
        code = code_of.get(token)
        if code is None and not OWN_CODE.fullmatch(token):
            continue  # F401, E501, BLE001: another linter's
        if code is not None and code not in ran:
            continue
        found.append(token)
    return found
