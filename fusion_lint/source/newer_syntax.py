"""Which newer Python a file needs, when the running one rejects it (DESIGN §12.4).

``needs Python ≥ 3.12 to parse (fusion-lint is running on 3.11)`` is only said when it is true:
each syntax a later Python added has a *neutraliser* that rewrites it into what the running Python
accepts (``type X = int`` → ``X = int``, ``def f[T](x)`` → ``def f(x)``, ``except*`` → ``except``,
an f-string with nested quotes → ``""`` once each of its expressions parses…). A file that
parses after neutralising the syntax of versions up to V, and not before, needs V. Anything else
wrong in the file keeps it from parsing, so a plain syntax error is never blamed on the version.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable

Version = tuple[int, int]

_GENERIC_HEADER = re.compile(r"^([ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+)[ \t]*\[", re.MULTILINE)
_TYPE_ALIAS = re.compile(r"^([ \t]*)type[ \t]+(\w+)[ \t]*(?=[\[=])", re.MULTILINE)
_EXCEPT_STAR = re.compile(r"\bexcept[ \t]*\*")
_EXCEPT_BARE_TUPLE = re.compile(r"^([ \t]*except)[ \t]+(?!\()([^:\n#]+,[^:\n#]+?)[ \t]*:", re.MULTILINE)
_STAR_IN_INDEX = re.compile(r"(\[|,)([ \t]*)\*(?=[\w(])")
_STAR_ANNOTATION = re.compile(r"(\*[ \t]*\w+[ \t]*:[ \t]*)\*")


def _matching_bracket(text: str, start: int) -> int:
    """The index just past the bracket group that opens at ``start`` (``len(text)`` if unclosed)."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def _drop_type_parameters(text: str, defaults: bool) -> str:
    """``def f[T](…)``/``class C[T]:``/``type X[T] = …`` without their type parameters; with
    ``defaults`` false, only lists holding no ``T = default`` (PEP 696 is 3.13's, PEP 695 3.12's)."""
    for pattern in (_GENERIC_HEADER, _TYPE_ALIAS):
        out, position = [], 0
        for match in pattern.finditer(text):
            if match.start() < position:
                continue
            bracket = text.find("[", match.end() - 1)
            if pattern is _TYPE_ALIAS:
                head = f"{match.group(1)}{match.group(2)} "
                if bracket != match.end():
                    out.append(text[position : match.start()] + head)
                    position = match.end()
                    continue
            else:
                head = match.group(1)
            end = _matching_bracket(text, bracket)
            if not defaults and "=" in text[bracket:end]:
                continue
            out.append(text[position : match.start()] + head)
            position = end
        out.append(text[position:])
        text = "".join(out)
    return text


# ----- f-strings (PEP 701) and t-strings (PEP 750) -------------------------------------------------

_TOKEN = re.compile(r"""#|(?:\b([rRbBuUfFtT]{1,2}))?('''|\"\"\"|'|")""")
# A string body up to and including its closing quote; a backslash always takes the next character
# with it (in raw strings too, where it still keeps the quote from closing the string).
_STRING_BODY = {
    quote: re.compile(body, re.DOTALL)
    for quote, body in (
        ("'", r"(?:[^'\\\n]|\\.)*'"),
        ('"', r'(?:[^"\\\n]|\\.)*"'),
        ("'''", r"(?:[^\\]|\\.)*?'''"),
        ('"""', r'(?:[^\\]|\\.)*?"""'),
    )
}


