"""Values, contract entries and contract expressions as written (DESIGN §4 "Contracts", "Codes")."""

from __future__ import annotations

import ast

from fusion_lint.facts.expressions import is_concatenated
from fusion_lint.facts.model import (
    Argument,
    Assumptions,
    BadExpr,
    BadItem,
    Binding,
    CallLayout,
    ConcatExpr,
    ContractExpr,
    Entry,
    EntryField,
    EntryItem,
    Item,
    ListExpr,
    RefExpr,
    RefItem,
    SpreadItem,
    Value,
)
from fusion_lint.facts.names import Names, Scope
from fusion_lint.facts.positions import Cursor, SpanRegistry
from fusion_lint.facts.syntax import (
    args_of,
    describe,
    dotted,
    int_value,
    is_bytes,
    is_constant_name,
    is_name_or_attribute,
    is_string,
    name_value,
    string_value,
)
from mcp_fusion import JsonRpcErrorCode, code_name, coerce_code, is_valid_code

# What cannot be a contract at all, written where one is expected (FL100 rather than FL190).
_NOT_A_LIST = (ast.Dict, ast.Set, ast.JoinedStr, ast.Name, ast.DictComp, ast.SetComp, ast.Lambda)


def _not_a_list(node: ast.AST) -> bool:
    if isinstance(node, _NOT_A_LIST):
        return True
    # Strings, bytes, ints, floats, ``None``/``True``/``False``; not an imaginary number, not ``...``.
    return type(node) is ast.Constant and type(node.value) in (str, bytes, int, float, bool, type(None))


