"""What a function does: its fail sites, raises, except clauses, returns and calls (DESIGN §4).

Nested functions and lambdas belong to the function around them too (a handler's helper closure
is part of the handler). The walk looks only at the fields that can hold an expression or a
statement, which keeps it at a few percent of the parse.
"""

from __future__ import annotations

import ast
from typing import Protocol

from fusion_lint.facts.definitions import Definitions
from fusion_lint.facts.expressions import data_reason, literal_text, sentence, uses
from fusion_lint.facts.expressions import shape as value_shape
from fusion_lint.facts.model import (
    Assumptions,
    Construction,
    Except,
    FailSite,
    FileFacts,
    FunctionFacts,
    Raise,
    Return,
    ReturnedText,
    ServerRef,
    Shape,
    Suppressing,
    Try,
    Usage,
    Uses,
)
from fusion_lint.facts.names import Names, Scope
from fusion_lint.facts.parameters import ParameterReading
from fusion_lint.facts.positions import Cursor, SpanRegistry
from fusion_lint.facts.raised import Raised
from fusion_lint.facts.syntax import (
    LEAF_TYPES,
    args_of,
    argument,
    argument_value,
    children,
    contains_raise,
    dotted,
    if_branches,
    is_name_or_attribute,
    keyword_argument,
    name_value,
    rethrows,
    string_value,
)
from fusion_lint.facts.values import Values
from mcp_fusion import FACTORY_CODES

LEAF_SET = frozenset(LEAF_TYPES)
FACTORY_FOR_CODE = {code.name: name for name, code in FACTORY_CODES.items()}
RUNTIME_RAISES = ("fail", "mcp_error", "factory", "tool_error")
TRY = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
COMPOUND = frozenset(
    {
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.If,
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.With,
        ast.AsyncWith,
        *TRY,
        ast.Match,
    }
)


class Module(Protocol):
    """What a function's walk needs of the module around it (``extract.ModuleExtractor``)."""

    names: Names
    values: Values
    spans: SpanRegistry
    definitions: Definitions
    needs_names: bool
    facts: FileFacts

    def function(self, node: ast.FunctionDef, prefix: str, outer: FunctionWalker | None, at: Cursor) -> None: ...