class _Scanner:
    """Replaces each f-string (or t-string) with ``""`` when it is well formed under PEP 701's rules
    and each of its expressions parses; any other string is left as it is."""

    def __init__(self, text: str, prefixes: str):
        self.text, self.prefixes = text, prefixes

    def rewrite(self, start: int = 0, end: int | None = None) -> str:
        text, out, position = self.text, [], start
        end = len(text) if end is None else end
        while True:
            match = _TOKEN.search(text, position, end)
            if match is None:
                out.append(text[position:end])
                return "".join(out)
            if match.group(0) == "#":
                newline = text.find("\n", match.end(), end)
                stop = end if newline < 0 else newline
                out.append(text[position:stop])
                position = stop
                continue
            prefix, quote = (match.group(1) or "").lower(), match.group(2)
            if any(p in prefix for p in self.prefixes) and "b" not in prefix:
                closed = self.template(match.end(), quote, "r" in prefix)
                if closed is not None:
                    out.append(text[position : match.start()] + '""')
                    position = closed
                    continue
            closed = self.plain(match.end(), quote)
            out.append(text[position:closed])
            position = closed

    def plain(self, index: int, quote: str) -> int:
        """Past the end of a string whose body starts at ``index`` (or the end of its line)."""
        match = _STRING_BODY[quote].match(self.text, index)
        if match is not None:
            return match.end()
        newline = self.text.find("\n", index)
        return len(self.text) if newline < 0 or len(quote) == 3 else newline

    def template(self, index: int, quote: str, raw: bool) -> int | None:
        """Past the end of a well-formed f-string body, else None."""
        text = self.text
        while index < len(text):
            char = text[index]
            if text.startswith(quote, index):
                return index + len(quote)
            if char == "\\" and not raw:
                index += 2
            elif char == "\n" and len(quote) == 1:
                return None
            elif text.startswith(("{{", "}}"), index):
                index += 2
            elif char == "{":
                after = self.field(index + 1)
                if after is None:
                    return None
                index = after
            elif char == "}":
                return None
            else:
                index += 1
        return None

    def field(self, index: int) -> int | None:
        """Past the ``}`` of a replacement field whose expression starts at ``index``, else None."""
        text, depth, start = self.text, 0, index
        expression_end = None
        while index < len(text):
            char = text[index]
            if char in "([{":
                depth += 1
            elif char in ")]" or (char == "}" and depth):
                depth -= 1
            elif char == "#":
                newline = text.find("\n", index)
                index = len(text) if newline < 0 else newline
                continue
            elif char in "'\"rRbBuUfFtT" and (
                index == start or not (text[index - 1].isalnum() or text[index - 1] == "_")
            ):
                match = _TOKEN.match(text, index)
                if match is not None and match.group(0) != "#":
                    after = self._nested(match)
                    if after is None:
                        return None
                    index = after
                    continue
            elif depth == 0 and (char == "}" or char == ":" or (char == "!" and not text.startswith("!=", index))):
                expression_end = index
                break
            index += 1
        if expression_end is None or not self._parses(start, expression_end):
            return None
        if text[index] == "!":  # a conversion: !r, !s or !a
            index += 2
        if text.startswith(":", index):  # the format spec: text with nested fields
            index += 1
            while index < len(text) and text[index] != "}":
                if text[index] == "{":
                    after = self.field(index + 1)
                    if after is None:
                        return None
                    index = after
                else:
                    index += 1
        return index + 1 if text.startswith("}", index) else None

    def _nested(self, match: re.Match[str]) -> int | None:
        prefix, quote = (match.group(1) or "").lower(), match.group(2)
        if any(p in prefix for p in self.prefixes) and "b" not in prefix:
            return self.template(match.end(), quote, "r" in prefix)
        return self.plain(match.end(), quote)

    def _parses(self, start: int, end: int) -> bool:
        expression = re.sub(r"(?<=[^=!<>])=\s*$", "", self.rewrite(start, end))  # {x=}: the debug form
        if not expression.strip():
            return False
        return _parses(f"(\n{expression}\n)", "eval")


def _neutralise_templates(prefixes: str) -> Callable[[str], str]:
    def neutralise(text: str) -> str:
        return _Scanner(text, prefixes).rewrite() if re.search(f"[{prefixes}{prefixes.upper()}]['\"]", text) else text

    return neutralise


#: (version, neutraliser): what each later Python accepts that earlier ones do not.
_FEATURES: tuple[tuple[Version, Callable[[str], str]], ...] = (
    ((3, 11), lambda text: _EXCEPT_STAR.sub("except ", text)),  # PEP 654
    ((3, 11), lambda text: _STAR_ANNOTATION.sub(r"\1", _STAR_IN_INDEX.sub(r"\1\2", text))),  # PEP 646
    ((3, 12), lambda text: _drop_type_parameters(text, defaults=False)),  # PEP 695
    ((3, 12), _neutralise_templates("f")),  # PEP 701
    ((3, 13), lambda text: _drop_type_parameters(text, defaults=True)),  # PEP 696
    ((3, 14), lambda text: _EXCEPT_BARE_TUPLE.sub(r"\1 (\2):", text)),  # PEP 758
    ((3, 14), _neutralise_templates("t")),  # PEP 750
)
NEWEST_KNOWN: Version = max(version for version, _ in _FEATURES)


def _parses(text: str, mode: str = "exec") -> bool:
    try:
        ast.parse(text, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def needed_version(text: str, running: Version = sys.version_info[:2]) -> Version | None:
    """The oldest Python newer than ``running`` whose syntax makes ``text`` parse, as far as the
    known features tell; None when the file is wrong on any version."""
    candidate = text
    for target in sorted({version for version, _ in _FEATURES if version > running}):
        for version, neutralise in _FEATURES:
            if version == target:
                candidate = neutralise(candidate)
        if candidate != text and _parses(candidate):
            return target
    return None
