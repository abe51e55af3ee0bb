"""What a function does: its fail sites, raises, except clauses, returns and calls (DESIGN §4).

Nested functions and lambdas belong to the function around them too (a handler's helper closure
is part of the handler). The walk looks only at the fields that can hold an expression or a
statement, which keeps it at a few percent of the parse.
"""
from __future__ import annotations

from contextlib import nullcontext

from dataclasses import dataclass
from typing import Optional, Protocol, Union

import libcst as cst

from mcp_fusion import FACTORY_CODES

from ..diagnostics import Span
from ..positions import Cursor, SpanRegistry
from .definitions import Definitions
from .model import (
    Assumptions,
    Construction,
    Except,
    FailSite,
    FileFacts,
    FunctionFacts,
    Raise,
    RaiseKind,
    Return,
    ServerRef,
    Suppressing,
    Shape,
    Try,
    Uses,
    Usage,
)
from .expressions import data_reason, literal_text, shape as value_shape, uses
from .names import Names, Scope
from .parameters import ParameterReading
from .values import Values
from .syntax import (
    LEAF_TYPES, argument, argument_value, children, contains_raise, dotted, if_branches, keyword_argument, rethrows,
    string_value,
)  # fmt: skip


FACTORY_FOR_CODE = {code.name: name for name, code in FACTORY_CODES.items()}
RUNTIME_RAISES = ("fail", "mcp_error", "factory", "tool_error")


class Module(Protocol):
    """What a function's walk needs of the module around it (``extract.ModuleExtractor``)."""

    names: Names
    values: Values
    spans: SpanRegistry
    definitions: Definitions
    needs_names: bool
    facts: FileFacts

    def function(self, node: cst.FunctionDef, prefix: str, outer: Optional["FunctionWalker"], at: Cursor,
                 top: bool = False) -> None: ...  # fmt: skip


@dataclass(slots=True)
class Raised:
    """What raising a call raises, read from the call (the statement's facts are added around it)."""

    kind: RaiseKind
    exception: Optional[str] = None
    code: Optional[str] = None
    factory: Optional[str] = None
    data_reason: Optional[str] = None
    has_cause: bool = False
    message: Optional[cst.BaseExpression] = None
    message_span: Optional[Span] = None  # placed where the call is (the runtime's raises only)
    data: Optional[cst.BaseExpression] = None
    assumes: Assumptions = ()