class FunctionWalker(ParameterReading):
    def __init__(self, ex: Module, node: ast.FunctionDef, facts: FunctionFacts, outer: FunctionWalker | None):
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
        self._find_context(node.args, facts)

    # A fact belongs to this function and to every function it is nested in.
    def _record(self, attribute: str, fact: object) -> None:
        for facts in self.facts_stack:
            getattr(facts, attribute).append(fact)

    # ----- statements ---------------------------------------------------------------------------

    def block(self, body: list[ast.stmt], at: Cursor) -> None:
        """A block's statements; those of a one-line suite (``if x: raise E``) are where its header is."""
        if not body:
            return
        if self.spans.is_suite(body):
            for stmt in body:
                self.statement(stmt, at, at)
            return
        for stmt, line in zip(body, self.spans.statement_lines(body)):
            self.statement(stmt, at, line)

    def statement(self, stmt: ast.stmt, at: Cursor, line: Cursor) -> None:
        """``line``: where the statement (its line of small statements) starts."""
        kind = type(stmt)
        if kind not in COMPOUND:
            self.small_statement(stmt, line)
            return
        here = line
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            self.ex.function(stmt, prefix=self.qualprefix, outer=self, at=here)
            return
        if kind is ast.ClassDef:
            if not self.spans.is_suite(stmt.body):  # type: ignore[attr-defined]  # kind is ast.ClassDef above; mypy does not narrow through kind = type(...)
                self.block(stmt.body, here)  # type: ignore[attr-defined]  # kind is ast.ClassDef above; mypy does not narrow through kind = type(...)
            return
        if kind in TRY:
            self.try_statement(stmt, here)
            return
        if kind is ast.AsyncWith or kind is ast.AsyncFor:
            self.awaits += 1
        if (kind is ast.With or kind is ast.AsyncWith) and self._suppressing(stmt, here):  # type: ignore[arg-type]  # kind is ast.With; mypy does not narrow through kind = type(...)
            return
        # Any other compound statement: its header expressions, then its blocks.
        if kind is ast.If or kind is ast.While:
            self.expression(stmt.test, here)  # type: ignore[attr-defined]  # kind is ast.If or kind is ast.While above; mypy does not narrow through kind = type(...)
            self.block(stmt.body, here)  # type: ignore[attr-defined]  # kind is ast.If or kind is ast.While above; mypy does not narrow through kind = type(...)
            self.block(stmt.orelse, here)  # type: ignore[attr-defined]  # kind is ast.If or kind is ast.While above; mypy does not narrow through kind = type(...)
        elif kind is ast.For or kind is ast.AsyncFor:
            with self.ex.definitions.looping(stmt):
                self.expression(stmt.target, here)  # type: ignore[attr-defined]  # kind is ast.For or kind is ast.AsyncFor above; mypy does not narrow through kind = type(...)
                self.expression(stmt.iter, here)  # type: ignore[attr-defined]  # kind is ast.For or kind is ast.AsyncFor above; mypy does not narrow through kind = type(...)
                self.block(stmt.body, here)  # type: ignore[attr-defined]  # kind is ast.For or kind is ast.AsyncFor above; mypy does not narrow through kind = type(...)
                self.block(stmt.orelse, here)  # type: ignore[attr-defined]  # kind is ast.For or kind is ast.AsyncFor above; mypy does not narrow through kind = type(...)
        elif kind is ast.With or kind is ast.AsyncWith:
            for item in stmt.items:  # type: ignore[attr-defined]  # kind is ast.With or kind is ast.AsyncWith above; mypy does not narrow through kind = type(...)
                self.expression(item, here)
            self.block(stmt.body, here)  # type: ignore[attr-defined]  # kind is ast.With or kind is ast.AsyncWith above; mypy does not narrow through kind = type(...)
        else:  # ``match``: the subject, then each case (``case JsonRpcErrorCode.NOT_FOUND:`` is a
            # comparison, never a raise): its body, then its guard
            self.expression(stmt.subject, here)  # type: ignore[attr-defined]  # the match statement: every other compound kind is handled above
            for case in stmt.cases:  # type: ignore[attr-defined]  # the match statement, as above
                self.block(case.body, here)
                if case.guard is not None:
                    self.expression(case.guard, here)

    def _suppressing(self, stmt: ast.With | ast.AsyncWith, at: Cursor) -> bool:
        """``with contextlib.suppress(<types>):``: what it silences, and (after its body is walked, by
        the awaits counted meanwhile) whether cancellation can arrive inside it."""
        for item in stmt.items:
            call = item.context_expr
            if type(call) is ast.Call and self.names.qualify(call.func, self.scope) == "contextlib.suppress":
                types = tuple(self.names.qualify(arg.value, self.scope) or "" for arg in args_of(call))
                fact = Suppressing(self.spans.at(call, at), types, awaits=type(stmt) is ast.AsyncWith)
                before = self.awaits
                self.block(stmt.body, at)
                fact.awaits = fact.awaits or self.awaits > before
                self._record("suppressing", fact)
                for other in stmt.items:
                    self.expression(other.context_expr, at)
                return True  # the statement is walked
        return False

    def try_statement(self, stmt: ast.stmt, at: Cursor) -> None:
        # The clauses are known before the body is walked (a raise in the body may be caught by
        # them); whether the body awaits is known after.
        handlers = stmt.handlers  # type: ignore[attr-defined]  # a try statement (kind in TRY: Try, TryStar): both have these fields
        lines = [self.spans.line_of(handler) for handler in handlers]
        clauses = [self._except_clause(handler, line) for handler, line in zip(handlers, lines)]
        fact = Try(tuple(clauses), awaits=False)
        before = self.awaits
        self.try_bodies.append(fact)
        self.block(stmt.body, at)  # type: ignore[attr-defined]  # a try statement, as above
        self.try_bodies.pop()
        fact.awaits = self.awaits > before
        for clause in clauses:
            clause.try_awaits = fact.awaits
        self._record("tries", fact)
        for handler, clause, line in zip(handlers, clauses, lines):
            self._record("excepts", clause)
            if handler.type is not None:
                self.expression(handler.type, line)
            self.clauses.append(clause)
            self.block(handler.body, line)
            self.clauses.pop()
        self.block(stmt.orelse, at)  # type: ignore[attr-defined]  # a try statement, as above
        self.block(stmt.finalbody, at)  # type: ignore[attr-defined]  # a try statement, as above

    def _except_clause(self, handler: ast.ExceptHandler, here: Cursor) -> Except:
        types: tuple[str, ...] = ()
        if handler.type is not None:
            elements = handler.type.elts if type(handler.type) is ast.Tuple else [handler.type]
            types = tuple(self.names.qualify(element, self.scope) or "" for element in elements)
        name = handler.name or ""
        return Except(
            span=self.spans.at(handler, here),
            type_span=self.spans.at(handler.type, here) if handler.type is not None else None,
            types=types,
            name=name,
            reraises=contains_raise(handler.body),
            try_awaits=False,
            rethrows=rethrows(handler.body, name),
        )

    def small_statement(self, small: ast.stmt, at: Cursor) -> None:
        kind = type(small)
        if kind is ast.Raise:
            self.raise_statement(small, at)  # type: ignore[arg-type]  # kind is ast.Raise above; mypy does not narrow through kind = type(...)
            return
        if kind is ast.Return:
            self.return_statement(small, at)  # type: ignore[arg-type]  # kind is ast.Return above; mypy does not narrow through kind = type(...)
            return
        if kind is ast.Import or kind is ast.ImportFrom:
            self.names.bind_imports(small, self.scope)  # type: ignore[arg-type]  # kind is ast.Import or kind is ast.ImportFrom above; mypy does not narrow through kind = type(...)
            return
        if kind is ast.Expr:
            value = small.value  # type: ignore[attr-defined]  # kind is ast.Expr above; mypy does not narrow through kind = type(...)
            inner = value.value if type(value) is ast.Await else value
            if type(inner) is ast.Call:
                if inner is not value:
                    self.awaits += 1
                self.call(inner, at, usage="discarded")
                return
            self.expression(value, at)
            return
        if kind is ast.Assign or kind is ast.AnnAssign:
            self._assignment(small, at)  # type: ignore[arg-type]  # kind is ast.Assign or kind is ast.AnnAssign above; mypy does not narrow through kind = type(...)
            return
        self.expression(small, at)

    def _assignment(self, small: ast.Assign | ast.AnnAssign, at: Cursor) -> None:
        value = small.value
        targets = small.targets if type(small) is ast.Assign else [small.target]  # type: ignore[union-attr]  # an AnnAssign when not an Assign: it has one target
        names = [t.id for t in targets if type(t) is ast.Name]
        if value is not None and names:
            method = self._fail_method(value)
            if method is not None:  # ``fail = ctx.fail``
                for name in names:
                    self.fail_aliases[name] = method
                return
            if type(value) is ast.Call:
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
            if type(target) is not ast.Name:
                self.expression(target, at)
        if value is not None:
            self.expression(value, at)
            if self.clauses:  # ``msg = str(e)`` inside an except clause: what ``msg`` is built from
                caught = tuple(clause.name for clause in self.clauses if clause.name)
                span = self.spans.at(small, at)
                for name in names:
                    self.facts_stack[0].assigned_in_except[name] = (uses(value, self.names, self.scope), caught, span)

    def raise_statement(self, node: ast.Raise, at: Cursor) -> None:
        if type(node.exc) is ast.IfExp:  # ``raise (a(...) if c else b(...))``: each branch is a raise
            self.expression(node.exc.test, at)
            for branch in if_branches(node.exc):
                self._raise(node, branch, at)
            return
        self._raise(node, node.exc, at)

    def _raise(self, node: ast.Raise, exc: ast.expr | None, at: Cursor) -> None:
        in_except = bool(self.clauses)
        caught = {clause.name for clause in self.clauses if clause.name}
        raised: Raised
        call = None
        if exc is None:
            raised = Raised("reraise")
        elif type(exc) is ast.Call:
            raised = self.classify(exc, at)
            if raised.kind in RUNTIME_RAISES:
                call = self.ex.values.call_layout(exc, at)
            self.call(exc, at, usage="raised")
        elif name_value(exc) is not None and name_value(exc) in self.bound_errors:
            raised = self.bound_errors[name_value(exc)]  # type: ignore[index]  # name_value(exc) is not None: tested on the elif
        elif name_value(exc) is not None and in_except and name_value(exc) in caught:
            raised = Raised("reraise")
        elif is_name_or_attribute(exc):
            raised = Raised("name", exception=self.names.qualify(exc, self.scope))
        else:
            self.expression(exc, at)
            raised = Raised("other")
        cause = node.cause
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
                call=call,
                message_span=raised.message_span,
                message=uses(raised.message, self.names, self.scope) if raised.message is not None else None,
                data=uses(raised.data, self.names, self.scope) if raised.data is not None else None,
                assumes=raised.assumes,
                text=literal_text(raised.message, self.names, self.scope, self.spans),
                sentence=sentence(raised.message) if raised.kind == "call" and _one_argument(exc) else None,
                wire_code=raised.wire_code,
            ),
        )

    def return_statement(self, node: ast.Return, at: Cursor) -> None:
        value = node.value
        if value is not None:
            self.expression(value, at)
        shape = value_shape(value, 2, self.names, self.scope, self.spans) if value is not None else Shape("none")
        # What it is built from matters where it may be built from a caught exception: inside an
        # except clause, or a name assigned in one (``msg = str(e)`` ... ``return msg``).
        assigned = self.facts_stack[0].assigned_in_except
        from_except = self.clauses or (name_value(value) is not None and name_value(value) in assigned)
        built = uses(value, self.names, self.scope) if value is not None and from_except else Uses()
        self._record(
            "returns",
            Return(
                self.spans.at(node, at),
                shape,
                built,
                tuple(reversed(self.clauses)),
                self._returned_text(value, at),
            ),
        )

    def _returned_text(self, value: ast.expr | None, at: Cursor) -> ReturnedText | None:
        """A returned text: where it is, its sentence and the try bodies around it (FL208's fix
        raises it instead); None for a value that is no text."""
        text = sentence(value)
        if value is None or text is None:
            return None
        return ReturnedText(self.spans.at(value, at), text, tuple(reversed(self.try_bodies)))

    # ----- expressions ---------------------------------------------------------------------------

    def expression(self, node: ast.AST, at: Cursor) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            kind = type(current)
            if kind is ast.Call:
                self.call(current, at, usage="other")  # type: ignore[arg-type]  # kind is ast.Call above; mypy does not narrow through kind = type(...)
                continue
            if kind in LEAF_SET:
                continue
            if kind is ast.Await or (kind is ast.comprehension and current.is_async):  # type: ignore[attr-defined]  # kind is ast.Await or (kind is ast.comprehension and current.is_async); mypy does not narrow through kind = type(...)
                self.awaits += 1
            stack.extend(reversed(list(children(current))))

    def _fail_method(self, func: ast.AST) -> str | None:
        """``fail``/``recovery_for`` when ``func`` is ``ctx.fail``, ``ctx.recovery_for`` or an alias."""
        kind = type(func)
        if kind is ast.Attribute:
            if name_value(func.value) in self.ctx_names and func.attr in ("fail", "recovery_for"):  # type: ignore[attr-defined,operator]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
                return func.attr  # type: ignore[attr-defined,no-any-return]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
        else:
            name = name_value(func)
            if name is not None and name in self.fail_aliases:
                return self.fail_aliases[name]
        root = func
        while type(root) is ast.Attribute:
            root = root.value
        # The runtime's module-level ``fail``/``recovery_for``, read from an import (``c.fail`` on
        # a parameter ``c`` is someone else's method).
        root_name = name_value(root)
        if root_name is not None and (root_name in self.names.aliases or kind is not ast.Attribute):
            api = self.names.api_of(self.names.qualify(func, self.scope))[0]
            if api in ("fail", "recovery_for"):
                return api
        if (
            self.ctx_attributes
            and kind is ast.Attribute
            and func.attr in ("fail", "recovery_for")  # type: ignore[attr-defined]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
            and dotted(func.value) in self.ctx_attributes  # type: ignore[attr-defined,operator]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
        ):
            return func.attr  # type: ignore[attr-defined,no-any-return]  # kind is ast.Attribute above; mypy does not narrow through kind = type(...)
        return None

    def classify(self, call: ast.Call, at: Cursor) -> Raised:
        """What raising this call would raise: its kind, code, data reason, cause and message."""
        raised = self._classify(call)
        if raised.kind in RUNTIME_RAISES and raised.message is not None:
            raised.message_span = self.spans.at(raised.message, at)
        return raised

    def _classify(self, call: ast.Call) -> Raised:
        method = self._fail_method(call.func)
        cause = keyword_argument(call, "cause") is not None
        if method == "fail":
            return Raised(
                "fail",
                has_cause=cause,
                message=argument_value(call, 1, "message"),
                data=argument_value(call, 2, "data"),
            )
        root = call
        while type(root.func) is ast.Attribute and type(root.func.value) is ast.Call:
            root = root.func.value  # ``tool_error(...).suggest(...)`` chains
        qname = self.names.qualify(root.func, self.scope)
        api, assumes = self.names.api_of(qname)
        if api == "McpError":
            code, code_assumes = self.ex.values.code_of(argument_value(call, 0, "code"), self.scope)
            data = argument_value(call, 2, "data")
            return Raised(
                "mcp_error",
                exception=qname,
                code=code,
                data_reason=data_reason(data),
                has_cause=cause,
                message=argument_value(call, 1, "message"),
                data=data,
                assumes=assumes + code_assumes,
                wire_code=literal_wire_code(call),
            )
        if api in FACTORY_CODES:
            data = argument_value(call, 1, "data")
            return Raised(
                "factory",
                exception=qname,
                code=FACTORY_CODES[api].name,  # type: ignore[index]  # a str: in FACTORY_CODES
                factory=api,
                data_reason=data_reason(data),
                has_cause=cause,
                message=argument_value(call, 0, "message"),
                data=data,
                assumes=assumes,
            )
        if api == "tool_error":
            code, code_assumes = self.ex.values.code_of(argument_value(root, 0, "code"), self.scope)
            return Raised("tool_error", exception=qname, code=code, assumes=assumes + code_assumes)
        first = argument(call, 0, "message")
        return Raised(
            "call",
            exception=qname,
            has_cause=cause,
            message=first.value if first is not None else None,
            wire_code=literal_wire_code(call),
        )

    def call(self, node: ast.Call, at: Cursor, usage: Usage) -> None:
        method = self._fail_method(node.func)
        if method is not None:
            reason_node = argument_value(node, 0, "reason")
            reason = string_value(reason_node) if reason_node is not None else None
            site = FailSite(
                method=method,  # type: ignore[arg-type]  # _fail_method() returns "fail" or "recovery_for"
                reason=reason if isinstance(reason, str) else None,
                span=self.spans.at(node, at),
                reason_span=self.spans.at(reason_node, at) if reason_node is not None else None,
                usage=usage,
                written=dotted(node.func) or method,
                reason_ref=self.names.qualify(reason_node, self.scope) if is_name_or_attribute(reason_node) else None,
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
        for arg in args_of(node):
            self.expression(arg.value, at)
        if name_value(node.func) is None:
            inner = node.func.value if type(node.func) is ast.Attribute else node.func
            if name_value(inner) is None:
                self.expression(inner, at)

    def _guard(self, qname: str) -> None:
        """Where a call sits: in which try bodies (a raise in the callee may be caught there)."""
        facts = self.facts_stack[0]
        if self.try_bodies:
            facts.guarded_calls.setdefault(qname, []).append(tuple(reversed(self.try_bodies)))
        else:
            facts.unguarded_calls.add(qname)

    def _method_of_instance(self, func: ast.expr) -> str | None:
        """``Lookup(ctx).find``: the method ``find`` of the class instantiated (followed like ``x.find``
        after ``x = Lookup(ctx)``); ``super().find`` in a method: ``find`` of the class's first base
        (looked up through that base's MRO; exact for single inheritance)."""
        if type(func) is not ast.Attribute or type(func.value) is not ast.Call:
            return None
        if name_value(func.value.func) == "super":
            owner = self.facts_stack[-1].qualname.rpartition(".")[0]
            cls = self.ex.facts.classes.get(owner)
            return f"{cls.bases[0]}.{func.attr}" if cls is not None and cls.bases and cls.bases[0] else None
        cls_name = self.names.instance_class(func.value, self.scope)
        return f"{cls_name}.{func.attr}" if cls_name is not None else None

    def _construction(self, node: ast.Call, at: Cursor, assumes: Assumptions) -> None:
        """``McpError(<code>, ...)`` whose code (a member, its int value, its name) has a factory (FL301)."""
        code_node = argument_value(node, 0, "code")
        code, code_assumes = self.ex.values.code_of(code_node, self.scope)
        if code is None or code not in FACTORY_FOR_CODE:
            return
        first = args_of(node)[0]
        by_keyword = first.keyword is not None or bool(first.star)
        layout = self.ex.values.call_layout(node, at)
        self._record("constructions", Construction(code, layout, by_keyword, assumes + code_assumes))
        self.ex.needs_names = True


def _one_argument(exc: ast.expr | None) -> bool:
    """``Exc(<one positional argument>)``: what FL208's fix can make ``fail(reason, <it>)``."""
    return type(exc) is ast.Call and len(exc.args) == 1 and not exc.keywords and type(exc.args[0]) is not ast.Starred


def literal_wire_code(call: ast.Call) -> int | None:
    """The literal integer code of ``X(code, ...)``/``X(code=...)``, or of the ``ErrorData(...)`` it wraps."""
    code = argument_value(call, 0, "code")
    if type(code) is ast.Call:  # McpError(ErrorData(code=..., message=...)) / McpError(error=ErrorData(...))
        code = argument_value(code, 0, "code")
    elif code is None and type(wrapped := argument_value(call, 0, "error")) is ast.Call:
        code = argument_value(wrapped, 0, "code")
    if type(code) is ast.UnaryOp and type(code.op) is ast.USub:
        operand = code.operand
        if type(operand) is ast.Constant and type(operand.value) is int:
            return -operand.value
        return None
    if type(code) is ast.Constant and type(code.value) is int:
        return code.value
    return None
