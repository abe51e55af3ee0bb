"""Definitions: ``@tool(...)``/``@resource(...)``/``@prompt(...)`` and ``tool(...)(fn)`` (DESIGN §4)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from ..positions import Cursor
from .model import Assumptions, Definition, FileFacts
from .names import DEFINERS, Names, Scope
from .syntax import argument_value, children, describe, keyword_argument, string_value
from .values import Values


class Definitions:
    def __init__(self, facts: FileFacts, names: Names, values: Values):
        self.facts = facts
        self.names = names
        self.values = values

    def definer(self, node: cst.CSTNode, scope: Optional[Scope] = None) -> tuple[Optional[str], Assumptions]:
        """``tool``/``resource``/``prompt`` when ``node`` is a call to one, and what that assumed."""
        if isinstance(node, cst.Call):
            api, assumes = self.names.api_of(self.names.qualify(node.func, scope))
            if api in DEFINERS:
                return api, assumes
        return None, ()

    def record(
        self,
        kind: str,
        call: cst.Call,
        at: Cursor,
        handler: Optional[str],
        handler_ref: Optional[str],
        assumes: Assumptions,
    ) -> None:
        spans, values = self.values.spans, self.values
        name_node = argument_value(call, 0, "uri_template" if kind == "resource" else "name")
        name = string_value(name_node) if name_node is not None else None
        name_ref = None
        if not isinstance(name, str) and isinstance(name_node, (cst.Name, cst.Attribute)):
            name_ref = self.names.qualify(name_node)  # ``@tool(NAME)``: resolved with the project's constants
        errors_arg = keyword_argument(call, "errors")
        self.facts.definitions.append(
            Definition(
                kind=kind,  # type: ignore[arg-type]
                name=name if isinstance(name, str) else None,
                span=spans.at(call, at),
                name_span=spans.at(name_node if name_node is not None else call, at),
                errors=values.contract_expr(errors_arg.value, at) if errors_arg is not None else None,
                errors_arg_span=spans.at(errors_arg, at) if errors_arg is not None else None,
                handler=handler,
                handler_ref=handler_ref,
                name_ref=name_ref,
                call=values.call_layout(call, at) if errors_arg is not None else None,
                assumes=assumes,
            )
        )

    def call_form(self, node: cst.Call, at: Cursor, scope: Optional[Scope]) -> bool:
        """``tool("x", ...)(handler)``: record it; True when ``node`` was one."""
        kind, assumes = self.definer(node.func, scope)
        if kind is None or not node.args:
            return False
        target = self.values.handler_target(node.args[0].value, scope)  # ``functools.partial(fn)`` is ``fn``
        handler = handler_ref = None
        if isinstance(target, cst.Name) and target.value in self.facts.functions:
            handler = target.value
        elif isinstance(target, (cst.Name, cst.Attribute)):
            qname = self.names.qualify(target, scope)
            module = self.names.module_name
            if qname is not None and qname.startswith(module + "."):
                handler = qname[len(module) + 1 :]
            else:
                handler_ref = qname
        assert isinstance(node.func, cst.Call)
        self.record(kind, node.func, at, handler, handler_ref, assumes)
        if handler is None and handler_ref is None:  # FL190 names it
            self.facts.definitions[-1].handler_unresolved = describe(target)
        return True

    def scan_module_expression(self, node: cst.CSTNode, at: Cursor) -> None:
        """Module-level code outside functions: only registering calls matter here."""
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call) and self.call_form(current, at, None):
                stack.extend(reversed(current.args[1:]))
                continue
            if isinstance(current, (cst.FunctionDef, cst.Lambda)):
                continue
            stack.extend(reversed(list(children(current))))

