"""Small readers of CPython ``ast`` nodes shared by the extractor's parts: children, literals,
names, arguments.

The tree is the gate's (``source.gate_tree``): the file is parsed once. The readers keep the
conventions the facts were first defined with (libcst's): ``None``, ``True`` and ``False`` are
names, a call's arguments come in source order whatever their kind, a keyword argument's keyword
is a name among its children, and children come in the order the facts rely on.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_SINGLETONS = {None: "None", True: "True", False: "False"}


def name_value(node: ast.AST | None) -> str | None:
    """The identifier of a name (``None``, ``True`` and ``False`` included), else None."""
    kind = type(node)
    if kind is ast.Name:
        return node.id  # type: ignore[union-attr,no-any-return]  # kind is ast.Name above; mypy does not narrow through kind = type(...)
    if kind is ast.Constant:
        value = node.value  # type: ignore[union-attr]  # kind is ast.Constant above; mypy does not narrow through kind = type(...)
        if value is None or value is True or value is False:
            return _SINGLETONS[value]
    return None


def is_name_or_attribute(node: ast.AST | None) -> bool:
    return type(node) is ast.Attribute or name_value(node) is not None


class Arg:
    """One argument of a call, in source order: ``keyword`` (None when positional), ``star``
    ("", "*", "**"), ``value`` (what is passed) and ``node`` (the ``keyword``/``Starred`` node, or
    the value itself for a plain positional argument)."""

    __slots__ = ("keyword", "star", "value", "node", "call", "index")

    def __init__(self, keyword: str | None, star: str, value: ast.expr, node: ast.AST, call: ast.Call, index: int):
        self.keyword, self.star, self.value, self.node, self.call, self.index = keyword, star, value, node, call, index


def args_of(call: ast.Call) -> list[Arg]:
    """``call``'s arguments in source order (computed once per call)."""
    found: list[Arg] | None = call.__dict__.get("_fl_args")
    if found is not None:
        return found
    items: list[tuple[ast.AST, str | None, str, ast.expr]] = []
    for node in call.args:
        if type(node) is ast.Starred:
            items.append((node, None, "*", node.value))
        else:
            items.append((node, None, "", node))
    if call.keywords:
        for keyword in call.keywords:
            items.append((keyword, keyword.arg, "" if keyword.arg is not None else "**", keyword.value))
        if call.args:
            items.sort(key=lambda item: (item[0].lineno, item[0].col_offset))  # type: ignore[attr-defined]  # arguments and keywords are placed nodes
    found = [Arg(keyword, star, value, node, call, index) for index, (node, keyword, star, value) in enumerate(items)]
    call._fl_args = found  # type: ignore[attr-defined]  # the computed arguments kept on the node (args_of reads them back)
    return found


