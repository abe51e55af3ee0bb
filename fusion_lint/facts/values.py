"""Values, contract entries and contract expressions as written (DESIGN §4 "Contracts", "Codes")."""
from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from mcp_fusion import JsonRpcErrorCode, code_name, coerce_code, is_valid_code

from ..positions import Cursor, SpanRegistry
from .model import (
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
from .names import Names, Scope
from .syntax import describe, dotted, is_bytes, is_constant_name, string_value

# What cannot be a contract at all, written where one is expected (FL100 rather than FL190).
_NOT_A_LIST = (
    cst.Dict, cst.Set, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
    cst.Integer, cst.Float, cst.Name, cst.DictComp, cst.SetComp, cst.Lambda,
)  # fmt: skip


class Values:
    def __init__(self, names: Names, spans: SpanRegistry):
        self.names = names
        self.spans = spans
        # While a class body is read (its attributes, its methods' decorators): the names it binds,
        # which its own expressions see, as Python's class scope does (``errors=ERRORS``).
        self.scope: Optional[Scope] = None

    def _qualify(self, node: cst.CSTNode) -> Optional[str]:
        return self.names.qualify(node, self.scope)

    def value(self, node: cst.BaseExpression, at: Cursor) -> Value:
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
        if isinstance(node, cst.Float):
            return Value("float", node.evaluated_value, span)
        if is_constant_name(node):
            assert isinstance(node, cst.Name)
            if node.value == "None":
                return Value("none", None, span)
            return Value("bool", node.value == "True", span)
        if isinstance(node, (cst.Name, cst.Attribute)):
            qname = self._qualify(node)
            member = self.names.code_member(qname)
            if member is not None:
                return Value("code", member, span)
            if qname is not None:
                return Value("ref", qname, span)
        looked_up = self._member_lookup(node, self.scope)
        if looked_up is not None and not looked_up[1]:  # ``JsonRpcErrorCode(-32001)``, ``JsonRpcErrorCode["NOT_FOUND"]``
            member_or_number = looked_up[0]
            if isinstance(member_or_number, int):  # a number that is no member's value (FL104)
                return Value("int", member_or_number, span)
            return Value("code", member_or_number, span)
        if isinstance(node, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
            return Value("collection", describe(node), span)
        return Value("expr", describe(node), span)

    def code_of(self, node: Optional[cst.CSTNode], scope: Optional[Scope]) -> tuple[Optional[str], Assumptions]:
        """The code ``node`` gives, by name: a member through any alias, its int value,
        ``JsonRpcErrorCode(<int>)``, or a string code (a member's name is the member; a canonical or
        custom ``UPPER_SNAKE_CASE`` code is itself, DESIGN §3.1); and what recognising it assumed."""
        if node is None:
            return None, ()
        if isinstance(node, (cst.Name, cst.Attribute)):
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
            return looked_up
        return None, ()

    def _member_lookup(self, node: cst.CSTNode, scope: Optional[Scope]) -> Optional[tuple[Union[str, int], Assumptions]]:
        """``JsonRpcErrorCode(<int>)`` (the member of that value, or the int when no member has it)
        and ``JsonRpcErrorCode["NAME"]`` (the name), through any alias of the enum."""
        if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
            owner, key = node.func, node.args[0].value
            number = _int_literal(key)
            if number is None:
                return None
        elif isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            owner, key = node.value, node.slice[0].slice.value
            number = None
        else:
            return None
        if not isinstance(owner, (cst.Name, cst.Attribute)):
            return None
        api, assumes = self.names.api_of(self.names.qualify(owner, scope))
        if api != "JsonRpcErrorCode":
            return None
        if number is not None:
            return (JsonRpcErrorCode(number).name if is_valid_code(number) else number), assumes
        name = string_value(key)
        return (name, assumes) if isinstance(name, str) else None

    def call_layout(self, call: cst.Call, at: Cursor) -> CallLayout:
        arguments = tuple(
            Argument(
                self.spans.at(arg, at),
                self.spans.at(arg.value, at),
                arg.keyword.value if arg.keyword is not None else None,
                arg.star,
            )
            for arg in call.args
        )
        return CallLayout(self.spans.at(call, at), self.spans.at(call.func, at), arguments)

    # ----- contract entries -----------------------------------------------------------------------

    def entry_from_call(self, call: cst.Call, at: Cursor, assumes: Assumptions = ()) -> Entry:
        entry = Entry("call", self.spans.at(call, at), [], assumes=assumes)
        spreads = []
        for arg in call.args:
            if arg.star or arg.keyword is None:
                opaque = f"{arg.star}{dotted(arg.value) or '...'}" if arg.star else "a positional argument"
                entry.opaque.append(opaque)
                span = self.spans.at(arg, at)
                entry.opaque_span = entry.opaque_span or span
                if arg.star == "**" and isinstance(arg.value, (cst.Name, cst.Attribute)):
                    qname = self._qualify(arg.value)
                    if qname is not None:
                        spreads.append((qname, opaque, span))
                elif not arg.star and entry.positional is None:
                    entry.positional = span
            else:
                field = EntryField(arg.keyword.value, self.value(arg.value, at), self.spans.at(arg.keyword, at))
                entry.fields.append(field)
        entry.spreads = tuple(spreads)
        return entry

    def entry_from_dict(self, node: cst.Dict, at: Cursor) -> Entry:
        entry = Entry("dict", self.spans.at(node, at), [])
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):
                opaque = f"**{dotted(element.value) or '...'}"
                entry.opaque.append(opaque)
                span = self.spans.at(element, at)
                entry.opaque_span = entry.opaque_span or span
                qname = self._qualify(element.value) if isinstance(element.value, (cst.Name, cst.Attribute)) else None
                if qname is not None:
                    entry.spreads += ((qname, opaque, span),)
                continue
            key = string_value(element.key)
            if not isinstance(key, str):
                entry.opaque.append("a non-literal key")
                entry.opaque_span = entry.opaque_span or self.spans.at(element.key, at)
                continue
            entry.fields.append(EntryField(key, self.value(element.value, at), self.spans.at(element.key, at)))
        return entry

    def contract_call_assumptions(self, node: cst.CSTNode) -> Optional[Assumptions]:
        """None when ``node`` is no ``ErrorContract(...)``, else what recognising it assumed
        (nothing for the runtime's own; a re-export through a project module otherwise)."""
        if not isinstance(node, cst.Call):
            return None
        api, assumes = self.names.api_of(self._qualify(node.func))
        return assumes if api == "ErrorContract" else None

    def contract_item(self, node: cst.BaseElement, at: Cursor) -> Item:
        value = node.value
        if isinstance(node, cst.StarredElement):
            return SpreadItem(self.contract_expr(value, at), self.spans.at(node, at))
        assumes = self.contract_call_assumptions(value)
        if assumes is not None:
            assert isinstance(value, cst.Call)
            return EntryItem(self.entry_from_call(value, at, assumes))
        if isinstance(value, cst.Dict):
            return EntryItem(self.entry_from_dict(value, at))
        if isinstance(value, (cst.Name, cst.Attribute)) and not is_constant_name(value):
            qname = self._qualify(value)
            if qname is not None:
                return RefItem(qname, self.spans.at(value, at))
        # ``None``, ``True``, ``False`` are no entry, whatever was meant (FL102, never FL190).
        invalid = is_constant_name(value) or not isinstance(value, (cst.Call, cst.Subscript, cst.Attribute, cst.Name, cst.IfExp))
        if isinstance(value, cst.Call):
            # A runtime object that is not ErrorContract (say ``tool_error(...)``) is surely wrong.
            invalid = self.names.runtime_api(self.names.qualify(value.func)) is not None
        return BadItem(describe(value), self.spans.at(value, at), invalid)

    def contract_expr(self, node: cst.BaseExpression, at: Cursor) -> ContractExpr:
        if isinstance(node, (cst.List, cst.Tuple)):
            return ListExpr([self.contract_item(e, at) for e in node.elements], self.spans.at(node, at))
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            parts = [self.contract_expr(node.left, at), self.contract_expr(node.right, at)]
            return ConcatExpr(parts, self.spans.at(node, at))
        if isinstance(node, cst.Call) and dotted(node.func) in ("list", "tuple") and len(node.args) == 1:
            return self.contract_expr(node.args[0].value, at)
        if isinstance(node, (cst.Name, cst.Attribute)) and not is_constant_name(node):
            qname = self._qualify(node)
            if qname is not None:
                return RefExpr(qname, self.spans.at(node, at))
        if self.contract_call_assumptions(node) == ():
            return BadExpr("a single ErrorContract (wrap it in a list)", self.spans.at(node, at), True)
        return BadExpr(describe(node), self.spans.at(node, at), isinstance(node, _NOT_A_LIST))

    def binding(self, node: cst.BaseExpression, at: Cursor) -> Optional[Binding]:
        """What a module-level ``NAME = <node>`` contributes for other definitions to resolve."""
        if isinstance(node, (cst.List, cst.Tuple, cst.BinaryOperation)):
            if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.Add):
                return None
            return self.contract_expr(node, at)
        assumes = self.contract_call_assumptions(node)
        if assumes is not None:
            assert isinstance(node, cst.Call)
            return self.entry_from_call(node, at, assumes)
        if isinstance(node, cst.Dict):
            return self.entry_from_dict(node, at)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.UnaryOperation)):
            return self.value(node, at)
        if isinstance(node, (cst.Name, cst.Attribute)):
            qname = self._qualify(node)
            if qname is not None and self.names.code_member(qname) is None:
                return RefExpr(qname, self.spans.at(node, at))
            return self.value(node, at)
        if self._member_lookup(node, self.scope) is not None:  # ``CODE = JsonRpcErrorCode(-32001)``
            return self.value(node, at)
        return None

    def handler_target(self, node: cst.BaseExpression, scope: Optional[Scope]) -> cst.BaseExpression:
        """The function a handler expression stands for: ``functools.partial(fn, ...)`` is ``fn``
        (its ``func``, DESIGN §12.3); anything else is itself."""
        while (
            isinstance(node, cst.Call) and node.args and not node.args[0].keyword and not node.args[0].star
            and self.names.qualify(node.func, scope) == "functools.partial"
        ):  # fmt: skip
            node = node.args[0].value
        return node


def _int_literal(node: cst.CSTNode) -> Optional[int]:
    """The value of ``42`` or ``-42``."""
    if isinstance(node, cst.Integer):
        value = node.evaluated_value
        return value if isinstance(value, int) else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        value = node.expression.evaluated_value
        return -value if isinstance(value, int) else None
    return None
