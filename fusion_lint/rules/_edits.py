"""Text edits that fixes are made of (DESIGN §5 "fix").

A fix is computed from the facts the extractor recorded (where a call's callee and arguments are,
the file's imports) and the file's text: no parse, no read. Edits touch only what they change, so
the comments and line breaks around them survive; what a builder cannot be sure of, it does not
fix (a missing fix is a nuisance, a wrong one costs the user code).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fusion_lint.base.diagnostics import Edit, Span
from fusion_lint.facts.model import Argument, CallLayout, FromImport

# ----- text helpers ---------------------------------------------------------------------------


def newline_of(text: str) -> str:
    """The file's line ending: the first one in the text."""
    index = text.find("\n")
    if index > 0 and text[index - 1] == "\r":
        return "\r\n"
    if index == -1 and "\r" in text:
        return "\r"
    return "\n"


def python_string(value: str) -> str:
    """A double-quoted Python literal for ``value``."""
    body = repr(value)[1:-1]
    if repr(value).startswith("'"):
        body = body.replace("\\'", "'").replace('"', '\\"')
    return f'"{body}"'


_SIMPLE_STRING = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)", re.DOTALL)


def string_like(old_literal: str, value: str) -> str:
    """``value`` as a literal written like ``old_literal`` (same prefix and quotes) when that is
    one simple string and ``value`` an identifier, else double-quoted."""
    match = _SIMPLE_STRING.fullmatch(old_literal)
    if match is not None and value.isidentifier() and match.group("quote") not in match.group("body"):
        return f"{match.group('prefix')}{match.group('quote')}{value}{match.group('quote')}"
    return python_string(value)