def children(node: ast.AST) -> Iterator[ast.AST]:
    """The syntactic children of ``node`` that the walks look into, in the facts' order."""
    kind = type(node)
    if kind is ast.Call:
        yield node.func  # type: ignore[attr-defined]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
        for arg in args_of(node):  # type: ignore[arg-type]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
            yield arg.value
            if arg.keyword is not None:
                yield _KeywordName(arg)
        return
    if kind is ast.Dict:
        for key, value in zip(node.keys, node.values):  # type: ignore[attr-defined]  # kind is ast.Dict above; mypy does not narrow through kind = type(...)
            if key is not None:
                yield key
            yield value
        return
    if kind is ast.Attribute:
        yield node.value  # type: ignore[attr-defined]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
        yield _AttrName(node)  # type: ignore[arg-type]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
        return
    if kind is ast.Lambda:
        yield from _parameters(node.args)  # type: ignore[attr-defined]  # kind is ast.Lambda above; mypy does not narrow through kind = type(...)
        yield node.body  # type: ignore[attr-defined]  # kind is ast.Lambda above; mypy does not narrow through kind = type(...)
        return
    if kind is ast.match_case:
        yield node.pattern  # type: ignore[attr-defined]  # kind is ast.match_case above; mypy does not narrow through kind = type(...)
        yield from node.body  # type: ignore[attr-defined]  # kind is ast.match_case above; mypy does not narrow through kind = type(...)
        if node.guard is not None:  # type: ignore[attr-defined]  # kind is ast.match_case above; mypy does not narrow through kind = type(...)
            yield node.guard  # type: ignore[attr-defined]  # kind is ast.match_case above; mypy does not narrow through kind = type(...)
        return
    if kind is ast.ExceptHandler:
        yield from node.body  # type: ignore[attr-defined]  # kind is ast.ExceptHandler above; mypy does not narrow through kind = type(...)
        if node.type is not None:  # type: ignore[attr-defined]  # kind is ast.ExceptHandler above; mypy does not narrow through kind = type(...)
            yield node.type  # type: ignore[attr-defined]  # kind is ast.ExceptHandler above; mypy does not narrow through kind = type(...)
        return
    if kind is ast.Compare:
        yield node.left  # type: ignore[attr-defined]  # kind is ast.Compare above; mypy does not narrow through kind = type(...)
        yield from node.comparators  # type: ignore[attr-defined]  # kind is ast.Compare above; mypy does not narrow through kind = type(...)
        return
    if kind is ast.FormattedValue:
        yield node.value  # type: ignore[attr-defined]  # kind is ast.FormattedValue above; mypy does not narrow through kind = type(...)
        if node.format_spec is not None:  # type: ignore[attr-defined]  # kind is ast.FormattedValue above; mypy does not narrow through kind = type(...)
            yield node.format_spec  # type: ignore[attr-defined]  # kind is ast.FormattedValue above; mypy does not narrow through kind = type(...)
        return
    if kind is ast.arg or kind is ast.Constant or kind is ast.Name:
        return
    for name in _FIELDS.get(kind) or _fields(kind):
        value = getattr(node, name, None)
        if value is None:
            continue
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield item
        elif isinstance(value, ast.AST):
            yield value


_SKIPPED = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "type_comment",
        "kind",
        "conversion",
        "type_params",
        "is_async",
        "level",
        "names",
        "module",
        "name",
        "simple",
        "lineno",
        "asname",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {
    ast.ClassDef: ("body", "bases", "keywords", "decorator_list"),
    ast.FunctionDef: ("args", "body", "decorator_list", "returns"),
    ast.AsyncFunctionDef: ("args", "body", "decorator_list", "returns"),
    ast.keyword: ("value",),
}


def _fields(kind: type) -> tuple[str, ...]:
    names = tuple(name for name in kind._fields if name not in _SKIPPED)  # type: ignore[attr-defined]  # kind is an ast node class: it has _fields
    _FIELDS[kind] = names
    return names


