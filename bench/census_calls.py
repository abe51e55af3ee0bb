"""Calls, decorators and registrations for the census interpreter (mixed into ``UnitInterpreter``).

This is where the frameworks' run-time behaviour is modelled: what ``FastMCP(...)`` builds, what
``mcp.tool(...)`` returns and what it does when applied, how a tool's name is computed (``name=``, else
the function's ``__name__``, which ``functools.wraps`` copies and ``functools.partial`` lacks), what
``Tool.from_function`` and ``add_tool`` take, what the low-level server's handlers list.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from census_model import Frame
from census_values import (
    ADD_METHODS,
    DECORATOR_METHODS,
    FASTMCP,
    FROM_FUNCTION,
    LOWLEVEL,
    LOWLEVEL_DECORATORS,
    LOWLEVEL_KEYWORDS,
    LOWLEVEL_LISTED,
    LOWLEVEL_RESULTS,
    MCP1,
    MCP2,
    MOUNT_METHODS,
    OPAQUE_SERVER_FACTORIES,
    RESOURCE_OBJECTS,
    SERVER_CLASSES,
    STANDALONE_DECORATORS,
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
    ListedV,
    ListMethodV,
    MethodV,
    Param,
    PartialV,
    RegDecoV,
    Seq,
    ServerV,
    StandaloneDecoV,
    UnionV,
    Value,
    WrappedV,
    WrapsDecoV,
    is_callable_value,
    literal_str,
    name_text,
    options,
    short_source,
    union,
)

MAX_DEPTH = 14
RUNNERS = {"anyio.run", "trio.run", "asyncio.run", "uvloop.run"}
STATEMENT_BUDGET = 400_000


class CallsMixin:
    default_framework: str | None = None

    # -- calls ------------------------------------------------------------------------------------

    def call_value(self, func: Value, args: list, kwargs: dict, node: ast.AST | None, frame) -> Value:
        results = [self._call_one(option, args, kwargs, node, frame) for option in options(func)]
        return results[0] if len(results) == 1 else union(results)

    def _call_one(self, func: Value, args: list, kwargs: dict, node, frame) -> Value:
        if isinstance(func, FuncV):
            return self.call_function(func, args, kwargs)
        if isinstance(func, BoundV):
            if getattr(func.func, "static", False):
                return self.call_function(func.func, args, kwargs)
            return self.call_function(func.func, args, kwargs, receiver=func.receiver)
        if isinstance(func, PartialV):
            return self.call_value(func.func, args, kwargs, node, frame)
        if isinstance(func, ClsV):
            return self.instantiate(func, node, args, kwargs, frame=frame)
        if isinstance(func, Ext):
            return self.ext_call(func.qual, args, kwargs, node, frame)
        if isinstance(func, MethodV):
            return self.method_call(func, args, kwargs, node, frame)
        if isinstance(func, RegDecoV):
            if args:
                self.apply_regdeco(func, args[0], func.site, frame, None)
                return args[0]
            return UNKNOWN
        if isinstance(func, StandaloneDecoV):
            if args:
                return self.standalone_component(func.kind, args[0], func.args, func.kwargs, func.site, frame, None)
            return UNKNOWN
        if isinstance(func, WrapsDecoV):
            return WrappedV(args[0], func.inner, True, "functools.wraps") if args else UNKNOWN
        if isinstance(func, ListMethodV):
            if func.method == "append" and args and args[0] is not func.seq:
                func.seq.items.append(args[0])
            elif func.method == "insert" and len(args) > 1:
                func.seq.items.append(args[1])
            elif func.method == "extend" and args:
                if isinstance(args[0], Seq):
                    func.seq.items.extend(args[0].items)
                else:
                    func.seq.approximate = True
            return Const(None)
        if isinstance(func, DictMethodV):
            d = func.d
            if func.method == "items":
                return Seq([Seq([k, v]) for k, v in d.items])
            if func.method == "values":
                return Seq([v for _, v in d.items])
            if func.method == "keys":
                return Seq([k for k, _ in d.items])
            if func.method == "get" and args:
                key = args[0]
                for k, v in reversed(d.items):
                    if isinstance(k, Const) and isinstance(key, Const) and k.value == key.value:
                        return v
            if func.method == "update" and args and isinstance(args[0], DictV):
                d.items.extend(args[0].items)
            return UNKNOWN
        return UNKNOWN

    def call_function(
        self, func: FuncV, args: list, kwargs: dict, receiver: Value | None = None, standalone: bool = False
    ) -> Value:
        if self.statements > STATEMENT_BUDGET or len(self.stack) >= MAX_DEPTH:
            return UNKNOWN
        node = func.node
        if any(f.node is node for f in self.stack):
            return UNKNOWN
        all_args = ([receiver] if receiver is not None else []) + list(args)
        memo_key = None
        if not self.collectors:
            memo_key = (
                id(node),
                id(func.closure),
                tuple(a.key() for a in all_args),
                tuple(sorted((k, v.key()) for k, v in kwargs.items())),
                self.standalone,
            )
            if memo_key in self.memo:
                return self.memo[memo_key]
            self.memo[memo_key] = UNKNOWN
        frame = Frame(func.module, "function", parent=func.closure, func=func, cls=func.cls)
        self.bind_params(func, frame, all_args, dict(kwargs))
        self.stack.append(func)
        self.executed.add(id(node))
        if isinstance(node, ast.Lambda):
            result = self.ev(node.body, frame)
        else:
            self.exec_block(node.body, frame)
            result = union(frame.returns) if frame.returns else Const(None)
            if result is UNKNOWN and node.returns is not None:
                fw = self.annotation_framework(node.returns, func)
                if fw:
                    result = self.param_server(("returns", id(node)), fw, f"returned by {func.qualname}()")
        self.stack.pop()
        if memo_key is not None:
            self.memo[memo_key] = result
        return result

    def bind_params(self, func: FuncV, frame, args: list, kwargs: dict) -> None:
        node = func.node
        spec = node.args
        positional = spec.posonlyargs + spec.args
        defaults = [None] * (len(positional) - len(spec.defaults)) + list(spec.defaults)
        def_frame = func.closure or func.module.frame
        for i, param in enumerate(positional):
            if i < len(args):
                value = args[i]
            elif param.arg in kwargs:
                value = kwargs.pop(param.arg)
            elif defaults[i] is not None:
                value = self.ev(defaults[i], def_frame)
            else:
                value = Param(param.arg, func.qualname, func.module)
            frame.vars[param.arg] = self.annotated(param, value, func)
        if spec.vararg is not None:
            frame.vars[spec.vararg.arg] = Seq(list(args[len(positional) :]))
        for param, default in zip(spec.kwonlyargs, spec.kw_defaults):
            if param.arg in kwargs:
                value = kwargs.pop(param.arg)
            elif default is not None:
                value = self.ev(default, def_frame)
            else:
                value = Param(param.arg, func.qualname, func.module)
            frame.vars[param.arg] = self.annotated(param, value, func)
        if spec.kwarg is not None:
            frame.vars[spec.kwarg.arg] = DictV([(Const(k), v) for k, v in kwargs.items()])

    def annotated(self, param: ast.arg, value: Value, func: FuncV) -> Value:
        if param.annotation is None or not (value is UNKNOWN or isinstance(value, Param)):
            return value
        fw = self.annotation_framework(param.annotation, func)
        if not fw:
            return value
        server = self.param_server(
            ("ann", id(func.node), param.arg), fw, f"parameter {func.qualname}({param.arg}: ...)"
        )
        server.site = (func.module, param.lineno)
        return server

    def annotation_framework(self, annotation: ast.AST, func: FuncV) -> str | None:
        frame = func.closure or func.module.frame
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return self.annotation_framework(annotation.left, func) or self.annotation_framework(annotation.right, func)
        if isinstance(annotation, ast.Subscript):
            inner = annotation.slice
            parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return next((fw for fw in (self.annotation_framework(p, func) for p in parts) if fw), None)
        for option in options(self.ev(annotation, frame)):
            fw = self.server_framework(option)
            if fw:
                return fw
        return None

    def param_server(self, key: Any, framework: str, label: str, inferred: bool = False) -> ServerV:
        server = self.inferred_servers.get(key)
        if server is None:
            server = ServerV(framework, label, inferred=inferred)
            self.inferred_servers[key] = server
            self.servers.append(server)
        return server

    def infer_server(self, param: Value) -> ServerV | None:
        """An unannotated receiver of .tool/.resource/.prompt/.add_tool in a module importing a framework."""
        if not isinstance(param, Param):
            return None
        framework = param.module.framework
        if framework is None:
            return None
        if framework == "mcp":
            framework = self.default_framework or "mcp"
        server = self.param_server(
            ("unannotated", param.func, param.name),
            framework,
            f"unannotated parameter {param.func}({param.name})",
            inferred=True,
        )
        server.site = (param.module, 0)
        return server

    def instantiate(self, cls: ClsV, node, args: list, kwargs: dict, frame=None, standalone: bool = False) -> Value:
        framework = self.server_framework(cls)
        if framework:
            module = frame.module if frame is not None else cls.module
            label = f"{module.rel}:{node.lineno}" if node is not None else f"{cls.qualname}() (standalone)"
            instance: Value = ServerV(
                framework, label, name=literal_str(args[0]) if args else literal_str(kwargs.get("name")), cls=cls
            )
            self.servers.append(instance)
        else:
            instance = InstV(cls)
        init = self.class_attr(cls, "__init__")
        if isinstance(init, FuncV):
            self.call_function(init, args, kwargs, receiver=instance, standalone=standalone)
        return instance

    def ext_call(self, qual: str, args: list, kwargs: dict, node, frame) -> Value:
        module = frame.module
        label = f"{module.rel}:{node.lineno}" if node is not None else module.rel
        if qual in SERVER_CLASSES:
            framework = SERVER_CLASSES[qual]
            server = ServerV(framework, label, name=literal_str(args[0]) if args else literal_str(kwargs.get("name")))
            mask = kwargs.get("mask_error_details")
            if isinstance(mask, Const) and isinstance(mask.value, bool):
                server.mask_error_details = mask.value
            elif mask is not None:
                server.mask_error_details = None
                server.attrs["__mask_expr__"] = True
            self.servers.append(server)
            if framework == LOWLEVEL:
                for keyword in LOWLEVEL_KEYWORDS:
                    if keyword in kwargs:
                        self.lowlevel_handler(server, keyword[3:], kwargs[keyword], node, frame, f"Server({keyword}=)")
            return server
        if qual in OPAQUE_SERVER_FACTORIES:
            server = ServerV(OPAQUE_SERVER_FACTORIES[qual], label, opaque=True)
            self.servers.append(server)
            return server
        if qual in FROM_FUNCTION:
            kind, framework = FROM_FUNCTION[qual]
            fn = args[0] if args else kwargs.get("fn", UNKNOWN)
            name = kwargs.get("name") if "name" in kwargs else (args[1] if len(args) > 1 else None)
            form = ".".join(qual.split(".")[-2:])
            return ComponentV(kind, framework, fn, literal_str(name), node, module, form)
        if qual in RESOURCE_OBJECTS:
            fn = kwargs.get("fn", UNKNOWN)
            component = ComponentV(
                "resource",
                RESOURCE_OBJECTS[qual],
                fn,
                literal_str(kwargs.get("name")),
                node,
                module,
                qual.rsplit(".", 1)[-1],
            )
            component.uri = literal_str(kwargs.get("uri"))
            return component
        if qual in STANDALONE_DECORATORS:
            kind = STANDALONE_DECORATORS[qual]
            if args and is_callable_value(args[0]):
                return self.standalone_component(kind, args[0], [], kwargs, node, frame, None)
            return StandaloneDecoV(kind, args, kwargs, node, module)
        if qual in LOWLEVEL_LISTED:
            name = kwargs.get("name") if "name" in kwargs else (args[0] if args else None)
            listed = ListedV(LOWLEVEL_LISTED[qual], literal_str(name), node, module)
            for collector in self.collectors:
                collector.append(listed)
            return listed
        if qual in LOWLEVEL_RESULTS:
            return kwargs.get(LOWLEVEL_RESULTS[qual], args[0] if args else UNKNOWN)
        if qual in RUNNERS and args and isinstance(args[0], FuncV):
            # anyio.run(run_server): the event loop calls it, so registrations in it are reached
            return self.call_function(args[0], list(args[1:]), {})
        if qual == "functools.partial":
            return PartialV(args[0]) if args else UNKNOWN
        if qual == "functools.wraps":
            return WrapsDecoV(args[0]) if args else UNKNOWN
        return self.builtin_call(qual, args, kwargs)

    def builtin_call(self, qual: str, args: list, kwargs: dict) -> Value:
        if not qual.startswith("builtins."):
            return UNKNOWN
        name = qual[len("builtins.") :]
        if name == "getattr" and len(args) >= 2 and literal_str(args[1]) is not None:
            return union([self.getattr_value(o, literal_str(args[1])) for o in options(args[0])])
        if name == "range" and args and all(isinstance(a, Const) and isinstance(a.value, int) for a in args):
            bounds = [a.value for a in args]
            numbers = range(*bounds)
            if len(numbers) <= 5000:
                return Seq([Const(n) for n in numbers])
        if name in ("list", "tuple", "sorted", "set", "frozenset", "reversed") and args:
            source = args[0]
            if isinstance(source, Seq):
                return Seq(list(source.items), source.approximate)
            if isinstance(source, DictV):
                return Seq([k for k, _ in source.items])
        if name == "enumerate" and args and isinstance(args[0], Seq):
            return Seq([Seq([Const(i), item]) for i, item in enumerate(args[0].items)])
        if name == "zip" and args and all(isinstance(a, Seq) for a in args):
            return Seq([Seq(list(group)) for group in zip(*(a.items for a in args))])
        if name == "dict":
            return DictV([(Const(k), v) for k, v in kwargs.items()])
        return UNKNOWN

    # -- server methods ---------------------------------------------------------------------------

    def method_call(self, method: MethodV, args: list, kwargs: dict, node, frame) -> Value:
        receiver = method.receiver
        server = receiver if isinstance(receiver, ServerV) else self.infer_server(receiver)
        if server is None:
            return UNKNOWN
        name = method.method
        if server.framework == LOWLEVEL:
            if name in LOWLEVEL_DECORATORS:
                return RegDecoV(server, name, args, kwargs, node, frame.module)
            return UNKNOWN
        if name in DECORATOR_METHODS:
            first = args[0] if args else kwargs.get("name_or_fn")
            if first is not None and (is_callable_value(first) or isinstance(first, ComponentV)):
                self.register(
                    DECORATOR_METHODS[name],
                    server,
                    first,
                    f"{name}(fn)",
                    node,
                    frame,
                    explicit=kwargs.get("name"),
                    version=kwargs.get("version"),
                )
                return first
            return RegDecoV(server, name, args, kwargs, node, frame.module)
        if name in ADD_METHODS:
            target = (
                args[0]
                if args
                else next((kwargs[k] for k in ("fn", "tool", "prompt", "resource", "template") if k in kwargs), UNKNOWN)
            )
            explicit = kwargs.get("name")
            if explicit is None and name == "add_tool" and len(args) > 1 and server.framework in (MCP1, MCP2):
                explicit = args[1]
            component = next((o for o in options(target) if isinstance(o, ComponentV)), None)
            kind_form = component.form.split(".")[0].lstrip("@") if component is not None else "fn"
            self.register(ADD_METHODS[name], server, target, f"{name}({kind_form})", node, frame, explicit=explicit)
            return target
        if name in MOUNT_METHODS:
            child = kwargs.get("server")
            prefix = kwargs.get("prefix", kwargs.get("namespace"))
            if args and literal_str(args[0]) is not None and len(args) > 1:
                prefix, child = prefix or args[0], child or args[1]
            else:
                if args and child is None:
                    child = args[0]
                if len(args) > 1 and prefix is None:
                    prefix = args[1]
            self.mounts.append((server, child, literal_str(prefix), node, frame.module, name))
            return Const(None)
        return UNKNOWN

    # -- decorators -------------------------------------------------------------------------------

    def apply_decorator(self, decorator: Value, fn: Value, node: ast.AST, frame, def_node) -> Value:
        results = [self._apply_one(option, fn, node, frame, def_node) for option in options(decorator)]
        return results[0] if len(results) == 1 else union(results)

    def _apply_one(self, decorator: Value, fn: Value, node, frame, def_node) -> Value:
        if isinstance(decorator, RegDecoV):
            self.apply_regdeco(decorator, fn, node, frame, def_node)
            return fn
        if isinstance(decorator, MethodV):
            server = (
                decorator.receiver if isinstance(decorator.receiver, ServerV) else self.infer_server(decorator.receiver)
            )
            if server is not None and decorator.method in DECORATOR_METHODS:
                notes = []
                if server.framework in (MCP1, MCP2):
                    notes.append(f"bare @{decorator.method} without (): {server.framework} raises TypeError at import")
                self.register(
                    DECORATOR_METHODS[decorator.method],
                    server,
                    fn,
                    f"@{decorator.method}",
                    node,
                    frame,
                    def_node=def_node,
                    notes=notes,
                )
            elif server is not None and server.framework == LOWLEVEL:
                self.lowlevel_handler(server, decorator.method, fn, node, frame, f"@{decorator.method} (bare)")
            return fn
        if isinstance(decorator, StandaloneDecoV):
            return self.standalone_component(
                decorator.kind, fn, decorator.args, decorator.kwargs, node, frame, def_node
            )
        if isinstance(decorator, Ext):
            if decorator.qual in STANDALONE_DECORATORS:
                return self.standalone_component(
                    STANDALONE_DECORATORS[decorator.qual], fn, [], {}, node, frame, def_node
                )
            if decorator.qual in ("builtins.staticmethod", "builtins.property") and isinstance(fn, FuncV):
                marked = dataclasses.replace(fn)
                setattr(marked, "static" if decorator.qual.endswith("staticmethod") else "prop", True)
                self.func_values[id(fn.node)] = marked
                return marked
            return WrappedV(None, fn, True, f"decorator {decorator.qual}")
        if isinstance(decorator, WrapsDecoV):
            return WrappedV(fn, decorator.inner, True, "functools.wraps")
        if isinstance(decorator, (FuncV, BoundV, PartialV)):
            label = short_source(node, 40)
            result = self.call_value(decorator, [fn], {}, node, frame)
            if result is fn:
                return fn
            if isinstance(result, (WrappedV, ComponentV)):
                return result
            if isinstance(result, UnionV) and all(isinstance(o, (WrappedV, ComponentV)) for o in result.options):
                return result  # ``return async_wrapper if iscoroutinefunction(f) else sync_wrapper``
            if is_callable_value(result):
                return WrappedV(
                    result, fn, False, f"decorator {label} returns another function without functools.wraps"
                )
            return WrappedV(None, fn, True, f"decorator {label} (its result is not followed)")
        return WrappedV(None, fn, True, f"decorator {short_source(node, 40)}")

    def apply_regdeco(self, deco: RegDecoV, fn: Value, site: ast.AST, frame, def_node) -> None:
        server = deco.server
        prefix = "@" if def_node is not None else ""
        if server.framework == LOWLEVEL:
            self.lowlevel_handler(server, deco.method, fn, site, frame, f"{prefix}{deco.method}()", def_node=def_node)
            return
        kind = DECORATOR_METHODS[deco.method]
        first = deco.args[0] if deco.args else None
        explicit = deco.kwargs.get("name")
        uri = None
        if kind == "resource":
            uri = literal_str(first if first is not None else deco.kwargs.get("uri"))
        elif explicit is None and name_text(first) is not None:
            explicit = first
        named = "name=" if explicit is not None else ("uri" if uri else "")
        form = f"{prefix}{deco.method}({named})" + ("" if def_node is not None else "(fn)")
        self.register(
            kind,
            server,
            fn,
            form,
            site,
            frame,
            explicit=explicit,
            uri=uri,
            def_node=def_node,
            version=deco.kwargs.get("version"),
        )

    def standalone_component(self, kind: str, fn: Value, args: list, kwargs: dict, site, frame, def_node) -> Value:
        name = literal_str(kwargs.get("name")) or (literal_str(args[0]) if args and kind != "resource" else None)
        registration = self.register(
            kind,
            None,
            fn,
            f"@{kind} (fastmcp.{kind}s standalone)",
            site,
            frame,
            explicit=Const(name) if name else None,
            uri=literal_str(args[0]) if args and kind == "resource" else None,
            def_node=def_node,
        )
        component = ComponentV(kind, FASTMCP, fn, name, site, frame.module, f"@{kind}")
        component.registration = registration
        return component