def minimal_edit(start: int, old: str, new: str) -> Edit:
    """Replace ``old`` (at ``start``) by ``new``, as an edit of only the part that differs."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return Edit(start + prefix, start + len(old) - suffix, new[prefix : len(new) - suffix])


def line_start(text: str, offset: int) -> int:
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def valid_span(text: str, span: Span | None) -> bool:
    return span is not None and 0 <= span.start < span.end <= len(text)


# ----- rewriting one call's text ----------------------------------------------------------------


class CallText:
    """A call's text and where its parts are, rewritten piece by piece; ``edit`` then replaces the
    call by the result as one minimal edit. Each rewrite keeps the call's own layout: a dropped
    argument takes its comma with it, a new first argument is written the way the first one is."""

    def __init__(self, text: str, layout: CallLayout):
        self.text = text
        self.layout = layout
        self.start = layout.span.start
        self.old = text[layout.span.start : layout.span.end]
        self._edits: list[tuple[int, int, str]] = []  # absolute offsets into ``text``

    @classmethod
    def of(cls, text: str | None, layout: CallLayout | None) -> CallText | None:
        """None when the spans do not fit the text (then there is no fix)."""
        if text is None or layout is None or not valid_span(text, layout.span):
            return None
        span, func = layout.span, layout.func_span
        if text[span.end - 1] != ")" or not span.start <= func.start < func.end < span.end:
            return None  # the spans are not one call of this text: better no fix than a wrong one
        if "(" not in text[func.end : span.end]:
            return None
        return cls(text, layout)

    @property
    def arguments(self) -> tuple[Argument, ...]:
        return self.layout.arguments

    def _open_paren(self) -> int:
        return self.text.index("(", self.layout.func_span.end, self.layout.span.end)

    def _close_paren(self) -> int:
        return self.layout.span.end - 1

    def replace(self, start: int, end: int, content: str) -> CallText:
        self._edits.append((start, end, content))
        return self

    def replace_func(self, content: str) -> CallText:
        return self.replace(self.layout.func_span.start, self.layout.func_span.end, content)

    def positional_index(self, keyword: str) -> int | None:
        """The first positional argument's index, or ``keyword=``'s; None if ``*args`` is in the way."""
        for index, argument in enumerate(self.arguments):
            if argument.star:
                return None
            if argument.keyword is None and index == 0:
                return index
            if argument.keyword == keyword:
                return index
        return None

    def drop_argument(self, index: int) -> CallText:
        """Without its ``index``-th argument: a trailing comma stays a trailing comma, a
        single-line call stays single-line, a comment after a dropped first argument stays."""
        arguments = self.arguments
        removed = arguments[index]
        opening = self._open_paren() + 1
        if len(arguments) == 1:
            before = self.text[opening : removed.span.start]
            return self.replace(opening, self._close_paren(), before if "#" in before else "")
        if index == len(arguments) - 1:  # the last one went: the one before it now ends the list
            if "#" in self.text[arguments[index - 1].span.end : removed.span.start]:
                return self.replace(removed.span.start, removed.span.end, "")  # the comment before it stays
            return self.replace(arguments[index - 1].span.end, removed.span.end, "")
        following = arguments[index + 1]
        comma = _comma_after(self.text, removed.span.end, following.span.start)
        if comma is not None and "#" in self.text[comma + 1 : following.span.start]:
            # A comment after its comma stays (with the line break before the next argument).
            if index == 0 and "#" not in self.text[opening : removed.span.start]:
                return self.replace(opening, comma + 1, "")
            return self.replace(removed.span.start, comma + 1, "")
        return self.replace(removed.span.start, following.span.start, "")

    def prepend_argument(self, value: str) -> CallText:
        """With ``value`` as a new first positional argument, laid out like the first one."""
        if not self.arguments:
            close = self._close_paren()
            return self.replace(close, close, value)
        first = self.arguments[0].span.start
        before = self.text[self._open_paren() + 1 : first]
        if "\n" in before or "\r" in before:  # one argument per line: so is the new one
            indentation = self.text[line_start(self.text, first) : first]
            separator = newline_of(self.text) + indentation
        else:
            separator = " "
        return self.replace(first, first, f"{value},{separator}")

    def replace_argument(self, index: int, value: str, keyword: str | None = None) -> CallText:
        """The ``index``-th argument's value replaced, and its keyword too when given (only for
        an argument passed by keyword)."""
        argument = self.arguments[index]
        if keyword is not None and argument.keyword is not None:
            self.replace(argument.span.start, argument.span.start + len(argument.keyword), keyword)
        return self.replace(argument.value_span.start, argument.value_span.end, value)

    def edit(self) -> Edit | None:
        new = self.old
        for start, end, content in sorted(self._edits, reverse=True):
            if not self.start <= start <= end <= self.start + len(self.old):
                return None
            new = new[: start - self.start] + content + new[end - self.start :]
        return minimal_edit(self.start, self.old, new)


def _comma_after(text: str, start: int, limit: int) -> int | None:
    """The offset of the comma that ends an argument at ``start``: only whitespace and comments
    may come before it."""
    index = start
    while index < limit:
        char = text[index]
        if char == ",":
            return index
        if char == "#":
            end = text.find("\n", index, limit)
            index = limit if end == -1 else end
            continue
        if not char.isspace() and char != "\\":
            return None
        index += 1
    return None


# ----- adding a name to an import ---------------------------------------------------------------


def import_order_key(style: str) -> Callable[[str], object]:
    """How names sort in a ``from M import ...`` written in ``style``: isort's (and ruff's) order by
    type, plain code-point order, or case-insensitive."""
    if style == "isort":  # isort's and ruff's default: CONSTANTS, Classes, then functions
        return lambda name: (0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2, name.lower())
    if style == "lower":
        return str.lower
    return lambda name: name


def order_of(names: list[str]) -> Callable[[str], object] | None:
    """The sort key of the first order ``names`` are already in (isort's, plain, case-insensitive),
    or None when they are in none: a new name then goes last."""
    for style in ("isort", "plain", "lower"):
        key = import_order_key(style)
        keys = [key(n) for n in names]
        if keys == sorted(keys):  # type: ignore[type-var]  # each style's keys compare among themselves
            return key
    return None


def add_import_name(text: str, statement: FromImport, name: str) -> Edit | None:
    """Add ``name`` to an existing ``from M import ...``: in sorted position when the names are
    sorted (isort's order, or plain), else last; one name per line when the statement is written so."""
    aliases = statement.names
    names = [alias.name for alias in aliases]
    # What --fix makes of it: the codemod adds the name with libcst (the edit is what reports show).
    imports = ((statement.module, name),) if statement.module and not statement.level else ()
    if statement.star or not aliases:
        return None
    key = order_of(names)
    position = len(names) if key is None else sum(1 for n in names if key(n) < key(name))  # type: ignore[operator,misc]  # key is not None in this branch; names compare as the order's keys
    newline = newline_of(text)

    def vertical(start: int) -> bool:  # the alias is the first thing on its line
        return not text[line_start(text, start) : start].strip()

    def indent_of(start: int) -> str:
        return text[line_start(text, start) : start]

    if position < len(names):
        start = aliases[position].start
        if vertical(start) and len(names) > 1 and statement.line != aliases[position].line:
            return Edit(start, start, f"{name},{newline}{indent_of(start)}", imports)
        return Edit(start, start, f"{name}, ", imports)
    start, end = aliases[-1].start, aliases[-1].end
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    one_per_line = vertical(start) and aliases[-1].line != statement.line
    if after < len(text) and text[after] == ",":  # a trailing comma
        if one_per_line:
            return Edit(after + 1, after + 1, f"{newline}{indent_of(start)}{name},", imports)
        return Edit(end, end, f", {name}", imports)
    if one_per_line:
        return Edit(end, end, f",{newline}{indent_of(start)}{name}", imports)
    return Edit(end, end, f", {name}", imports)