def _parameters(arguments: ast.arguments) -> Iterator[ast.AST]:
    """A lambda's parameters as libcst orders them: the plain ones (name, default), ``*args``, the
    keyword-only ones, ``**kwargs``, then the positional-only ones."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    count = len(arguments.posonlyargs)
    for param, default in list(zip(positional, defaults))[count:]:
        yield param
        if default is not None:
            yield default
    if arguments.vararg is not None:
        yield arguments.vararg
    for param, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        yield param
        if default is not None:
            yield default
    if arguments.kwarg is not None:
        yield arguments.kwarg
    for param, default in list(zip(positional, defaults))[:count]:
        yield param
        if default is not None:
            yield default


class _KeywordName(ast.AST):
    """A keyword argument's keyword, standing as a name among the call's children."""

    _fields = ()

    def __init__(self, arg: Arg) -> None:
        self.id = arg.keyword


class _AttrName(ast.AST):
    """An attribute's name, standing as a name among the attribute's children."""

    _fields = ()

    def __init__(self, node: ast.Attribute) -> None:
        self.id = node.attr


LEAF_TYPES = (ast.Name, ast.Constant, ast.arg, _KeywordName, _AttrName)


def identifier(node: ast.AST) -> str | None:
    """The identifier of a name-like child (a parameter, a keyword, an attribute's name)."""
    if type(node) is ast.arg:
        return node.arg
    if type(node) in (_KeywordName, _AttrName):
        return node.id  # type: ignore[attr-defined,no-any-return]  # type(node) in (_KeywordName, _AttrName), which both have id; mypy does not narrow through a tuple of types
    return None


def string_value(node: ast.AST | None) -> str | None | bool:
    """The joined value of a string literal; ``False`` for an f-string/bytes; ``None`` if no string."""
    kind = type(node)
    if kind is ast.Constant:
        value = node.value  # type: ignore[union-attr]  # kind is ast.Constant above; mypy does not narrow through kind = type(...)
        if type(value) is str:
            return value
        return False if type(value) is bytes else None
    if kind is ast.JoinedStr:
        return False
    return None


def is_string(node: ast.AST | None) -> bool:
    """A string literal of any kind (plain, bytes, f-string, concatenated)."""
    kind = type(node)
    return kind is ast.JoinedStr or (kind is ast.Constant and type(node.value) in (str, bytes))  # type: ignore[union-attr]  # kind is ast.JoinedStr; mypy does not narrow through kind = type(...)


def is_bytes(node: ast.AST) -> bool:
    """A bytes literal, plain or implicitly concatenated (``b"a" b"b"``)."""
    return type(node) is ast.Constant and type(node.value) is bytes


def is_number(node: ast.AST) -> bool:
    return type(node) is ast.Constant and type(node.value) in (int, float, complex)


def int_value(node: ast.AST | None) -> int | None:
    if type(node) is ast.Constant and type(node.value) is int:
        return node.value
    return None


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a name or an attribute chain of names; None for anything else."""
    if type(node) is ast.Attribute:
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return name_value(node)


def describe(node: ast.AST) -> str:
    """A short phrase for a value of the wrong kind, for messages."""
    kind = type(node)
    if kind is ast.Dict:
        return "a dict"
    if kind is ast.Set:
        return "a set"
    if is_string(node):
        return "bytes" if is_bytes(node) else "a string"
    if is_number(node):
        return "a number"
    name = name_value(node)
    if name in ("None", "True", "False"):
        return name
    if kind in (ast.List, ast.Tuple):
        return "a list"
    if kind is ast.Lambda:
        return "a lambda"
    if kind is ast.Call:
        return f"a call to {dotted(node.func) or 'an expression'}()"  # type: ignore[attr-defined]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
    if dotted(node) is not None:
        return f"'{dotted(node)}'"
    return "an expression"


def is_constant_name(node: ast.AST | None) -> bool:
    return type(node) is ast.Constant and name_value(node) is not None


def keyword_argument(call: ast.Call, keyword: str) -> Arg | None:
    """The ``keyword=`` argument of ``call``."""
    for arg in args_of(call):
        if arg.keyword == keyword:
            return arg
    return None


def argument(call: ast.Call, position: int, keyword: str) -> Arg | None:
    """The argument a parameter receives: the ``position``-th positional one, or ``keyword=``."""
    positional = 0
    for arg in args_of(call):
        if arg.keyword is not None:
            if arg.keyword == keyword:
                return arg
        elif not arg.star:
            if positional == position:
                return arg
            positional += 1
    return None


def argument_value(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    arg = argument(call, position, keyword)
    return arg.value if arg is not None else None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def rethrows(body: list[ast.stmt], name: str) -> bool:
    """A bare ``raise`` or ``raise <name>`` anywhere in ``body``, nested functions and classes aside."""
    stack: list[ast.AST] = list(body)
    while stack:
        current = stack.pop()
        if type(current) is ast.Raise and (
            current.exc is None or (name and type(current.exc) is ast.Name and current.exc.id == name)
        ):
            return True
        if isinstance(current, _SCOPES):
            continue
        stack.extend(children(current))
    return False


def contains_raise(body: list[ast.stmt]) -> bool:
    """A raise statement anywhere in ``body``, nested functions and classes aside."""
    stack: list[ast.AST] = list(body)
    while stack:
        current = stack.pop()
        if type(current) is ast.Raise:
            return True
        if isinstance(current, _SCOPES):
            continue
        stack.extend(children(current))
    return False


def if_branches(node: ast.IfExp) -> Iterator[ast.expr]:
    """The values a conditional expression may take, nested conditionals included."""
    for branch in (node.body, node.orelse):
        if type(branch) is ast.IfExp:
            yield from if_branches(branch)
        else:
            yield branch