class Values:
    def __init__(self, names: Names, spans: SpanRegistry):
        self.names = names
        self.spans = spans
        # While a class body is read (its attributes, its methods' decorators): the names it binds,
        # which its own expressions see, as Python's class scope does (``errors=ERRORS``).
        self.scope: Scope | None = None

    def _qualify(self, node: ast.AST) -> str | None:
        return self.names.qualify(node, self.scope)

    def value(self, node: ast.expr, at: Cursor) -> Value:
        span = self.spans.at(node, at)
        text = string_value(node)
        if isinstance(text, str):
            return Value("str", text, span)
        if text is False:
            if is_bytes(node):  # the runtime rejects bytes where it takes text
                return Value("bytes", "bytes", span)
            return Value("fstring", "an f-string", span)
        number = _int_literal(node)
        if number is not None:
            return Value("int", number, span)
        if type(node) is ast.Constant and type(node.value) is float:
            return Value("float", node.value, span)
        if is_constant_name(node):
            if name_value(node) == "None":
                return Value("none", None, span)
            return Value("bool", name_value(node) == "True", span)
        if is_name_or_attribute(node):
            qname = self._qualify(node)
            member = self.names.code_member(qname)
            if member is not None:
                return Value("code", member, span)
            if qname is not None:
                return Value("ref", qname, span)
        looked_up = self._member_lookup(node, self.scope)
        if (
            looked_up is not None and not looked_up[1]
        ):  # ``JsonRpcErrorCode(-32001)``, ``JsonRpcErrorCode["NOT_FOUND"]``
            member_or_number = looked_up[0]
            if isinstance(member_or_number, int):  # a number that is no member's value (FL104)
                return Value("int", member_or_number, span)
            return Value("code", member_or_number, span)
        if type(node) in (ast.List, ast.Tuple, ast.Dict, ast.Set):
            return Value("collection", describe(node), span)
        return Value("expr", describe(node), span)

    def code_of(self, node: ast.AST | None, scope: Scope | None) -> tuple[str | None, Assumptions]:
        """The code ``node`` gives, by name: a member through any alias, its int value,
        ``JsonRpcErrorCode(<int>)``, or a string code (a member's name is the member; a canonical or
        custom ``UPPER_SNAKE_CASE`` code is itself, DESIGN §3.1); and what recognising it assumed."""
        if node is None:
            return None, ()
        if is_name_or_attribute(node):
            qname = self.names.qualify(node, scope)
            if qname is None:
                return None, ()
            owner, _, member = qname.rpartition(".")
            api, assumes = self.names.api_of(owner)
            return (member, assumes) if api == "JsonRpcErrorCode" and member else (None, ())
        number = _int_literal(node)
        if number is not None:
            return (JsonRpcErrorCode(number).name, ()) if is_valid_code(number) else (None, ())
        text = string_value(node)
        if isinstance(text, str):
            return (code_name(coerce_code(text)), ()) if is_valid_code(text) else (None, ())
        looked_up = self._member_lookup(node, scope)
        if looked_up is not None and isinstance(looked_up[0], str):
            return looked_up  # type: ignore[return-value]  # its first item is a str: tested above
        return None, ()

    def _member_lookup(self, node: ast.AST, scope: Scope | None) -> tuple[str | int, Assumptions] | None:
        """``JsonRpcErrorCode(<int>)`` (the member of that value, or the int when no member has it)
        and ``JsonRpcErrorCode["NAME"]`` (the name), through any alias of the enum."""
        kind = type(node)
        if kind is ast.Call and len(args_of(node)) == 1 and not args_of(node)[0].keyword and not args_of(node)[0].star:  # type: ignore[arg-type]  # kind is ast.Call; mypy does not narrow through kind = type(...)
            owner, key = node.func, args_of(node)[0].value  # type: ignore[attr-defined,arg-type]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
            number = _int_literal(key)
            if number is None:
                return None
        elif kind is ast.Subscript and type(node.slice) not in (ast.Tuple, ast.Slice):  # type: ignore[attr-defined]  # kind is ast.Subscript; mypy does not narrow through kind = type(...)
            owner, key = node.value, node.slice  # type: ignore[attr-defined]  # kind is ast.Subscript above; mypy does not narrow through kind = type(...)
            number = None
        else:
            return None
        if not is_name_or_attribute(owner):
            return None
        api, assumes = self.names.api_of(self.names.qualify(owner, scope))
        if api != "JsonRpcErrorCode":
            return None
        if number is not None:
            return (JsonRpcErrorCode(number).name if is_valid_code(number) else number), assumes
        name = string_value(key)
        return (name, assumes) if isinstance(name, str) else None

    def call_layout(self, call: ast.Call, at: Cursor) -> CallLayout:
        arguments = tuple(
            Argument(self.spans.arg(arg, at), self.spans.at(arg.value, at), arg.keyword, arg.star)
            for arg in args_of(call)
        )
        return CallLayout(self.spans.at(call, at), self.spans.at(call.func, at), arguments)

    # ----- contract entries -----------------------------------------------------------------------

    def entry_from_call(self, call: ast.Call, at: Cursor, assumes: Assumptions = ()) -> Entry:
        entry = Entry("call", self.spans.at(call, at), [], assumes=assumes)
        spreads = []
        for arg in args_of(call):
            if arg.star or arg.keyword is None:
                opaque = f"{arg.star}{dotted(arg.value) or '...'}" if arg.star else "a positional argument"
                entry.opaque.append(opaque)
                span = self.spans.arg(arg, at)
                entry.opaque_span = entry.opaque_span or span
                if arg.star == "**" and is_name_or_attribute(arg.value):
                    qname = self._qualify(arg.value)
                    if qname is not None:
                        spreads.append((qname, opaque, span))
                elif not arg.star and entry.positional is None:
                    entry.positional = span
            else:
                field = EntryField(arg.keyword, self.value(arg.value, at), self.spans.keyword(arg, at))
                entry.fields.append(field)
        entry.spreads = tuple(spreads)
        return entry

    def entry_from_dict(self, node: ast.Dict, at: Cursor) -> Entry:
        entry = Entry("dict", self.spans.at(node, at), [])
        for element_key, element_value in zip(node.keys, node.values):
            if element_key is None:
                opaque = f"**{dotted(element_value) or '...'}"
                entry.opaque.append(opaque)
                span = self.spans.spread(element_value, at)
                entry.opaque_span = entry.opaque_span or span
                qname = self._qualify(element_value) if is_name_or_attribute(element_value) else None
                if qname is not None:
                    entry.spreads += ((qname, opaque, span),)
                continue
            key = string_value(element_key)
            if not isinstance(key, str):
                entry.opaque.append("a non-literal key")
                entry.opaque_span = entry.opaque_span or self.spans.at(element_key, at)
                continue
            entry.fields.append(EntryField(key, self.value(element_value, at), self.spans.at(element_key, at)))
        return entry

    def contract_call_assumptions(self, node: ast.AST) -> Assumptions | None:
        """None when ``node`` is no ``ErrorContract(...)``, else what recognising it assumed
        (nothing for the runtime's own; a re-export through a project module otherwise)."""
        if type(node) is not ast.Call:
            return None
        api, assumes = self.names.api_of(self._qualify(node.func))
        return assumes if api == "ErrorContract" else None

    def contract_item(self, node: ast.expr, at: Cursor) -> Item:
        if type(node) is ast.Starred:
            return SpreadItem(self.contract_expr(node.value, at), self.spans.at(node, at))
        value = node
        assumes = self.contract_call_assumptions(value)
        if assumes is not None:
            return EntryItem(self.entry_from_call(value, at, assumes))  # type: ignore[arg-type]  # contract_call_assumptions() is not None only for a call
        if type(value) is ast.Dict:
            return EntryItem(self.entry_from_dict(value, at))
        if is_name_or_attribute(value) and not is_constant_name(value):
            qname = self._qualify(value)
            if qname is not None:
                return RefItem(qname, self.spans.at(value, at))
        # ``None``, ``True``, ``False`` are no entry, whatever was meant (FL102, never FL190).
        invalid = is_constant_name(value) or not isinstance(
            value, (ast.Call, ast.Subscript, ast.Attribute, ast.Name, ast.IfExp)
        )
        if type(value) is ast.Call:
            # A runtime object that is not ErrorContract (say ``tool_error(...)``) is surely wrong.
            invalid = self.names.runtime_api(self.names.qualify(value.func)) is not None
        return BadItem(describe(value), self.spans.at(value, at), invalid)

    def contract_expr(self, node: ast.expr, at: Cursor) -> ContractExpr:
        kind = type(node)
        if kind is ast.List or kind is ast.Tuple:
            return ListExpr([self.contract_item(e, at) for e in node.elts], self.spans.at(node, at))  # type: ignore[attr-defined]  # kind is ast.List or kind is ast.Tuple above; mypy does not narrow through kind = type(...)
        if kind is ast.BinOp and type(node.op) is ast.Add:  # type: ignore[attr-defined]  # kind is ast.BinOp and type(node.op) is ast.Add; mypy does not narrow through kind = type(...)
            parts = [self.contract_expr(node.left, at), self.contract_expr(node.right, at)]  # type: ignore[attr-defined]  # kind is ast.BinOp and type(node.op) is ast.Add above; mypy does not narrow through kind = type(...)
            return ConcatExpr(parts, self.spans.at(node, at))
        if kind is ast.Call and dotted(node.func) in ("list", "tuple") and len(args_of(node)) == 1:  # type: ignore[attr-defined,arg-type,operator]  # kind is ast.Call; mypy does not narrow through kind = type(...)
            return self.contract_expr(args_of(node)[0].value, at)  # type: ignore[arg-type]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
        if is_name_or_attribute(node) and not is_constant_name(node):
            qname = self._qualify(node)
            if qname is not None:
                return RefExpr(qname, self.spans.at(node, at))
        if self.contract_call_assumptions(node) == ():
            return BadExpr("a single ErrorContract (wrap it in a list)", self.spans.at(node, at), True)
        return BadExpr(describe(node), self.spans.at(node, at), _not_a_list(node))

    def binding(self, node: ast.expr, at: Cursor) -> Binding | None:
        """What a module-level ``NAME = <node>`` contributes for other definitions to resolve."""
        kind = type(node)
        if kind is ast.List or kind is ast.Tuple or kind is ast.BinOp:
            if kind is ast.BinOp and type(node.op) is not ast.Add:  # type: ignore[attr-defined]  # kind is ast.BinOp and type(node.op) is not ast.Add; mypy does not narrow through kind = type(...)
                return None
            return self.contract_expr(node, at)
        assumes = self.contract_call_assumptions(node)
        if assumes is not None:
            return self.entry_from_call(node, at, assumes)  # type: ignore[arg-type]  # kind is ast.BinOp and type(node.op) is not ast.Add above; mypy does not narrow through kind = type(...)
        if kind is ast.Dict:
            return self.entry_from_dict(node, at)  # type: ignore[arg-type]  # kind is ast.Dict above; mypy does not narrow through kind = type(...)
        if (
            (is_string(node) and (kind is not ast.JoinedStr or is_concatenated(node, self.spans)))  # type: ignore[arg-type]  # kind is ast.JoinedStr
            or kind is ast.UnaryOp
            or (
                kind is ast.Constant and type(node.value) is int  # type: ignore[attr-defined]  # kind is ast.Constant; mypy does not narrow through kind = type(...)
            )
        ):
            return self.value(node, at)
        if is_name_or_attribute(node):
            qname = self._qualify(node)
            if qname is not None and self.names.code_member(qname) is None:
                return RefExpr(qname, self.spans.at(node, at))
            return self.value(node, at)
        if self._member_lookup(node, self.scope) is not None:  # ``CODE = JsonRpcErrorCode(-32001)``
            return self.value(node, at)
        return None

    def handler_target(self, node: ast.expr, scope: Scope | None) -> ast.expr:
        """The function a handler expression stands for: ``functools.partial(fn, ...)`` is ``fn``
        (its ``func``, DESIGN §12.3); anything else is itself."""
        while (
            type(node) is ast.Call
            and args_of(node)
            and not args_of(node)[0].keyword
            and not args_of(node)[0].star
            and self.names.qualify(node.func, scope) == "functools.partial"
        ):
            node = args_of(node)[0].value
        return node


def _int_literal(node: ast.AST | None) -> int | None:
    """The value of ``42`` or ``-42``."""
    value = int_value(node)
    if value is not None:
        return value
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        value = int_value(node.operand)
        return -value if value is not None else None
    return None
