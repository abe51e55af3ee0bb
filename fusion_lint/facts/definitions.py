"""Definitions (DESIGN §4, §12.2): the runtime's ``@tool(...)``/``@resource(...)``/``@prompt(...)``
and ``tool(...)(fn)``, and every framework's registrations — ``@server.tool()``, bare ``@server.tool``
(fastmcp), ``server.tool(name=...)(fn)``, ``server.tool(fn)``, ``server.add_tool(fn, ...)``,
``Tool.from_function(fn, ...)``, a low-level server's ``@server.call_tool()`` and ``Server(name,
on_call_tool=fn)`` — on servers recognised by what they are, with ``@contract(errors=...)``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import fusion_lint.facts.helpers as helpers
from fusion_lint.facts.expressions import is_concatenated
from fusion_lint.facts.frameworks import FUSION_FASTMCP_INSTALL, TOOL_CLASSES, framework_of_class, middleware_kind
from fusion_lint.facts.model import (
    Assumptions,
    Definition,
    FileFacts,
    HelperCall,
    HelperTemplate,
    MiddlewareUse,
    ServerRef,
)
from fusion_lint.facts.names import DEFINERS, Names, Scope
from fusion_lint.facts.positions import Cursor
from fusion_lint.facts.syntax import (
    Arg,
    args_of,
    argument_value,
    children,
    describe,
    dotted,
    is_name_or_attribute,
    is_string,
    keyword_argument,
    name_value,
    string_value,
)
from fusion_lint.facts.values import Values

LISTED_TOOL_CLASSES = frozenset({"mcp.types.Tool", "mcp_types.Tool"})
STANDALONE = {
    "fastmcp.tools.tool": "tool",
    "fastmcp.tools.tool.tool": "tool",
    "fastmcp.tools.function_tool.tool": "tool",
    "fastmcp.resources.resource": "resource",
    "fastmcp.resources.function_resource.resource": "resource",
    "fastmcp.prompts.prompt": "prompt",
    "fastmcp.prompts.function_prompt.prompt": "prompt",
}


class Enclosing(Protocol):
    """What a registration inside a function knows of it (``bodies.FunctionWalker``)."""

    scope: Scope
    servers: dict[str, ServerRef]  # local names bound to a server (a variable, an annotated parameter)
    loose_params: set[str]  # unannotated parameters: a server when the module imports a framework
    param_names: set[str]  # every parameter of the enclosing functions
    qualprefix: str  # the enclosing function's qualified name and a dot (``build_server.``)


@dataclass
class Registration:
    """A registering call or decorator on a server, before its handler is known."""

    kind: str
    server: ServerRef
    node: ast.expr  # the decorator expression or the registering call: what a diagnostic points at
    call: ast.Call | None  # its call, when it is one (``@server.tool`` is not)
    dispatcher: bool = False
    name_node: ast.expr | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Definitions:
    def __init__(self, facts: FileFacts, names: Names, values: Values):
        self.facts = facts
        self.names = names
        self.values = values
        # Functions under ``@contract(...)`` and no registering decorator: a call such as
        # ``app.add_tool(fn)`` or ``Tool.from_function(fn)`` registers them later in the file.
        self.contracted: dict[str, tuple[ast.Call, Cursor]] = {}
        # The variables of the enclosing ``for`` loops: the elements of a literal list or tuple it
        # runs over (registering the variable registers each, DESIGN §12.2), or None (dynamic).
        self.loop_elements: dict[str, tuple[ast.expr, ...] | None] = {}
        self.wraps_kept: set[str] = set()  # functions under ``@functools.wraps(...)``: they keep a name

    @contextmanager
    def looping(self, stmt: ast.For) -> Iterator[None]:
        """While the body of ``for <name> in ...:`` is walked."""
        if type(stmt.target) is not ast.Name:
            yield
            return
        name, iterated = stmt.target.id, stmt.iter
        elements = None
        if type(iterated) in (ast.List, ast.Tuple) and not any(type(e) is ast.Starred for e in iterated.elts):  # type: ignore[attr-defined]  # type(iterated) in (ast.List, ast.Tuple): mypy does not narrow through a tuple of types
            elements = tuple(iterated.elts)  # type: ignore[attr-defined]  # a List or a Tuple, as above
        saved = self.loop_elements.get(name, False)
        self.loop_elements[name] = elements
        try:
            yield
        finally:
            if saved is False:
                del self.loop_elements[name]
            else:
                self.loop_elements[name] = saved  # type: ignore[assignment]  # saved is not False here: a tuple of elements or None

    def _literal(self, node: ast.AST) -> bool:
        """A string literal other than a lone f-string (what a tool's name may be written as)."""
        return is_string(node) and (type(node) is not ast.JoinedStr or is_concatenated(node, self.values.spans))

    # ----- the runtime's definers -----------------------------------------------------------------

    def definer(self, node: ast.AST, scope: Scope | None = None) -> tuple[str | None, Assumptions]:
        """``tool``/``resource``/``prompt`` when ``node`` is a call to one, and what that assumed."""
        if type(node) is ast.Call:
            api, assumes = self.names.api_of(self.names.qualify(node.func, scope))
            if api in DEFINERS:
                return api, assumes
        return None, ()

    def contract_call(self, node: ast.AST, scope: Scope | None = None) -> ast.Call | None:
        """``contract(errors=...)``, the runtime's decorator for a framework handler."""
        if type(node) is ast.Call and self.names.api_of(self.names.qualify(node.func, scope))[0] == "contract":
            return node
        return None

    # ----- servers and their registrations ---------------------------------------------------------

    def receiver(self, node: ast.AST, walker: Enclosing | None) -> ServerRef | None:
        """The server ``node`` (what ``.tool`` is called on) is, if it is one."""
        scope = walker.scope if walker is not None else None
        name = name_value(node)
        if name is not None:
            if walker is not None:
                if name in walker.servers:
                    return walker.servers[name]
                if name in walker.loose_params:
                    if self.names.imports_framework:
                        return ServerRef(self.names.imported_framework)
                    # A server handed over under its conventional name, in a module importing no framework.
                    return ServerRef("unknown") if name == "mcp" else None
            if name in self.names.servers and (scope is None or name not in scope):
                return self.names.servers[name]
        qname = self.names.qualify(node, scope)
        framework = framework_of_class(qname)
        if framework is not None:  # an instance the alias table names by its class
            return ServerRef(framework)
        if type(node) is ast.Attribute and (dotted(node) or "").startswith("self.") and self.names.imports_framework:
            return ServerRef(self.names.imported_framework)  # ``self.mcp.tool(...)``: a server handed to the class
        module = self.names.module_name
        if qname is not None and qname.startswith(module + "."):
            local = qname[len(module) + 1 :]
            if local in self.names.server_classes:  # ``self`` in a method of a server subclass
                return ServerRef(self.names.server_classes[local])
            return None
        if (
            name is not None
            and qname is not None
            and "." in qname
            and self.names.may_reexport_runtime(qname.rpartition(".")[0])
        ):
            # A server imported from another module of the project, or an instance of a class from
            # one (``BillingServer(FastMCP)`` defined elsewhere): the project view decides which.
            return ServerRef("unknown", ref=qname, instance=name in self.names.instances)
        return None

    def registration(self, node: ast.expr, walker: Enclosing | None) -> Registration | None:
        """``server.tool(...)``, ``server.tool`` (bare), ``server.resource(uri)``, ``server.prompt()``,
        ``server.call_tool()``: what registers the function it decorates or is called with."""
        call = node if type(node) is ast.Call else None
        func = call.func if call is not None else node
        standalone = STANDALONE.get(self.names.qualify(func, walker.scope if walker else None) or "")
        if standalone is not None:  # fastmcp 3's ``@tool`` (``fastmcp.tools``), found by a provider
            name = keyword_argument(call, "name") if call is not None else None
            first = (
                args_of(call)[0].value
                if call is not None and args_of(call) and args_of(call)[0].keyword is None
                else None
            )
            return Registration(
                standalone, ServerRef("fastmcp"), node, call, name_node=name.value if name is not None else first
            )
        if type(func) is not ast.Attribute or func.attr not in ("tool", "resource", "prompt", "call_tool"):
            return None
        server = self.receiver(func.value, walker)
        extra: dict[str, Any] = {"receiver": func.value}
        if server is None:
            if walker is None or name_value(func.value) not in walker.param_names:
                return None
            # A parameter of any name: a server if a caller hands one to this registration helper.
            server, extra["param_only"] = ServerRef("unknown"), True
        method = func.attr
        if method == "call_tool":  # the 1.x low-level dispatcher: ``@server.call_tool()``
            if call is None or args_of(call):
                return None
            if extra.get("param_only"):
                return None
            if server.framework == "unknown":
                server = ServerRef("lowlevel1", server.name, server.ref, server.masked)
            return Registration("tool", server, node, call, dispatcher=True)
        name_node = None
        if call is not None:
            found = args_of(call)
            first = found[0].value if found and found[0].keyword is None and not found[0].star else None
            keyword = keyword_argument(call, "uri" if method == "resource" else "name")
            name_node = keyword.value if keyword is not None else first
            if method != "resource" and first is not None and not self._literal(first):
                if keyword is None:
                    name_node = None  # ``server.tool(fn)`` (fastmcp): the function itself, not a name
        return Registration(method, server, node, call, name_node=name_node, extra=extra)

    def record(
        self,
        kind: str,
        call: ast.Call | None,
        at: Cursor,
        handler: str | None,
        handler_ref: str | None,
        assumes: Assumptions,
        *,
        node: ast.expr | None = None,
        name_node: ast.expr | None = None,
        fallback_name: str | None = None,
        server: ServerRef | None = None,
        dispatcher: bool = False,
        contract: ast.Call | None = None,
        contract_above: bool = False,
        contract_at: Cursor | None = None,
        template: HelperTemplate | None = None,
    ) -> None:
        """One definition. The runtime's own: ``call`` is ``tool(...)``. A framework's: ``server``
        is set, ``contract`` is its ``@contract(...)`` when it has one."""
        spans, values = self.values.spans, self.values
        contract_at = contract_at or at
        if server is None:
            assert call is not None
            name_node = argument_value(call, 0, "uri_template" if kind == "resource" else "name")
            errors_arg = keyword_argument(call, "errors")
        else:
            errors_arg = None
            if contract is not None:
                errors_arg = keyword_argument(contract, "errors") or (
                    args_of(contract)[0] if args_of(contract) and args_of(contract)[0].keyword is None else None
                )
        name = string_value(name_node) if name_node is not None else None
        name_ref = None
        if not isinstance(name, str) and is_name_or_attribute(name_node):
            name_ref = self.names.qualify(name_node)  # ``@tool(NAME)``: resolved with the project's constants
        where = node if node is not None else call
        assert where is not None
        if not isinstance(name, str) and name_node is None and not dispatcher:
            name = fallback_name  # the framework names a tool after its function
        self.facts.definitions.append(
            Definition(
                kind=kind,  # type: ignore[arg-type]  # kind is a definer's: one of Definition's kinds
                name=name if isinstance(name, str) else None,
                span=spans.at(where, at),
                name_span=spans.at(name_node if name_node is not None else where, at),
                errors=values.contract_expr(errors_arg.value, contract_at) if errors_arg is not None else None,
                errors_arg_span=spans.arg(errors_arg, contract_at) if errors_arg is not None else None,
                handler=handler,
                handler_ref=handler_ref,
                name_ref=name_ref,
                call=values.call_layout(call, at) if errors_arg is not None and server is None and call else None,
                assumes=assumes,
                server=server,
                dispatcher=dispatcher,
                contract_span=spans.at(contract, contract_at) if contract is not None else None,
                contract_above=contract_above,
                template=template,
            )
        )

    # ----- call forms -------------------------------------------------------------------------------

    def _handler_of(
        self,
        target: ast.expr,
        scope: Scope | None,
        walker: Enclosing | None = None,
    ) -> tuple[str | None, str | None, str | None]:
        """(qualname in this module, qualified name elsewhere, the name a framework gives it) of the
        function ``target`` names."""
        target = self.values.handler_target(target, scope)  # ``functools.partial(fn)`` is ``fn``
        handler = handler_ref = None
        nested = self._nested_def(target, scope, walker)
        if nested is not None:
            handler = nested
        elif name_value(target) is not None and name_value(target) in self.facts.functions:
            handler = name_value(target)
        elif is_name_or_attribute(target):
            qname = self.names.qualify(target, scope)
            module = self.names.module_name
            if qname is not None and qname.startswith(module + ".") and not self._through_import(target):
                handler = qname[len(module) + 1 :]
            else:
                handler_ref = qname
        shown = (
            name_value(target)
            if name_value(target) is not None
            else target.attr
            if type(target) is ast.Attribute
            else None
        )
        return handler, handler_ref, shown

    def _nested_def(self, target: ast.AST, scope: Scope | None, walker: Enclosing | None) -> str | None:
        """The qualname of the nested ``def`` a name registered inside a function means: the
        innermost enclosing function defining it (``build_server.call_tool`` for ``Server(...,
        on_call_tool=call_tool)`` in ``build_server``), as Python looks the name up."""
        name = name_value(target)
        if walker is None or name is None or (scope is not None and name in scope):
            return None
        prefix = walker.qualprefix.rstrip(".")
        while prefix:
            # A class body is no enclosing scope of its methods: ``x`` in ``C.m`` is never ``C.x``.
            if prefix not in self.facts.classes and f"{prefix}.{name}" in self.facts.functions:
                return f"{prefix}.{name}"
            prefix = prefix.rpartition(".")[0]
        return None

    def _through_import(self, target: ast.AST) -> bool:
        """Whether ``target``'s first name was bound by an import (``session`` of ``from . import
        session``): then it names another module's function, even where its qualified name starts
        with this package's (a package ``__init__`` importing its submodules)."""
        while type(target) is ast.Attribute:
            target = target.value
        return name_value(target) in self.names.import_bound

    def call_form(self, node: ast.Call, at: Cursor, scope: Scope | None, walker: Enclosing | None = None) -> bool:
        """A registering call: ``tool("x", ...)(handler)``, ``server.tool(...)(fn)``, ``server.tool(fn)``,
        ``server.add_tool(fn, ...)``, ``Tool.from_function(fn, ...)``, ``Server(..., on_call_tool=fn)``;
        record it (True when ``node`` was one). Also notes low-level tool listings and mount prefixes."""
        if self._framework_call(node, at, scope, walker):
            return True
        kind, assumes = self.definer(node.func, scope)
        if kind is not None and args_of(node):
            target = args_of(node)[0].value
            handler, handler_ref, _ = self._handler_of(target, scope)
            self.record(kind, node.func, at, handler, handler_ref, assumes)  # type: ignore[arg-type]  # a definer() recognised node.func: a call (``tool("x")(handler)``)
            if handler is None and handler_ref is None:  # FL190 names it
                self.facts.definitions[-1].handler_unresolved = describe(target)
            return True
        return False

    def _middleware(
        self, node: ast.Call, found: list[Arg], at: Cursor, scope: Scope | None, walker: Enclosing | None
    ) -> None:
        """fastmcp middleware added to a server, in order (``FileFacts.middleware``, FL310): by
        ``server.add_middleware(M(...))``, the fusion integration's ``install(server)``, or the
        ``middleware=[...]`` list a ``FastMCP(...)`` is built with."""
        func = node.func
        # The callee's last name first: every call passes here, and almost none is one of these.
        last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        if last == "add_middleware" and type(func) is ast.Attribute and found and found[0].keyword is None:
            server = self.receiver(func.value, walker)
            if server is not None and server.framework in ("fastmcp", "unknown"):
                self._add_middleware(found[0].value, node, at, scope)
            return
        if last == "install":
            if found and self.names.qualify(func, scope) == FUSION_FASTMCP_INSTALL:
                self.facts.middleware.append(MiddlewareUse("fusion", self.values.spans.at(node, at)))
            return
        listed = keyword_argument(node, "middleware") if node.keywords else None
        if listed is not None and type(listed.value) is ast.List:
            server = self.names.server_of_call(node, scope)
            if server is not None and server.framework == "fastmcp":
                for element in listed.value.elts:
                    self._add_middleware(element, element, at, scope)

    def _add_middleware(self, middleware: ast.expr, where: ast.AST, at: Cursor, scope: Scope | None) -> None:
        if type(middleware) is not ast.Call:
            return
        qname = self.names.qualify(middleware.func, scope) or ""
        kind = middleware_kind(qname)
        if kind is None:
            return
        off = keyword_argument(middleware, "transform_errors")
        self.facts.middleware.append(
            MiddlewareUse(
                kind,
                self.values.spans.at(where, at),
                transform_errors=not (off is not None and type(off.value) is ast.Constant and off.value.value is False),
            )
        )

    def _framework_call(self, node: ast.Call, at: Cursor, scope: Scope | None, walker: Enclosing | None) -> bool:
        func = node.func
        found = args_of(node)
        self._middleware(node, found, at, scope, walker)
        # ``server.tool(...)(fn)``, ``server.resource(uri)(fn)``, ``server.prompt()(fn)``
        if type(func) is ast.Call and found:
            registration = self.registration(func, walker)
            if registration is not None:
                if self._register(registration, found[0].value, at, scope, node, walker):
                    return True
            elif len(found) == 1 and found[0].keyword is None and not found[0].star:
                self.helper_call(func, found[0].value, at, scope, walker)
        if type(func) is ast.Attribute:
            method = func.attr
            # ``server.tool(fn)``, ``server.add_tool(fn)``, ``server.prompt(fn)`` (fastmcp's bare forms)
            if method in ("tool", "add_tool", "prompt") and found and found[0].keyword is None:
                target = found[0].value
                if not self._literal(target):
                    server = self.receiver(func.value, walker)
                    if server is not None:
                        if self._tool_object(target, scope) is not None:
                            return False  # ``add_tool(Tool.from_function(...))``: the inner call is the definition
                        name_node = keyword_argument(node, "name")
                        name = (
                            name_node.value
                            if name_node is not None
                            else (
                                found[1].value
                                if method == "add_tool" and len(found) > 1 and found[1].keyword is None
                                else None
                            )
                        )
                        kind = "prompt" if method == "prompt" else "tool"
                        self._register(
                            Registration(kind, server, node, node, name_node=name), target, at, scope, node, walker
                        )
                        return True
            if method == "from_function" and self._tool_object(node, scope) is not None and found:
                framework = framework_of_tool(self.names.qualify(func.value, scope))
                name_arg = keyword_argument(node, "name")
                registration = Registration(
                    "tool", ServerRef(framework), node, node, name_node=name_arg.value if name_arg else None
                )
                self._register(registration, found[0].value, at, scope, node, walker)
                return True
            if method == "mount":
                for keyword in ("prefix", "namespace"):
                    prefix = keyword_argument(node, keyword)
                    text = string_value(prefix.value) if prefix is not None else None
                    if isinstance(text, str) and text:
                        self.facts.mount_prefixes.append(text)
        qname = self.names.qualify(func, scope)
        if qname in LISTED_TOOL_CLASSES:
            listed = keyword_argument(node, "name")
            text = string_value(listed.value) if listed is not None else None
            if isinstance(text, str):
                self.facts.listed_tools.append(text)
        server = self.names.server_of_call(node, scope)
        if server is not None and server.framework.startswith("lowlevel"):
            dispatch = keyword_argument(node, "on_call_tool")
            if dispatch is not None:  # 2.x: ``Server("name", on_call_tool=handle)``
                registration = Registration("tool", ServerRef("lowlevel2", server.name), node, node, dispatcher=True)
                self._register(registration, dispatch.value, at, scope, node, walker)
        return False

    def _tool_object(self, node: ast.AST, scope: Scope | None) -> str | None:
        """The Tool class when ``node`` is ``Tool.from_function(...)``."""
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "from_function":
            owner = self.names.qualify(node.func.value, scope)
            return owner if owner in TOOL_CLASSES else None
        return None

    def _register(
        self,
        registration: Registration,
        target: ast.expr,
        at: Cursor,
        scope: Scope | None,
        node: ast.expr,
        walker: Enclosing | None,
    ) -> bool:
        """A framework registration of ``target`` (the handler, maybe wrapped by ``contract(...)``);
        False when it is none after all (a parameter's ``.tool`` that no helper template explains)."""
        contract: ast.Call | None = None
        if type(target) is ast.Call and self.contract_call(target.func, scope) is not None and args_of(target):
            contract = target.func  # type: ignore[assignment]  # a Call (contract_call() said so): ``server.tool()(contract(errors=...)(fn))``
            target = args_of(target)[0].value
        if type(target) is ast.Name and target.id in self.loop_elements:
            elements = self.loop_elements[target.id]
            if elements is not None:  # ``for fn in [a, b]: server.add_tool(fn)``: one definition each
                for element in elements:
                    if self._tool_object(element, scope) is None:  # a ``Tool.from_function`` is one already
                        self._register(registration, element, at, scope, node, walker)
                return True
        handler, handler_ref, shown = self._handler_of(target, scope, walker)
        template = helpers.template(self, registration, target, handler, walker)
        if template is None and registration.extra.get("param_only"):
            return False
        if type(target) is ast.Name and target.id in self.loop_elements:
            shown = None  # a dynamic loop's variable: the tool's name is not its name
        contract_at = None
        if contract is None and handler in self.contracted:  # ``@contract`` on the def, registered by a call
            contract, contract_at = self.contracted[handler]
        if type(target) is ast.Name and walker is not None and target.id in walker.param_names:
            shown = None  # ``Tool.from_function(fn)`` on a parameter: the tool's name is fn's, unknown here
        self.record(
            registration.kind,
            registration.call,
            at,
            handler,
            handler_ref,
            (),
            node=registration.node,
            name_node=registration.name_node,
            fallback_name=shown,
            server=registration.server,
            dispatcher=registration.dispatcher,
            contract=contract,
            contract_at=contract_at,
            template=template,
        )
        if handler is None and handler_ref is None:  # FL190 names it
            self.facts.definitions[-1].handler_unresolved = describe(target)
        return True

    def helper_call(
        self,
        call: ast.Call,
        target: ast.expr | None,
        at: Cursor,
        scope: Scope | None,
        walker: Enclosing | None,
        *,
        handler: str | None = None,
        shown: str | None = None,
        contract: ast.Call | None = None,
        contract_above: bool = False,
        decorated_at: Cursor | None = None,
    ) -> None:
        """``helper(server, ...)(target)`` or ``@helper(server, ...)`` over the def ``handler``: a
        ``HelperCall`` when an argument may be a server (the project view decides whether
        ``helper`` registers)."""
        found = helpers.call_arguments(self, call, walker, at)
        if found is None:
            return
        callee, arguments = found
        count = len(self.facts.definitions)
        pending = Registration("tool", ServerRef("unknown"), call, call)
        if target is not None:
            self._register(pending, target, at, scope, call, walker)
        else:
            self.record(
                "tool",
                call,
                decorated_at or at,
                handler,
                None,
                (),
                node=call,
                fallback_name=shown,
                server=pending.server,
                contract=contract,
                contract_above=contract_above,
            )
        for definition in self.facts.definitions[count:]:
            self.facts.helper_calls.append(HelperCall(callee, arguments, definition))
        del self.facts.definitions[count:]

    def scan_module_expression(self, node: ast.AST, at: Cursor) -> None:
        """Module-level code outside functions: only registering calls matter here."""
        stack = [node]
        while stack:
            current = stack.pop()
            kind = type(current)
            if kind is ast.Call and self.call_form(current, at, None):  # type: ignore[arg-type]  # kind is ast.Call and self.call_form(current, at, None); mypy does not narrow through kind = type(...)
                stack.extend(reversed([arg.value for arg in args_of(current)[1:]]))  # type: ignore[arg-type]  # kind is ast.Call and self.call_form(current, at, None) above; mypy does not narrow through kind = type(...)
                continue
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                continue
            if kind is ast.For or kind is ast.AsyncFor:
                self.scan_module_expression(current.iter, at)  # type: ignore[attr-defined]  # kind is ast.For or kind is ast.AsyncFor above; mypy does not narrow through kind = type(...)
                with self.looping(current):  # type: ignore[arg-type]  # kind is ast.For or kind is ast.AsyncFor above; mypy does not narrow through kind = type(...)
                    for part in (current.body, current.orelse):  # type: ignore[attr-defined]  # kind is ast.For or kind is ast.AsyncFor above; mypy does not narrow through kind = type(...)
                        for stmt in part:
                            self.scan_module_expression(stmt, at)
                continue
            stack.extend(reversed(list(children(current))))


def framework_of_tool(qname: str | None) -> str:
    """The framework a ``Tool`` class belongs to."""
    if qname is None:
        return "unknown"
    if qname.startswith("fastmcp"):
        return "fastmcp"
    return "mcp2" if qname.startswith("mcp.server.mcpserver") else "mcp1"
