"""What an expression is made of, as facts: the reason in a raise's data, what a value is built
from (``Uses``), and its shape one or two levels deep (``Shape``)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from .model import Shape, Uses
from .names import Names, Scope
from .syntax import LEAF_TYPES, children, dotted, fstring_start, keyword_argument, string_value

TEXT_LIMIT = 200  # characters of a string's text kept as a fact


def data_reason(node: Optional[cst.CSTNode]) -> Optional[str]:
    """The literal ``reason`` of a data argument: ``{"reason": "x", ...}`` or ``dict(reason="x")``."""
    if isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement) and string_value(element.key) == "reason":
                text = string_value(element.value)
                return text if isinstance(text, str) else None
    if isinstance(node, cst.Call) and dotted(node.func) == "dict":
        value = keyword_argument(node, "reason")
        text = string_value(value.value) if value is not None else None
        return text if isinstance(text, str) else None
    return None


def uses(node: cst.CSTNode, names: Names, scope: Optional[Scope]) -> Uses:
    """What ``node`` is built from (``model.Uses``), met in a fixed order."""
    parts: list = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            qname = names.qualify(current.func, scope)
            if qname is not None:
                first = dotted(current.args[0].value) if current.args else None
                parts.append(("call", qname, first))
        elif isinstance(current, cst.FormattedStringExpression):
            name = dotted(current.expression)
            if name is not None:
                parts.append(("format", name, current.conversion or ""))
        elif isinstance(current, (cst.Name, cst.Attribute)):
            name = dotted(current)
            if name is not None:
                parts.append(("name", name, None))
                continue  # ``e.args`` is one name, not also ``e``
        if not isinstance(current, LEAF_TYPES):
            stack.extend(children(current))
    return Uses(tuple(parts))


def literal_text(node: Optional[cst.BaseExpression], names: Names, scope: Optional[Scope]) -> Optional[str]:
    """A message's literal text (an f-string's up to its first placeholder), or None."""
    if node is None:
        return None
    found = shape(node, 0, names, scope)
    return found.text if found.kind in ("str", "fstring") else None


def shape(node: cst.BaseExpression, depth: int, names: Names, scope: Optional[Scope]) -> Shape:
    """``model.Shape`` of ``node``, ``depth`` levels deep."""
    while isinstance(node, cst.Await):
        node = node.expression
    text = string_value(node)
    if isinstance(text, str):
        return Shape("str", text=text[:TEXT_LIMIT])
    if isinstance(node, cst.FormattedString):
        return Shape("fstring", text=fstring_start(node)[:TEXT_LIMIT])
    if isinstance(node, cst.ConcatenatedString):
        left = node.left
        start = fstring_start(left) if isinstance(left, cst.FormattedString) else string_value(left)
        return Shape("fstring", text=start[:TEXT_LIMIT] if isinstance(start, str) else "")
    if isinstance(node, cst.Name) and node.value == "None":
        return Shape("none")
    if isinstance(node, (cst.Name, cst.Attribute)):
        return Shape("name", text=dotted(node))
    if depth <= 0:
        return Shape("other")
    if isinstance(node, cst.Dict):
        keys = []
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                key = string_value(element.key)
                if isinstance(key, str):
                    keys.append((key, shape(element.value, depth - 1, names, scope)))
        return Shape("dict", keys=tuple(keys))
    if isinstance(node, (cst.List, cst.Tuple)):
        return Shape("list", items=tuple(shape(e.value, depth - 1, names, scope) for e in node.elements))
    if isinstance(node, cst.Call):
        positional = tuple(shape(a.value, depth - 1, names, scope) for a in node.args if a.keyword is None and not a.star)
        keywords = tuple((a.keyword.value, shape(a.value, depth - 1, names, scope)) for a in node.args if a.keyword)
        return Shape("call", callee=names.qualify(node.func, scope), items=positional, keys=keywords)
    return Shape("other")
