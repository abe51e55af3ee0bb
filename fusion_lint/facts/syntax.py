"""Small readers of libcst nodes shared by the extractor's parts: children, literals, names, arguments."""
from __future__ import annotations

import dataclasses
from typing import Iterator, Optional, Union

import libcst as cst

# Fields that never hold an expression or a statement: the lean walk never looks at them.
_SKIPPED_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "leading_lines", "header", "footer", "semicolon", "equal", "colon",
        "dot", "lbracket", "rbracket", "lbrace", "rbrace", "operator", "star", "newline", "indent",
        "asynchronous", "trailing_whitespace", "first_line", "empty_lines", "lines_after_decorators",
        "whitespace_after_at", "prefix", "quote", "start", "end", "string",
    }
)  # fmt: skip
LEAF_TYPES = (cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)
_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    names = _FIELD_CACHE.get(node_type)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELD_CACHE[node_type] = names
    return names


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The syntactic children of ``node`` (no whitespace, no punctuation)."""
    if isinstance(node, LEAF_TYPES):
        return
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def string_value(node: cst.CSTNode) -> Union[str, None, bool]:
    """The joined value of a string literal; ``False`` for an f-string/bytes; ``None`` if no string."""
    if isinstance(node, cst.SimpleString):
        literal = node.value
        if "\\" not in literal and "\r" not in literal and literal[0] in "'\"":
            # No prefix, no escape, no line ending to normalise: the text between the quotes is the
            # value. ``evaluated_value`` compiles every literal (~10 us each, ~7% of a parse).
            return node.raw_value
        value = node.evaluated_value
        return value if isinstance(value, str) else False
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_value(node.left), string_value(node.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return False
    if isinstance(node, cst.FormattedString):
        return False
    return None


def fstring_start(node: cst.FormattedString) -> str:
    """The literal text an f-string starts with (``f"Error: {e}"`` starts with ``Error: ``)."""
    text = []
    for part in node.parts:
        if not isinstance(part, cst.FormattedStringText):
            break
        text.append(part.value)
    return "".join(text)


def is_bytes(node: cst.CSTNode) -> bool:
    """A bytes literal, plain or implicitly concatenated (``b"a" b"b"``)."""
    while isinstance(node, cst.ConcatenatedString):
        node = node.left
    return isinstance(node, cst.SimpleString) and "b" in node.prefix.lower()


def dotted(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a name or an attribute chain of names; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def describe(node: cst.CSTNode) -> str:
    """A short phrase for a value of the wrong kind, for messages."""
    if isinstance(node, cst.Dict):
        return "a dict"
    if isinstance(node, cst.Set):
        return "a set"
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "bytes" if is_bytes(node) else "a string"
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return "a number"
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return node.value
    if isinstance(node, (cst.List, cst.Tuple)):
        return "a list"
    if isinstance(node, cst.Lambda):
        return "a lambda"
    if isinstance(node, cst.Call):
        return f"a call to {dotted(node.func) or 'an expression'}()"
    if isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) is not None:
        return f"'{dotted(node)}'"
    return "an expression"


def is_constant_name(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value in ("None", "True", "False")


def keyword_argument(call: cst.Call, keyword: str) -> Optional[cst.Arg]:
    """The ``keyword=`` argument of ``call``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return None


def argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.Arg]:
    """The argument a parameter receives: the ``position``-th positional one, or ``keyword=``."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif not arg.star:
            if positional == position:
                return arg
            positional += 1
    return None


def argument_value(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    arg = argument(call, position, keyword)
    return arg.value if arg is not None else None


def rethrows(body: cst.CSTNode, name: str) -> bool:
    """A bare ``raise`` or ``raise <name>`` anywhere in ``body``, nested functions and classes aside."""
    stack = [body]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Raise) and (
            current.exc is None or (name and isinstance(current.exc, cst.Name) and current.exc.value == name)
        ):
            return True
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(children(current))
    return False


def contains_raise(body: cst.CSTNode) -> bool:
    """A raise statement anywhere in ``body``, nested functions and classes aside."""
    stack = [body]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Raise):
            return True
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(children(current))
    return False


def if_branches(node: cst.IfExp) -> Iterator[cst.BaseExpression]:
    """The values a conditional expression may take, nested conditionals included."""
    for branch in (node.body, node.orelse):
        if isinstance(branch, cst.IfExp):
            yield from if_branches(branch)
        else:
            yield branch
