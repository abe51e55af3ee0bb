"""Positions and edits as the language server's client counts them (DESIGN §9): lines split at LSP's
line breaks, columns in the negotiated position encoding (UTF-16 unless the client offers another)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from lsprotocol import types as lsp

from fusion_lint.base.diagnostics import Diagnostic, Edit
from fusion_lint.rules import all_rules

SOURCE = "fusion-lint"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # LSP's line breaks (str.splitlines knows more, e.g. \x0c)


def code_units(text: str, encoding: str) -> int:
    """Length of ``text`` in the client's position units."""
    if encoding == lsp.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)  # astral chars are 2 UTF-16 units


class SourceLines:
    """A text split at LSP line breaks, converting code-point positions and offsets to LSP positions."""

    def __init__(self, text: str, encoding: str = lsp.PositionEncodingKind.Utf16):
        self.text = text
        self.encoding = encoding
        self.starts = [0, *(match.end() for match in _LINE_BREAK.finditer(text))]

    def line(self, index: int) -> str:
        start = self.starts[index]
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, line: int, column: int) -> lsp.Position:
        """0-based line and code-point column -> LSP position (clamped into the text)."""
        line = min(max(line, 0), len(self.starts) - 1)
        content = self.line(line)
        column = min(max(column, 0), len(content))
        return lsp.Position(line=line, character=code_units(content[:column], self.encoding))

    def column(self, position: lsp.Position) -> tuple[str, int]:
        """An LSP position -> its line's text and the code-point column (clamped into the line)."""
        line = self.line(min(max(position.line, 0), len(self.starts) - 1))
        units = 0
        for column, char in enumerate(line):
            units += code_units(char, self.encoding)
            if units > position.character:
                return line, column
        return line, len(line)

    def position_at(self, offset: int) -> lsp.Position:
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self.starts, offset) - 1
        return self.position(line, offset - self.starts[line])


def diagnostic_range(diagnostic: Diagnostic, lines: SourceLines) -> lsp.Range:
    span = diagnostic.span
    end_line, end_col = span.end_line, span.end_col
    if (end_line, end_col) <= (span.line, span.col):
        # A point (a parse error, an unreadable file): underline one character so editors show it.
        end_line, end_col = span.line, span.col + 1
    return lsp.Range(start=lines.position(span.line - 1, span.col), end=lines.position(end_line - 1, end_col))


_RULES = {rule.code: rule for rule in all_rules()}


def to_lsp(diagnostic: Diagnostic, lines: SourceLines) -> lsp.Diagnostic:
    rule = _RULES.get(diagnostic.code)
    return lsp.Diagnostic(
        range=diagnostic_range(diagnostic, lines),
        message=f"{diagnostic.message} [{diagnostic.name}]",
        severity=lsp.DiagnosticSeverity.Error if diagnostic.severity == "error" else lsp.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        code_description=lsp.CodeDescription(href=rule.url()) if rule is not None else None,
        source=SOURCE,
    )


def to_text_edits(edits: Iterable[Edit], lines: SourceLines) -> list[lsp.TextEdit]:
    return [
        lsp.TextEdit(
            range=lsp.Range(start=lines.position_at(edit.start), end=lines.position_at(edit.end)), new_text=edit.content
        )
        for edit in sorted(edits, key=lambda edit: (edit.start, edit.end))
    ]


def replacement(old: SourceLines, new: str) -> Edit | None:
    """One edit turning ``old`` into ``new``: the whole lines from the first to the last that differ
    (whole lines, so a range never ends between a CR and its LF); None when nothing differs."""
    text = old.text
    if text == new:
        return None
    prefix = next((i for i, (a, b) in enumerate(zip(text, new)) if a != b), min(len(text), len(new)))
    start = old.starts[bisect.bisect_right(old.starts, prefix) - 1]
    common = min(len(text), len(new)) - start  # the suffix may not reach back over the start
    suffix = next((i for i in range(common) if text[-1 - i] != new[-1 - i]), common)
    end = len(text) - suffix
    end_index = bisect.bisect_left(old.starts, end)  # the first line start at or after the change
    end = old.starts[end_index] if end_index < len(old.starts) else len(text)
    return Edit(start, end, new[start : len(new) - (len(text) - end)])