class FunctionWalker(ParameterReading):
    def __init__(self, ex: Module, node: cst.FunctionDef, facts: FunctionFacts, outer: Optional["FunctionWalker"]):
        self.ex = ex
        self.names = ex.names
        self.spans = ex.spans
        self.facts_stack = [facts] + (outer.facts_stack if outer else [])
        self.scope: Scope = dict(outer.scope) if outer else {}
        self.ctx_names: set[str] = set(outer.ctx_names) if outer else set()
        # Servers this function can register on: local variables, annotated parameters, and the
        # unannotated parameters that are one in a module importing a framework (DESIGN §12.2).
        self.servers: dict[str, ServerRef] = dict(outer.servers) if outer else {}
        self.loose_params: set[str] = set(outer.loose_params) if outer else set()
        self.param_names: set[str] = set(outer.param_names) if outer else set()
        self.fail_aliases: dict[str, str] = dict(outer.fail_aliases) if outer else {}
        # ``self.ctx`` where the class stores its context there (``self.ctx = ctx``, DESIGN §12.3).
        self.ctx_attributes: set[str] = set(outer.ctx_attributes) if outer else set()
        self.bound_errors: dict[str, Raised] = {}
        self.clauses: list[Except] = []  # the except clauses whose body is being walked, innermost last
        self.try_bodies: list[Try] = []  # the try statements whose body is being walked, innermost last
        self.awaits = 0  # awaits seen so far (a try body awaits when the count moved while walking it)
        self.qualprefix = facts.qualname + "."
        self.seen_calls: set[str] = set()
        if outer is None and "." in facts.qualname:
            self._bind_receiver(node, facts.qualname.rpartition(".")[0])
        self._find_context(node.params, facts)

    # A fact belongs to this function and to every function it is nested in.
    def _record(self, attribute: str, fact: object) -> None:
        for facts in self.facts_stack:
            getattr(facts, attribute).append(fact)

    # ----- statements ---------------------------------------------------------------------------

    def block(self, body: cst.CSTNode, at: Cursor) -> None:
        statements = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
        for stmt in statements:
            self.statement(stmt, at)

    def statement(self, stmt: cst.CSTNode, at: Cursor) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small_statement(small, at.inside(stmt))
            return
        if isinstance(stmt, cst.BaseSmallStatement):
            self.small_statement(stmt, at)
            return
        here = at.inside(stmt)
        if isinstance(stmt, cst.FunctionDef):
            self.ex.function(stmt, prefix=self.qualprefix, outer=self, at=here)
            return
        if isinstance(stmt, cst.ClassDef):
            for inner in stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ():
                self.statement(inner, here)
            return
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            self.try_statement(stmt, here)
            return
        if isinstance(stmt, (cst.With, cst.For)) and stmt.asynchronous is not None:
            self.awaits += 1
        if isinstance(stmt, cst.With) and self._suppressing(stmt, here):
            return
        # Any other compound statement: its header expressions, then its blocks.
        with self.ex.definitions.looping(stmt) if isinstance(stmt, cst.For) else nullcontext():
            for child in children(stmt):
                if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                    self.block(child, here)
                elif isinstance(child, cst.If):
                    self.statement(child, here)
                elif isinstance(child, (cst.Else, cst.MatchCase, cst.Finally)):
                    self._clause(child, here)
                else:
                    self.expression(child, here)

    def _suppressing(self, stmt: cst.With, at: Cursor) -> bool:
        """``with contextlib.suppress(<types>):``: what it silences, and (after its body is walked, by
        the awaits counted meanwhile) whether cancellation can arrive inside it."""
        for item in stmt.items:
            call = item.item
            if isinstance(call, cst.Call) and self.names.qualify(call.func, self.scope) == "contextlib.suppress":
                types = tuple(self.names.qualify(arg.value, self.scope) or "" for arg in call.args)
                fact = Suppressing(self.spans.at(call, at), types, awaits=stmt.asynchronous is not None)
                before = self.awaits
                self.block(stmt.body, at)
                fact.awaits = fact.awaits or self.awaits > before
                self._record("suppressing", fact)
                for other in stmt.items:
                    self.expression(other.item, at)
                return True  # the statement is walked
        return False

    def _clause(self, node: cst.CSTNode, at: Cursor) -> None:
        for child in children(node):
            if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                self.block(child, at)
            elif isinstance(child, cst.MatchPattern):
                continue  # ``case JsonRpcErrorCode.NOT_FOUND:`` is a comparison, never a raise
            else:
                self.expression(child, at)

    def try_statement(self, stmt: Union[cst.Try, cst.TryStar], at: Cursor) -> None:
        # The clauses are known before the body is walked (a raise in the body may be caught by
        # them); whether the body awaits is known after.
        clauses = [self._except_clause(handler, at) for handler in stmt.handlers]
        fact = Try(tuple(clauses), awaits=False)
        before = self.awaits
        self.try_bodies.append(fact)
        self.block(stmt.body, at)
        self.try_bodies.pop()
        fact.awaits = self.awaits > before
        for clause in clauses:
            clause.try_awaits = fact.awaits
        self._record("tries", fact)
        for handler, clause in zip(stmt.handlers, clauses):
            self._record("excepts", clause)
            if handler.type is not None:
                self.expression(handler.type, at.inside(handler))
            self.clauses.append(clause)
            self.block(handler.body, at.inside(handler))
            self.clauses.pop()
        for tail in (stmt.orelse, stmt.finalbody):
            if tail is not None:
                self.block(tail.body, at)

    def _except_clause(self, handler: Union[cst.ExceptHandler, cst.ExceptStarHandler], at: Cursor) -> Except:
        here = at.inside(handler)
        types: tuple[str, ...] = ()
        if handler.type is not None:
            elements = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
            types = tuple(
                self.names.qualify(element.value if isinstance(element, cst.Element) else element, self.scope) or ""
                for element in elements
            )
        name = handler.name.name.value if handler.name is not None and isinstance(handler.name.name, cst.Name) else ""
        return Except(
            span=self.spans.at(handler, here),
            type_span=self.spans.at(handler.type, here) if handler.type is not None else None,
            types=types,
            name=name,
            reraises=contains_raise(handler.body),
            try_awaits=False,
            rethrows=rethrows(handler.body, name),
        )

    def small_statement(self, small: cst.CSTNode, at: Cursor) -> None:
        if isinstance(small, cst.Raise):
            self.raise_statement(small, at)
            return
        if isinstance(small, cst.Return):
            self.return_statement(small, at)
            return
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            self.names.bind_imports(small, self.scope)
            return
        if isinstance(small, cst.Expr):
            value = small.value
            inner = value.expression if isinstance(value, cst.Await) else value
            if isinstance(inner, cst.Call):
                if inner is not value:
                    self.awaits += 1
                self.call(inner, at, usage="discarded")
                return
            self.expression(value, at)
            return
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            self._assignment(small, at)
            return
        self.expression(small, at)

    def _assignment(self, small: Union[cst.Assign, cst.AnnAssign], at: Cursor) -> None:
        value = small.value
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        names = [t.value for t in targets if isinstance(t, cst.Name)]
        if value is not None and names:
            method = self._fail_method(value)
            if method is not None:  # ``fail = ctx.fail``
                for name in names:
                    self.fail_aliases[name] = method
                return
            if isinstance(value, cst.Call):
                server = self.names.server_of_call(value, self.scope)
                for name in names:  # ``server = Server("name")`` inside a function
                    if server is not None:
                        self.servers[name] = server
                    else:
                        self.servers.pop(name, None)
                raised = self.classify(value, at)
                for name in names:  # ``err = not_found(...); raise err``
                    self.bound_errors[name] = raised
                if raised.kind == "call":
                    cls = self.names.instance_class(value, self.scope)
                    for name in names:  # ``svc = InvoiceService()``: ``svc.pay()`` is followed
                        if cls is not None:
                            self.scope[name] = cls
                        else:
                            self.scope.pop(name, None)
        for target in targets:
            if not isinstance(target, cst.Name):
                self.expression(target, at)
        if value is not None:
            self.expression(value, at)
            if self.clauses:  # ``msg = str(e)`` inside an except clause: what ``msg`` is built from
                caught = tuple(clause.name for clause in self.clauses if clause.name)
                span = self.spans.at(small, at)  # filled once the module is rendered
                for name in names:
                    self.facts_stack[0].assigned_in_except[name] = (uses(value, self.names, self.scope), caught, span)

    def raise_statement(self, node: cst.Raise, at: Cursor) -> None:
        if isinstance(node.exc, cst.IfExp):  # ``raise (a(...) if c else b(...))``: each branch is a raise
            self.expression(node.exc.test, at)
            for branch in if_branches(node.exc):
                self._raise(node, branch, at)
            return
        self._raise(node, node.exc, at)

    def _raise(self, node: cst.Raise, exc: Optional[cst.BaseExpression], at: Cursor) -> None:
        in_except = bool(self.clauses)
        caught = {clause.name for clause in self.clauses if clause.name}
        raised: Raised
        call = None
        if exc is None:
            raised = Raised("reraise")
        elif isinstance(exc, cst.Call):
            raised = self.classify(exc, at)
            if raised.kind in RUNTIME_RAISES:
                call = self.ex.values.call_layout(exc, at)
            self.call(exc, at, usage="raised")
        elif isinstance(exc, cst.Name) and exc.value in self.bound_errors:
            raised = self.bound_errors[exc.value]
        elif isinstance(exc, cst.Name) and in_except and exc.value in caught:
            raised = Raised("reraise")
        elif isinstance(exc, (cst.Name, cst.Attribute)):
            raised = Raised("name", exception=self.names.qualify(exc, self.scope))
        else:
            self.expression(exc, at)
            raised = Raised("other")
        cause = node.cause.item if node.cause is not None else None
        if cause is not None:
            self.expression(cause, at)
        self._record(
            "raises",
            Raise(
                span=self.spans.at(node, at),
                kind=raised.kind,
                exception=raised.exception,
                code=raised.code,
                factory=raised.factory,
                data_reason=raised.data_reason,
                clauses=tuple(reversed(self.clauses)),
                tries=tuple(reversed(self.try_bodies)),
                has_cause=raised.has_cause or cause is not None,
                cause_is_none=isinstance(cause, cst.Name) and cause.value == "None",
                call=call,
                message_span=raised.message_span,
                message=uses(raised.message, self.names, self.scope) if raised.message is not None else None,
                data=uses(raised.data, self.names, self.scope) if raised.data is not None else None,
                assumes=raised.assumes,
                text=literal_text(raised.message, self.names, self.scope),
            ),
        )

    def return_statement(self, node: cst.Return, at: Cursor) -> None:
        value = node.value
        if value is not None:
            self.expression(value, at)
        shape = value_shape(value, 2, self.names, self.scope) if value is not None else Shape("none")
        # What it is built from matters where it may be built from a caught exception: inside an
        # except clause, or a name assigned in one (``msg = str(e)`` ... ``return msg``).
        assigned = self.facts_stack[0].assigned_in_except
        from_except = self.clauses or (isinstance(value, cst.Name) and value.value in assigned)
        built = uses(value, self.names, self.scope) if value is not None and from_except else Uses()
        self._record("returns", Return(self.spans.at(node, at), shape, built, tuple(reversed(self.clauses))))

    # ----- expressions ---------------------------------------------------------------------------

    def expression(self, node: cst.CSTNode, at: Cursor) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call):
                self.call(current, at, usage="other")
                continue
            if isinstance(current, LEAF_TYPES):
                continue
            if isinstance(current, cst.Await) or (isinstance(current, cst.CompFor) and current.asynchronous):
                self.awaits += 1
            stack.extend(reversed(list(children(current))))

    def _fail_method(self, func: cst.CSTNode) -> Optional[str]:
        """``fail``/``recovery_for`` when ``func`` is ``ctx.fail``, ``ctx.recovery_for`` or an alias."""
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            if func.value.value in self.ctx_names and func.attr.value in ("fail", "recovery_for"):
                return func.attr.value
        if isinstance(func, cst.Name) and func.value in self.fail_aliases:
            return self.fail_aliases[func.value]
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        # The runtime's module-level ``fail``/``recovery_for``, read from an import (``c.fail`` on
        # a parameter ``c`` is someone else's method).
        if isinstance(root, cst.Name) and (root.value in self.names.aliases or isinstance(func, cst.Name)):
            api = self.names.api_of(self.names.qualify(func, self.scope))[0]
            if api in ("fail", "recovery_for"):
                return api
        if (
            self.ctx_attributes and isinstance(func, cst.Attribute) and func.attr.value in ("fail", "recovery_for")
            and dotted(func.value) in self.ctx_attributes
        ):  # fmt: skip
            return func.attr.value
        return None

    def classify(self, call: cst.Call, at: Cursor) -> Raised:
        """What raising this call would raise: its kind, code, data reason, cause and message."""
        raised = self._classify(call)
        if raised.kind in RUNTIME_RAISES and raised.message is not None:
            raised.message_span = self.spans.at(raised.message, at)
        return raised

    def _classify(self, call: cst.Call) -> Raised:
        method = self._fail_method(call.func)
        cause = keyword_argument(call, "cause") is not None
        if method == "fail":
            return Raised("fail", has_cause=cause, message=argument_value(call, 1, "message"),
                          data=argument_value(call, 2, "data"))  # fmt: skip
        root = call
        while isinstance(root.func, cst.Attribute) and isinstance(root.func.value, cst.Call):
            root = root.func.value  # ``tool_error(...).suggest(...)`` chains
        qname = self.names.qualify(root.func, self.scope)
        api, assumes = self.names.api_of(qname)
        if api == "McpError":
            code, code_assumes = self.ex.values.code_of(argument_value(call, 0, "code"), self.scope)
            data = argument_value(call, 2, "data")
            return Raised("mcp_error", exception=qname, code=code, data_reason=data_reason(data),
                          has_cause=cause, message=argument_value(call, 1, "message"), data=data,
                          assumes=assumes + code_assumes)  # fmt: skip
        if api in FACTORY_CODES:
            data = argument_value(call, 1, "data")
            return Raised("factory", exception=qname, code=FACTORY_CODES[api].name, factory=api,
                          data_reason=data_reason(data), has_cause=cause,
                          message=argument_value(call, 0, "message"), data=data, assumes=assumes)  # fmt: skip
        if api == "tool_error":
            code, code_assumes = self.ex.values.code_of(argument_value(root, 0, "code"), self.scope)
            return Raised("tool_error", exception=qname, code=code, assumes=assumes + code_assumes)
        first = argument(call, 0, "message")
        return Raised("call", exception=qname, has_cause=cause, message=first.value if first is not None else None)

    def call(self, node: cst.Call, at: Cursor, usage: Usage) -> None:
        method = self._fail_method(node.func)
        if method is not None:
            reason_node = argument_value(node, 0, "reason")
            reason = string_value(reason_node) if reason_node is not None else None
            site = FailSite(
                method=method,  # type: ignore[arg-type]
                reason=reason if isinstance(reason, str) else None,
                span=self.spans.at(node, at),
                reason_span=self.spans.at(reason_node, at) if reason_node is not None else None,
                usage=usage,
                written=dotted(node.func) or method,
                reason_ref=self.names.qualify(reason_node, self.scope) if isinstance(reason_node, (cst.Name, cst.Attribute)) else None,
            )
            self._record("fail_sites", site)
        elif self.ex.definitions.call_form(node, at, self.scope, self):
            pass
        else:
            self._wrapper_call(node.func)
            qname = self.names.qualify(node.func, self.scope) or self._method_of_instance(node.func)
            api, assumes = self.names.api_of(qname)
            if api == "McpError":
                self._construction(node, at, assumes)
            # A call through a re-export is also an ordinary call, in case the project view finds
            # that the name is the project's own function after all.
            if (api is None or assumes) and qname is not None:
                if qname not in self.seen_calls:
                    self.seen_calls.add(qname)
                    for facts in self.facts_stack:
                        if qname not in facts.calls:
                            facts.calls.append(qname)
                self._guard(qname)
        # Arguments, and the callee expression itself, may hold further calls and lambdas.
        for arg in node.args:
            self.expression(arg.value, at)
        if not isinstance(node.func, cst.Name):
            inner = node.func.value if isinstance(node.func, cst.Attribute) else node.func
            if not isinstance(inner, cst.Name):
                self.expression(inner, at)

    def _guard(self, qname: str) -> None:
        """Where a call sits: in which try bodies (a raise in the callee may be caught there)."""
        facts = self.facts_stack[0]
        if self.try_bodies:
            facts.guarded_calls.setdefault(qname, []).append(tuple(reversed(self.try_bodies)))
        else:
            facts.unguarded_calls.add(qname)

    def _method_of_instance(self, func: cst.BaseExpression) -> Optional[str]:
        """``Lookup(ctx).find``: the method ``find`` of the class instantiated (followed like ``x.find``
        after ``x = Lookup(ctx)``); ``super().find`` in a method: ``find`` of the class's first base
        (looked up through that base's MRO; exact for single inheritance)."""
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Call):
            return None
        if isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
            owner = self.facts_stack[-1].qualname.rpartition(".")[0]
            cls = self.ex.facts.classes.get(owner)
            return f"{cls.bases[0]}.{func.attr.value}" if cls is not None and cls.bases and cls.bases[0] else None
        cls_name = self.names.instance_class(func.value, self.scope)
        return f"{cls_name}.{func.attr.value}" if cls_name is not None else None

    def _construction(self, node: cst.Call, at: Cursor, assumes: Assumptions) -> None:
        """``McpError(<code>, ...)`` whose code (a member, its int value, its name) has a factory (FL301)."""
        code_node = argument_value(node, 0, "code")
        code, code_assumes = self.ex.values.code_of(code_node, self.scope)
        if code is None or code not in FACTORY_FOR_CODE:
            return
        by_keyword = node.args[0].keyword is not None or bool(node.args[0].star)
        layout = self.ex.values.call_layout(node, at)
        self._record("constructions", Construction(code, layout, by_keyword, assumes + code_assumes))
        self.ex.needs_names = True
