"""Spans of the nodes that may be reported, from CPython's tree (DESIGN §4 cost model).

CPython gives every node its first and last position (UTF-8 byte columns); a span is computed when
the extractor hands it out, in the units of ``diagnostics.Span`` (code points, offsets into the
text, lines as CPython counts them). Where the facts were first placed differently (libcst's ranges,
which the golden outputs freeze), the difference is made up here: a parenthesized tuple or a
generator expression without its parentheses, a positional argument with its own, a ``**spread``
of a dict with its stars, a def by its name.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from typing import Protocol

from fusion_lint.base.diagnostics import Span
from fusion_lint.base.lines import line_starts

#: Where the extractor is: the first line of the innermost statement (a suppression may sit there).
Cursor = int

_WORD = re.compile(r"\w+")
_END_OF_LINE = re.compile(r"[\r\n]")
_DEF = re.compile(r"(?:async[ \t\\\n]+)?def[ \t\\\n]+(\w+)")


class SpanRegistry:
    """Computes ``Span``s of CPython nodes in one file's text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        # Lines as CPython counts them (a lone ``\r`` ends one): a span's line is the tree's line.
        self.starts = line_starts(text)
        self._encoded_lines: dict[int, bytes] = {}  # a non-ASCII line's UTF-8 (b"" for an ASCII one)

    # ----- offsets ------------------------------------------------------------------------------

    def offset(self, line: int, byte_col: int) -> int:
        """An ``ast`` position (1-based line, UTF-8 byte column) as an offset into the text."""
        starts = self.starts
        if line > len(starts):
            return len(self.text)
        start = starts[line - 1]
        if self.ascii:
            return start + byte_col
        encoded = self._encoded_lines.get(line)
        if encoded is None:
            end = starts[line] if line < len(starts) else len(self.text)
            text = self.text[start:end]
            encoded = self._encoded_lines[line] = b"" if text.isascii() else text.encode("utf-8")
        if not encoded:  # an ASCII line: bytes are code points
            return start + byte_col
        return start + len(encoded[:byte_col].decode("utf-8", errors="ignore"))

    def range_of(self, node: ast.AST) -> tuple[int, int]:
        """``node``'s range as the facts place it (see the module's docstring)."""
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]  # expressions and statements are placed nodes
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]  # as above: a parsed node has its end position
        kind = type(node)
        if (kind is ast.Tuple or kind is ast.GeneratorExp) and self.text.startswith("(", start):
            if kind is ast.GeneratorExp or self._wrapped(node, start, end):  # type: ignore[arg-type]  # kind is ast.GeneratorExp or self._wrapped(node, start, end); mypy does not narrow through kind = type(...)
                start, end = self._inside(node, start, end)
        return start, end

    def _wrapped(self, node: ast.Tuple, start: int, end: int) -> bool:
        """Whether the ``(`` a tuple starts with closes where the tuple ends (``(a, b)``, not ``(a), b``)."""
        if not self.text.startswith(")", end - 1):
            return False
        depth, position = 0, start
        for element in node.elts:
            low, high = self.range_of(element)
            depth += self._balance(position, low)
            if depth <= 0:
                return False
            position = high
        depth += self._balance(position, end - 1)
        return depth == 1

    def _balance(self, start: int, end: int) -> int:
        """Opened less closed parentheses in a stretch between elements (comments aside)."""
        text = self.text[start:end]
        if "#" in text:
            text = re.sub(r"#[^\r\n]*", "", text)
        return text.count("(") - text.count(")")

    def _inside(self, node: ast.AST, start: int, end: int) -> tuple[int, int]:
        """Inside one pair of parentheses: from the first token after ``(`` to the last before
        ``)`` (a trailing comma included; whitespace and comments belong to the parentheses)."""
        text = self.text
        inner = start + 1
        while True:
            while inner < end and text[inner] in " \t\r\n\f\\":
                inner += 1
            if inner < end and text[inner] == "#":
                newline = _END_OF_LINE.search(text, inner, end)
                inner = end if newline is None else newline.start()
                continue
            break
        if type(node) is ast.GeneratorExp:
            generator = node.generators[-1]
            elements = [generator.ifs[-1] if generator.ifs else generator.iter]
        else:
            elements = node.elts  # type: ignore[attr-defined]  # a Tuple when not a GeneratorExp (kind is ast.Tuple or ast.GeneratorExp above)
        if not elements:
            return inner, inner
        last = end - 1
        last_end = self.range_of(elements[-1])[1]
        found = last_end
        comment = False
        for index in range(last_end, last):
            char = text[index]
            if comment:
                comment = char not in "\r\n"
            elif char == "#":
                comment = True
            elif char not in " \t\r\n\f\\":
                found = index + 1
        return inner, found

    # ----- spans --------------------------------------------------------------------------------

    def span_of(self, start: int, end: int, stmt_line: int) -> Span:
        starts = self.starts
        line = bisect_right(starts, start)
        end_line = bisect_right(starts, end)
        return Span(line, start - starts[line - 1], end_line, end - starts[end_line - 1], start, end, stmt_line or line)

    def at(self, node: ast.AST, at: Cursor) -> Span:
        """The span of an expression or a statement."""
        start, end = self.range_of(node)
        return self.span_of(start, end, at)

    def arg(self, arg: ArgLike, at: Cursor) -> Span:
        """The span of a call's argument: ``*x``, ``**x``, ``k=v`` as CPython places them; a
        positional one with the parentheses around it."""
        start, end = self.arg_range(arg)
        return self.span_of(start, end, at)

    def arg_range(self, arg: ArgLike) -> tuple[int, int]:
        if arg.star or arg.keyword is not None:
            return self.offset(arg.node.lineno, arg.node.col_offset), self.offset(  # type: ignore[attr-defined]  # a keyword or a Starred node: both are placed
                arg.node.end_lineno,  # type: ignore[attr-defined]  # as above
                arg.node.end_col_offset,  # type: ignore[attr-defined]  # as above
            )
        start, end = self.range_of(arg.value)
        text = self.text
        if arg.index == 0:
            low = self._open_paren(arg.call)
        else:
            low = self.arg_range(_previous(arg))[1]
        high = len(text)
        while True:
            before = start - 1
            while before > low and text[before] in " \t\r\n\f\\":
                before -= 1
            if before <= low or text[before] != "(":
                break
            after = end
            while after < high and text[after] in " \t\r\n\f\\":
                after += 1
            if after >= high or text[after] != ")":
                break
            start, end = before, after + 1
        return start, end

    def _open_paren(self, call: ast.Call) -> int:
        """Where the ``(`` of ``call``'s arguments is."""
        position = self.range_of(call.func)[1]
        text = self.text
        while position < len(text) and text[position] != "(":
            position += 1
        return position

    def keyword(self, arg: ArgLike, at: Cursor) -> Span:
        """The span of a keyword argument's keyword."""
        start = self.offset(arg.node.lineno, arg.node.col_offset)  # type: ignore[attr-defined]  # a keyword node: placed
        match = _WORD.match(self.text, start)
        return self.span_of(start, match.end() if match else start, at)

    def spread(self, value: ast.expr, at: Cursor) -> Span:
        """The span of ``**value`` in a dict display (CPython places only the value)."""
        start, end = self.range_of(value)
        text = self.text
        opened = 0
        before = start
        while True:
            before -= 1
            while before > 0 and text[before] in " \t\r\n\f\\":
                before -= 1
            if text[before] == "(":
                opened += 1
                continue
            break
        start = before - 1  # the ``**``
        for _ in range(opened):
            while end < len(text) and text[end] in " \t\r\n\f\\":
                end += 1
            end += 1
        return self.span_of(start, end, at)

    def def_name(self, node: ast.AST, at: Cursor) -> Span:
        """The span of a ``def``'s name (CPython places the whole statement)."""
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]  # a def statement: placed
        match = _DEF.match(self.text, start)
        if match is None:  # pragma: no cover (CPython's column is the keyword's)
            return self.span_of(start, start, at)
        return self.span_of(match.start(1), match.end(1), at)

    def line_of(self, node: ast.AST) -> int:
        """The line of ``node``'s first position, as a span counts lines."""
        return node.lineno  # type: ignore[attr-defined,no-any-return]  # expressions and statements are placed nodes

    def statement_lines(self, body: list[ast.stmt]) -> list[int]:
        """The first line of each statement's line of small statements: ``a; b`` is one, which
        starts where ``a`` does."""
        lines = []
        previous: ast.stmt | None = None
        head = 0
        for stmt in body:
            if (
                previous is not None
                and stmt.lineno == previous.end_lineno
                and ";"
                in self.text[
                    self.offset(previous.end_lineno, previous.end_col_offset) : self.offset(  # type: ignore[arg-type]  # a parsed statement has its end position
                        stmt.lineno, stmt.col_offset
                    )
                ]
            ):
                lines.append(head)
            else:
                head = self.line_of(stmt)
                lines.append(head)
            previous = stmt
        return lines

    def is_suite(self, body: list[ast.stmt]) -> bool:
        """Whether a block is written on its header's line (``if x: pass``), not indented below it."""
        if not body:
            return False
        first = body[0]
        start = self.starts[first.lineno - 1]
        return bool(self.text[start : self.offset(first.lineno, first.col_offset)].strip())


class ArgLike(Protocol):  # the shape of ``facts.syntax.Arg`` (positions must not import the facts)
    keyword: str | None
    star: str
    value: ast.expr
    node: ast.AST
    call: ast.Call
    index: int


def _previous(arg: ArgLike) -> ArgLike:
    return arg.call._fl_args[arg.index - 1]  # type: ignore[attr-defined,no-any-return]  # args_of() keeps the call's Args on it before any is placed
