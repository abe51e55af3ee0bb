"""Expressions and attributes for the census interpreter (mixed into ``UnitInterpreter``).

Every expression evaluates to one abstract value (``census_values``); what cannot be known is ``UNKNOWN``,
a string with unknown parts a ``PartialStr``. Attribute access follows modules, namespace packages, classes
and their bases (the unit's, in any file), instances and servers; a server's registration methods come back
as ``MethodV`` for ``census_calls`` to apply.
"""

from __future__ import annotations

import ast
from typing import Any

from census_model import Frame
from census_values import (
    ADD_METHODS,
    DECORATOR_METHODS,
    LOWLEVEL,
    LOWLEVEL_DECORATORS,
    MOUNT_METHODS,
    SERVER_CLASSES,
    UNKNOWN,
    BoundV,
    ClsV,
    ComponentV,
    Const,
    DictMethodV,
    DictV,
    Ext,
    FuncV,
    InstV,
    ListMethodV,
    MethodV,
    ModV,
    NsV,
    Param,
    PartialStr,
    Seq,
    ServerV,
    UnionV,
    Value,
    options,
    union,
)

MAX_UNROLL = 2000


class ExprsMixin:
    # -- expressions ------------------------------------------------------------------------------

    def ev(self, node: ast.AST | None, frame: Frame) -> Value:
        if node is None:
            return UNKNOWN
        method = getattr(self, "ev_" + type(node).__name__, None)
        return method(node, frame) if method is not None else UNKNOWN

    def ev_Constant(self, node, frame):
        return Const(node.value)

    def ev_JoinedStr(self, node, frame):
        parts, partial = [], False
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            inner = self.ev(value.value, frame) if isinstance(value, ast.FormattedValue) else UNKNOWN
            if isinstance(inner, Const) and value.format_spec is None:
                parts.append(str(inner.value))
            elif isinstance(inner, PartialStr):
                parts.append(inner.pattern)
                partial = True
            else:
                parts.append("{?}")
                partial = True
        text = "".join(parts)
        return PartialStr(text) if partial else Const(text)

    def ev_Name(self, node, frame):
        return self.lookup(node.id, frame)

    def ev_Attribute(self, node, frame):
        owner = self.ev(node.value, frame)
        values = [self.getattr_value(option, node.attr, node.value) for option in options(owner)]
        return union(values) if len(values) > 1 else values[0]

    def ev_Call(self, node, frame):
        func = self.ev(node.func, frame)
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.ev(arg.value, frame)
                args.extend(inner.items if isinstance(inner, Seq) else [UNKNOWN])
            else:
                args.append(self.ev(arg, frame))
        kwargs = {}
        for keyword in node.keywords:
            value = self.ev(keyword.value, frame)
            if keyword.arg is None:
                if isinstance(value, DictV):
                    for k, v in value.items:
                        if isinstance(k, Const) and isinstance(k.value, str):
                            kwargs[k.value] = v
                continue
            kwargs[keyword.arg] = value
        self.site_stack.append(f"{frame.module.rel}:{node.lineno}")
        try:
            return self.call_value(func, args, kwargs, node, frame)
        finally:
            self.site_stack.pop()

    def ev_List(self, node, frame):
        items = []
        approximate = False
        for element in node.elts:
            if isinstance(element, ast.Starred):
                inner = self.ev(element.value, frame)
                if isinstance(inner, Seq):
                    items.extend(inner.items)
                    approximate |= inner.approximate
                else:
                    approximate = True
            else:
                items.append(self.ev(element, frame))
        return Seq(items, approximate)

    ev_Tuple = ev_List
    ev_Set = ev_List

    def ev_Dict(self, node, frame):
        items = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                inner = self.ev(value, frame)
                if isinstance(inner, DictV):
                    items.extend(inner.items)
                continue
            items.append((self.ev(key, frame), self.ev(value, frame)))
        return DictV(items)

    def ev_BinOp(self, node, frame):
        left, right = self.ev(node.left, frame), self.ev(node.right, frame)
        if isinstance(node.op, ast.Add):
            if isinstance(left, Seq) and isinstance(right, Seq):
                return Seq(left.items + right.items, left.approximate or right.approximate)
            if isinstance(left, Const) and isinstance(right, Const):
                try:
                    return Const(left.value + right.value)
                except TypeError:
                    return UNKNOWN
            if _stringish(left) or _stringish(right):
                return PartialStr(_pattern(left) + _pattern(right))
        if isinstance(node.op, ast.Mod) and isinstance(left, Const) and isinstance(left.value, str):
            return UNKNOWN
        return UNKNOWN

    def ev_IfExp(self, node, frame):
        return union([self.ev(node.body, frame), self.ev(node.orelse, frame)])

    def ev_BoolOp(self, node, frame):
        return union([self.ev(value, frame) for value in node.values])

    def ev_Await(self, node, frame):
        return self.ev(node.value, frame)

    def ev_NamedExpr(self, node, frame):
        value = self.ev(node.value, frame)
        self.assign(node.target, value, frame)
        return value

    def ev_Lambda(self, node, frame):
        prefix = frame.scope_name()
        func = FuncV(
            frame.module,
            node,
            f"{prefix}.<lambda>" if prefix != "<module>" else "<lambda>",
            closure=frame if frame.kind == "function" else None,
        )
        return func

    def ev_Subscript(self, node, frame):
        owner = self.ev(node.value, frame)
        if isinstance(owner, (ClsV, Ext)) and self.server_framework(owner):
            return owner  # MCPServer[AppState]: the generic alias constructs the same class
        key = self.ev(node.slice, frame)
        if isinstance(owner, Seq) and isinstance(key, Const) and isinstance(key.value, int):
            try:
                return owner.items[key.value]
            except IndexError:
                return UNKNOWN
        if isinstance(owner, DictV) and isinstance(key, Const):
            for k, v in reversed(owner.items):
                if isinstance(k, Const) and k.value == key.value:
                    return v
        return UNKNOWN

    def ev_ListComp(self, node, frame):
        if len(node.generators) != 1 or node.generators[0].is_async:
            return Seq([], approximate=True)
        generator = node.generators[0]
        elements = self.iter_values(self.ev(generator.iter, frame))
        if elements is None:
            return Seq([], approximate=True)
        inner = Frame(frame.module, "function", parent=frame, func=frame.func, cls=frame.cls)
        items = []
        for element in elements:
            self.assign(generator.target, element, inner)
            items.append(self.ev(node.elt, inner))
        return Seq(items, approximate=bool(generator.ifs))

    ev_GeneratorExp = ev_ListComp
    ev_SetComp = ev_ListComp

    def ev_DictComp(self, node, frame):
        return DictV([])

    def iter_values(self, value: Value) -> list | None:
        if isinstance(value, Seq):
            return list(value.items)[:MAX_UNROLL]
        if isinstance(value, DictV):
            return [k for k, _ in value.items][:MAX_UNROLL]
        if isinstance(value, UnionV) and all(isinstance(o, Seq) for o in value.options):
            return [item for o in value.options for item in o.items][:MAX_UNROLL]
        return None

    # -- attributes -------------------------------------------------------------------------------

    def getattr_value(self, owner: Value, attr: str, owner_node: ast.AST | None = None) -> Value:
        via_self = isinstance(owner_node, ast.Name) and owner_node.id == "self"
        if isinstance(owner, ModV):
            return self.module_global(owner.module, attr, owner.dotted)
        if isinstance(owner, NsV):
            return self.module_value(f"{owner.dotted}.{attr}", None)
        if isinstance(owner, Ext):
            return Ext(f"{owner.qual}.{attr}")
        if isinstance(owner, ClsV):
            found = self.class_attr(owner, attr)
            return found if found is not None else UNKNOWN
        if isinstance(owner, (InstV, ServerV)):
            if attr in owner.attrs:
                return owner.attrs[attr]
            cls = owner.cls
            found = self.class_attr(cls, attr) if cls is not None else None
            if isinstance(found, FuncV):
                if getattr(found, "static", False):
                    return found
                if getattr(found, "prop", False):
                    return self.call_function(found, [], {}, receiver=owner)
                return BoundV(owner, found, via_self=via_self)
            if found is not None:
                return found
            if isinstance(owner, ServerV) and _is_registration_method(owner, attr):
                return MethodV(owner, attr)
            return UNKNOWN
        if isinstance(owner, Param):
            if attr in DECORATOR_METHODS or attr in ADD_METHODS or attr in MOUNT_METHODS:
                return MethodV(owner, attr)
            return UNKNOWN
        if isinstance(owner, ComponentV):
            if attr == "fn":
                return owner.fn
            if attr == "name":
                return Const(owner.name) if owner.name else self.default_name_value(owner.fn)
            return UNKNOWN
        if isinstance(owner, Seq) and attr in ("append", "extend", "insert"):
            return ListMethodV(owner, attr)
        if isinstance(owner, DictV) and attr in ("items", "values", "keys", "get", "update"):
            return DictMethodV(owner, attr)
        if isinstance(owner, FuncV) and attr == "__name__":
            return Const(owner.name)
        return UNKNOWN

    def default_name_value(self, fn: Value) -> Value:
        name = self.handler_of(fn)[2]
        return Const(name) if name else UNKNOWN

    def class_attr(self, cls: Any, attr: str, seen: set | None = None) -> Value | None:
        if not isinstance(cls, ClsV):
            return None
        seen = seen if seen is not None else set()
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        if attr in cls.frame.vars:
            return cls.frame.vars[attr]
        for base in cls.bases:
            for option in options(base):
                found = self.class_attr(option, attr, seen)
                if found is not None:
                    return found
        return None

    def server_framework(self, cls: Value, seen: set | None = None) -> str | None:
        if isinstance(cls, Ext):
            return SERVER_CLASSES.get(cls.qual)
        if not isinstance(cls, ClsV):
            return None
        if id(cls) in self.class_fw_memo:
            return self.class_fw_memo[id(cls)]
        seen = seen if seen is not None else set()
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        result = None
        for base in cls.bases:
            for option in options(base):
                result = result or self.server_framework(option, seen)
        self.class_fw_memo[id(cls)] = result
        return result


def _stringish(value: Value) -> bool:
    return isinstance(value, PartialStr) or (isinstance(value, Const) and isinstance(value.value, str))


def _pattern(value: Value) -> str:
    if isinstance(value, PartialStr):
        return value.pattern
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value
    return "{?}"


def _is_registration_method(server: ServerV, attr: str) -> bool:
    if server.framework == LOWLEVEL:
        return attr in LOWLEVEL_DECORATORS
    return attr in DECORATOR_METHODS or attr in ADD_METHODS or attr in MOUNT_METHODS
