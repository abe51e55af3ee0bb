"""Diagnostics and fixes as data (DESIGN §5, §7): rules return them, reporters print them (a run's
whole result is ``check.report.Report``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import fusion_lint.base.memory as memory

Severity = Literal["error", "warning"]
Applicability = Literal["safe", "unsafe"]


@dataclass(slots=True)
class Span:
    """A source range. Lines are 1-based, columns 0-based code points; ``start``/``end`` are
    character offsets into the file's text (what fixes edit). ``stmt_line`` is the first line of
    the enclosing statement (suppressions may sit there)."""

    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0
    start: int = 0
    end: int = 0
    stmt_line: int = 0

    def __reduce__(self) -> tuple[Any, ...]:
        # Seven ints, positionally: a file's facts hold hundreds of spans, and the cache stores them.
        return _unpickled_span, (self.line, self.col, self.end_line, self.end_col, self.start, self.end, self.stmt_line)


def _unpickled_span(*fields: int) -> Span:
    """A span read back from a pickle: the one already loaded with these fields while spans are
    shared (``memory.spans_shared``, the language server's kept facts), else a new one."""
    table = memory.shared_spans.get()
    if table is None:
        return Span(*fields)
    span: Span | None = table.get(fields)
    if span is None:
        span = table[fields] = Span(*fields)
    return span


def display_path(path: str) -> str:
    """A path as the user sees it: relative to the working directory when it is inside it."""
    try:
        here = os.getcwd()
    except OSError:  # the working directory was removed
        return path
    return _relative_to(here, path)


@lru_cache(maxsize=4096)  # per file, not per diagnostic: a report names the same files again and again
def _relative_to(here: str, path: str) -> str:
    if path.startswith(here) and path[len(here) : len(here) + 1] == os.sep and os.path.normpath(path) == path:
        return path[len(here) + 1 :]  # the common case, without relpath's normalising (5,000 diagnostics: 0.4 s)
    try:
        relative = os.path.relpath(path, here)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


@dataclass(slots=True)
class Edit:
    """Replace ``text[start:end]`` with ``content`` (offsets into the decoded file text).

    This is what a report shows of a fix. ``--fix`` applies it as a libcst codemod
    (``fusion_lint.fix.codemod``): the syntax node the range falls in is rewritten, or nothing is.
    """

    start: int
    end: int
    content: str
    #: ``(module, name)`` pairs when the edit adds ``from module import name, ...``: the codemod
    #: places them in the leading import block (merged into a ``from module import ...`` already
    #: there) rather than splicing ``content`` at ``start``.
    adds_imports: tuple[tuple[str, str], ...] = ()


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Splice non-conflicting edits into ``text`` (identical ones once), from the end of the text
    backwards so that each offset still means what it meant in the original: what a report's fix
    reads as text, and what the codemod's result must equal."""
    unique = sorted({(e.start, e.end, e.content) for e in edits}, reverse=True)
    for start, end, content in unique:
        text = text[:start] + content + text[end:]
    return text


@dataclass(slots=True)
class Fix:
    message: str
    edits: list[Edit]
    applicability: Applicability = "safe"
    #: Codes this fix leaves on purpose for the author to finish (FL208's empty ``recovery=""`` is
    #: FL111): the re-lint after a fix does not count them as made worse.
    leaves: tuple[str, ...] = ()


@dataclass(slots=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    message: str
    path: str
    span: Span
    fix: Fix | None = None

    def sort_key(self) -> tuple[Any, ...]:
        return (self.path, self.span.line, self.span.col, self.code, self.message)
