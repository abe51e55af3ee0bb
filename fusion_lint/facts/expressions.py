"""What an expression is made of, as facts: the reason in a raise's data, what a value is built
from (``Uses``), and its shape one or two levels deep (``Shape``)."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Literal

from fusion_lint.facts.model import Shape, Uses
from fusion_lint.facts.names import Names, Scope
from fusion_lint.facts.syntax import (
    LEAF_TYPES,
    args_of,
    children,
    dotted,
    identifier,
    keyword_argument,
    name_value,
    string_value,
)

if TYPE_CHECKING:
    from fusion_lint.facts.positions import SpanRegistry

TEXT_LIMIT = 200  # characters of a string's text kept as a fact


def data_reason(node: ast.AST | None) -> str | None:
    """The literal ``reason`` of a data argument: ``{"reason": "x", ...}`` or ``dict(reason="x")``."""
    if type(node) is ast.Dict:
        for key, value in zip(node.keys, node.values):
            if key is not None and string_value(key) == "reason":
                text = string_value(value)
                return text if isinstance(text, str) else None
    if type(node) is ast.Call and dotted(node.func) == "dict":
        found = keyword_argument(node, "reason")
        text = string_value(found.value) if found is not None else None
        return text if isinstance(text, str) else None
    return None


_PERCENT = re.compile(r"%(?:\((\w+)\))?[-#0 +]*\d*(?:\.\d+)?[sdrifgexXoc]")
_BRACES = re.compile(r"\{(\w*)[^{}]*\}")


def sentence(node: ast.AST | None) -> str | None:
    """A message's whole text, each placeholder written ``<name>`` after what it interpolates
    (``f"No invoice {invoice_id}"`` is ``No invoice <invoice_id>``): a string, an f-string, their
    concatenation, ``"...".format(...)``, ``"..." % ...`` or ``str(x)``. None for anything else."""
    kind = type(node)
    if kind is ast.Constant:
        return node.value[:TEXT_LIMIT] if isinstance(node.value, str) else None  # type: ignore[union-attr]  # kind is ast.Constant above; mypy does not narrow through kind = type(...)
    if kind is ast.JoinedStr:
        parts = []
        for value in node.values:  # type: ignore[union-attr]  # kind is ast.JoinedStr above; mypy does not narrow through kind = type(...)
            if type(value) is ast.Constant:
                parts.append(str(value.value))
            elif type(value) is ast.FormattedValue:
                parts.append(f"<{_hole(value.value)}>")
        return "".join(parts)[:TEXT_LIMIT]
    if kind is ast.BinOp and type(node.op) is ast.Add:  # type: ignore[union-attr]  # kind is ast.BinOp and type(node.op) is ast.Add; mypy does not narrow through kind = type(...)
        left, right = sentence(node.left), sentence(node.right)  # type: ignore[union-attr]  # kind is ast.BinOp and type(node.op) is ast.Add above; mypy does not narrow through kind = type(...)
        return None if left is None or right is None else (left + right)[:TEXT_LIMIT]
    if kind is ast.BinOp and type(node.op) is ast.Mod and isinstance(string_value(node.left), str):  # type: ignore[union-attr]  # kind is ast.BinOp; mypy does not narrow through kind = type(...)
        return _PERCENT.sub(lambda m: f"<{m.group(1) or 'value'}>", string_value(node.left))[:TEXT_LIMIT]  # type: ignore[union-attr,arg-type]  # kind is ast.BinOp above; mypy does not narrow through kind = type(...)
    if kind is ast.Call:
        func = node.func  # type: ignore[union-attr]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
        if type(func) is ast.Attribute and func.attr == "format" and isinstance(string_value(func.value), str):
            return _BRACES.sub(lambda m: f"<{m.group(1) or 'value'}>", string_value(func.value))[:TEXT_LIMIT]  # type: ignore[arg-type]  # isinstance(string_value(func.value), str) above: mypy does not narrow a call's result
        if name_value(func) == "str" and len(node.args) == 1 and not node.keywords:  # type: ignore[union-attr]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
            return f"<{_hole(node.args[0])}>"  # type: ignore[union-attr]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
    return None


def _hole(node: ast.AST) -> str:
    """What a placeholder interpolates, as one word: a name, an attribute's last part, a call's callee."""
    while True:
        kind = type(node)
        if kind is ast.Name:
            return node.id  # type: ignore[attr-defined,no-any-return]  # kind is ast.Name above; mypy does not narrow through kind = type(...)
        if kind is ast.Attribute:
            return node.attr  # type: ignore[attr-defined,no-any-return]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
        if kind is ast.Subscript:
            key = string_value(node.slice)  # type: ignore[attr-defined]  # kind is ast.Subscript above; mypy does not narrow through kind = type(...)
            if isinstance(key, str) and key.isidentifier():
                return key
            node = node.value  # type: ignore[attr-defined]  # kind is ast.Subscript above; mypy does not narrow through kind = type(...)
        elif kind is ast.Call:
            # ``str(e)``, ``repr(e)``: what is turned into text, else what is called
            simple = name_value(node.func) in ("str", "repr") and len(node.args) == 1  # type: ignore[attr-defined,operator]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
            node = node.args[0] if simple else node.func  # type: ignore[attr-defined]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
        else:
            return "value"


def uses(node: ast.AST, names: Names, scope: Scope | None) -> Uses:
    """What ``node`` is built from (``model.Uses``), met in a fixed order."""
    parts: list[tuple[Literal["call", "format", "name"], str, str | None]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is ast.Call:
            qname = names.qualify(current.func, scope)  # type: ignore[attr-defined]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
            if qname is not None:
                found = args_of(current)  # type: ignore[arg-type]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
                first = dotted(found[0].value) if found else None
                parts.append(("call", qname, first))
        elif kind is ast.FormattedValue:
            name = dotted(current.value)  # type: ignore[attr-defined]  # kind is ast.FormattedValue above; mypy does not narrow through kind = type(...)
            if name is not None:
                conversion = current.conversion  # type: ignore[attr-defined]  # kind is ast.FormattedValue above; mypy does not narrow through kind = type(...)
                parts.append(("format", name, chr(conversion) if conversion > 0 else ""))
        elif kind is ast.Attribute or name_value(current) is not None:
            name = dotted(current)
            if name is not None:
                parts.append(("name", name, None))
                continue  # ``e.args`` is one name, not also ``e``
        else:
            bare = identifier(current)
            if bare is not None:
                parts.append(("name", bare, None))
                continue
        if not isinstance(current, LEAF_TYPES):
            stack.extend(children(current))
    return Uses(tuple(parts))


def literal_text(
    node: ast.expr | None, names: Names, scope: Scope | None, spans: SpanRegistry | None = None
) -> str | None:
    """A message's literal text (an f-string's up to its first placeholder), or None."""
    if node is None:
        return None
    found = shape(node, 0, names, scope, spans)
    return found.text if found.kind in ("str", "fstring") else None


def shape(node: ast.expr, depth: int, names: Names, scope: Scope | None, spans: SpanRegistry | None = None) -> Shape:
    """``model.Shape`` of ``node``, ``depth`` levels deep."""
    while type(node) is ast.Await:
        node = node.value
    text = string_value(node)
    if isinstance(text, str):
        return Shape("str", text=text[:TEXT_LIMIT])
    if type(node) is ast.JoinedStr:
        start = fstring_start(node, spans)
        return Shape("fstring", text=start[:TEXT_LIMIT] if isinstance(start, str) else "")
    name = name_value(node)
    if name == "None":
        return Shape("none")
    if name is not None or type(node) is ast.Attribute:
        return Shape("name", text=dotted(node))
    if depth <= 0:
        return Shape("other")
    kind = type(node)
    if kind is ast.Dict:
        keys = []
        for key, value in zip(node.keys, node.values):  # type: ignore[attr-defined]  # kind is ast.Dict above; mypy does not narrow through kind = type(...)
            if key is not None:
                literal = string_value(key)
                if isinstance(literal, str):
                    keys.append((literal, shape(value, depth - 1, names, scope, spans)))
        return Shape("dict", keys=tuple(keys))
    if kind is ast.List or kind is ast.Tuple:
        return Shape(
            "list",
            items=tuple(
                shape(e.value if type(e) is ast.Starred else e, depth - 1, names, scope, spans)
                for e in node.elts  # type: ignore[attr-defined]  # kind is ast.List or ast.Tuple
            ),
        )
    if kind is ast.Call:
        found = args_of(node)  # type: ignore[arg-type]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
        positional = tuple(
            shape(a.value, depth - 1, names, scope, spans) for a in found if a.keyword is None and not a.star
        )
        keywords = tuple((a.keyword, shape(a.value, depth - 1, names, scope, spans)) for a in found if a.keyword)
        return Shape("call", callee=names.qualify(node.func, scope), items=positional, keys=keywords)  # type: ignore[attr-defined]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
    return Shape("other")


def fstring_start(node: ast.JoinedStr, spans: SpanRegistry | None) -> object:
    """The literal text an f-string starts with as written (``f"Error: {e}"`` starts with
    ``Error: ``; escapes and ``{{`` kept as written); for a concatenation, its first piece's: a
    plain string's value (False for bytes), an f-string's start."""
    if spans is None:
        return ""
    source = spans.text
    start = spans.offset(node.lineno, node.col_offset)
    piece = _first_piece(source, start)
    if piece is None:
        return ""
    prefix, body, end = piece
    concatenated = end < spans.offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]  # a parsed expression has its end position
    if "f" not in prefix.lower():
        if not concatenated:
            return ""
        try:
            value = ast.literal_eval(source[start:end])
        except (ValueError, SyntaxError):
            return ""
        return value if isinstance(value, str) else False
    text, index = [], 0
    while index < len(body):
        char = body[index]
        if char == "{":
            if body.startswith("{{", index):
                text.append("{{")
                index += 2
                continue
            break
        if char == "\\" and index + 1 < len(body):
            text.append(body[index : index + 2])
            index += 2
            continue
        text.append(char)
        index += 1
    return "".join(text)


def is_concatenated(node: ast.JoinedStr, spans: SpanRegistry) -> bool:
    """Whether an f-string is an implicit concatenation (``"a" f"{b}"``), not one literal."""
    start = spans.offset(node.lineno, node.col_offset)
    piece = _first_piece(spans.text, start)
    return piece is not None and piece[2] < spans.offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]  # a parsed expression has its end position


def _first_piece(source: str, start: int) -> tuple[str, str, int] | None:
    """(prefix, text between the quotes, end) of the string literal at ``start``."""
    index = start
    while index < len(source) and source[index].isalpha():
        index += 1
    prefix = source[start:index]
    quote = source[index : index + 3] if source[index : index + 3] in ('"""', "'''") else source[index : index + 1]
    if quote not in ('"', "'", '"""', "'''"):
        return None
    body_start = index + len(quote)
    end = _string_end(source, body_start, quote, "f" in prefix.lower())
    if end is None:
        return None
    return prefix, source[body_start : end - len(quote)], end


def _string_end(source: str, index: int, quote: str, formatted: bool) -> int | None:
    """Where the literal whose text starts at ``index`` ends (after its closing quote)."""
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if formatted and char == "{":
            if source.startswith("{{", index):
                index += 2
                continue
            index = _skip_braces(source, index)
            continue
        if source.startswith(quote, index):
            return index + len(quote)
        index += 1
    return None


def _skip_braces(source: str, index: int) -> int:
    """Past the replacement field opening at ``index`` (nested brackets and strings aside)."""
    depth = 0
    while index < len(source):
        char = source[index]
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return index + 1
        elif char in "\"'":
            quote = source[index : index + 3] if source[index : index + 3] in ('"""', "'''") else char
            end = _string_end(source, index + len(quote), quote, False)
            index = end if end is not None else len(source)
            continue
        index += 1
    return index
