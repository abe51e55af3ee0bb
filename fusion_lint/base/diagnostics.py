"""Diagnostics and fixes as data (DESIGN §5, §7): rules return them, reporters print them (a run's
whole result is ``check.report.Report``)."""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import IO, Any, Literal

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
    """A span read back from a pickle (``SharedSpans.find_class`` may put its own in its place)."""
    return Span(*fields)


class SharedSpans(pickle.Unpickler):
    """Unpickles with equal source ranges sharing one ``Span`` object, the one already in ``table``
    (seven fields -> the span): the language server keeps a whole project's facts in memory, and a
    file's facts hold hundreds of spans, most equal to one already loaded (the same position in a
    sibling module, one range named by a raise, its call and its argument) — a third of a
    project's objects. Spans are never changed in place, so sharing is unseen. ``table`` belongs
    to whoever loads (``runner.FactsLease``), never to a module."""

    def __init__(self, file: IO[bytes], table: dict[tuple[int, ...], Span] | None) -> None:
        super().__init__(file)
        self.table = table

    def find_class(self, module: str, name: str) -> Any:
        if self.table is not None and module == __name__ and name == "_unpickled_span":
            return self._shared
        return super().find_class(module, name)

    def _shared(self, *fields: int) -> Span:
        assert self.table is not None
        span = self.table.get(fields)
        if span is None:
            span = self.table[fields] = Span(*fields)
        return span


def unpickled(payload: bytes, spans: dict[tuple[int, ...], Span] | None = None) -> Any:
    """``pickle.loads``, spans shared through ``spans`` when given (``SharedSpans``)."""
    if spans is None:
        return pickle.loads(payload)
    return SharedSpans(io.BytesIO(payload), spans).load()


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
