"""Calls, decorators and registrations for the census interpreter (mixed into ``UnitInterpreter``).

This is where the frameworks' run-time behaviour is modelled: what ``FastMCP(...)`` builds, what
``mcp.tool(...)`` returns and what it does when applied, how a tool's name is computed (``name=``, else
the function's ``__name__``, which ``functools.wraps`` copies and ``functools.partial`` lacks), what
``Tool.from_function`` and ``add_tool`` take, what the low-level server's handlers list.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Optional

from census_values import (
    ADD_METHODS, DECORATOR_METHODS, FASTMCP, FROM_FUNCTION, LOWLEVEL, LOWLEVEL_DECORATORS,
    LOWLEVEL_KEYWORDS, LOWLEVEL_LISTED, LOWLEVEL_RESULTS, MCP1, MCP2, MOUNT_METHODS,
    OPAQUE_SERVER_FACTORIES, RESOURCE_OBJECTS, SERVER_CLASSES, STANDALONE_DECORATORS, UNKNOWN, BoundV, ClsV, ComponentV,
    Const, DictMethodV, PartialStr, DictV, Ext, FuncV, InstV, ListedV, ListMethodV, MethodV, Param, PartialV,
    RegDecoV, Seq, ServerV, StandaloneDecoV, UnionV, Value, WrappedV, WrapsDecoV, is_callable_value,
    options, union,
)

MAX_DEPTH = 14
RUNNERS = {"anyio.run", "trio.run", "asyncio.run", "uvloop.run"}
STATEMENT_BUDGET = 400_000


def _str(value: Any) -> Optional[str]:
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value
    return None


def _name_text(value: Any) -> Optional[str]:
    """A literal name, or the pattern of a partly computed one (``{?}list_instances``)."""
    if isinstance(value, PartialStr):
        return value.pattern
    if isinstance(value, UnionV):
        texts = {_name_text(o) for o in value.options}
        return texts.pop() if len(texts) == 1 else None
    return _str(value)


def _short(node: ast.AST, limit: int = 70) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class CallsMixin:
    default_framework: Optional[str] = None

    # -- calls ------------------------------------------------------------------------------------

    def call_value(self, func: Value, args: list, kwargs: dict, node: Optional[ast.AST], frame) -> Value:
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

    def call_function(self, func: FuncV, args: list, kwargs: dict, receiver: Optional[Value] = None,
                      standalone: bool = False) -> Value:
        if self.statements > STATEMENT_BUDGET or len(self.stack) >= MAX_DEPTH:
            return UNKNOWN
        node = func.node
        if any(f.node is node for f in self.stack):
            return UNKNOWN
        all_args = ([receiver] if receiver is not None else []) + list(args)
        memo_key = None
        if not self.collectors:
            memo_key = (id(node), id(func.closure), tuple(a.key() for a in all_args),
                        tuple(sorted((k, v.key()) for k, v in kwargs.items())), self.standalone)
            if memo_key in self.memo:
                return self.memo[memo_key]
            self.memo[memo_key] = UNKNOWN
        from census_interp import Frame
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
            frame.vars[spec.vararg.arg] = Seq(list(args[len(positional):]))
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
        server = self.param_server(("ann", id(func.node), param.arg), fw, f"parameter {func.qualname}({param.arg}: ...)")
        server.site = (func.module, param.lineno)
        return server

    def annotation_framework(self, annotation: ast.AST, func: FuncV) -> Optional[str]:
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

    def infer_server(self, param: Value) -> Optional[ServerV]:
        """An unannotated receiver of .tool/.resource/.prompt/.add_tool in a module importing a framework."""
        if not isinstance(param, Param):
            return None
        framework = param.module.framework
        if framework is None:
            return None
        if framework == "mcp":
            framework = self.default_framework or "mcp"
        server = self.param_server(("unannotated", param.func, param.name), framework,
                                   f"unannotated parameter {param.func}({param.name})", inferred=True)
        server.site = (param.module, 0)
        return server

    def instantiate(self, cls: ClsV, node, args: list, kwargs: dict, frame=None, standalone: bool = False) -> Value:
        framework = self.server_framework(cls)
        if framework:
            module = frame.module if frame is not None else cls.module
            label = f"{module.rel}:{node.lineno}" if node is not None else f"{cls.qualname}() (standalone)"
            instance: Value = ServerV(framework, label, name=_str(args[0]) if args else _str(kwargs.get("name")), cls=cls)
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
            server = ServerV(framework, label, name=_str(args[0]) if args else _str(kwargs.get("name")))
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
            return ComponentV(kind, framework, fn, _str(name), node, module, form)
        if qual in RESOURCE_OBJECTS:
            fn = kwargs.get("fn", UNKNOWN)
            component = ComponentV("resource", RESOURCE_OBJECTS[qual], fn, _str(kwargs.get("name")), node, module,
                                   qual.rsplit(".", 1)[-1])
            component.uri = _str(kwargs.get("uri"))
            return component
        if qual in STANDALONE_DECORATORS:
            kind = STANDALONE_DECORATORS[qual]
            if args and is_callable_value(args[0]):
                return self.standalone_component(kind, args[0], [], kwargs, node, frame, None)
            return StandaloneDecoV(kind, args, kwargs, node, module)
        if qual in LOWLEVEL_LISTED:
            name = kwargs.get("name") if "name" in kwargs else (args[0] if args else None)
            listed = ListedV(LOWLEVEL_LISTED[qual], _str(name), node, module)
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
        name = qual[len("builtins."):]
        if name == "getattr" and len(args) >= 2 and _str(args[1]) is not None:
            return union([self.getattr_value(o, _str(args[1])) for o in options(args[0])])
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
                self.register(DECORATOR_METHODS[name], server, first, f"{name}(fn)", node, frame,
                              explicit=kwargs.get("name"), version=kwargs.get("version"))
                return first
            return RegDecoV(server, name, args, kwargs, node, frame.module)
        if name in ADD_METHODS:
            target = args[0] if args else next(
                (kwargs[k] for k in ("fn", "tool", "prompt", "resource", "template") if k in kwargs), UNKNOWN)
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
            if args and _str(args[0]) is not None and len(args) > 1:
                prefix, child = prefix or args[0], child or args[1]
            else:
                if args and child is None:
                    child = args[0]
                if len(args) > 1 and prefix is None:
                    prefix = args[1]
            self.mounts.append((server, child, _str(prefix), node, frame.module, name))
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
            server = decorator.receiver if isinstance(decorator.receiver, ServerV) else self.infer_server(decorator.receiver)
            if server is not None and decorator.method in DECORATOR_METHODS:
                notes = []
                if server.framework in (MCP1, MCP2):
                    notes.append(f"bare @{decorator.method} without (): {server.framework} raises TypeError at import")
                self.register(DECORATOR_METHODS[decorator.method], server, fn, f"@{decorator.method}", node, frame,
                              def_node=def_node, notes=notes)
            elif server is not None and server.framework == LOWLEVEL:
                self.lowlevel_handler(server, decorator.method, fn, node, frame, f"@{decorator.method} (bare)")
            return fn
        if isinstance(decorator, StandaloneDecoV):
            return self.standalone_component(decorator.kind, fn, decorator.args, decorator.kwargs, node, frame, def_node)
        if isinstance(decorator, Ext):
            if decorator.qual in STANDALONE_DECORATORS:
                return self.standalone_component(STANDALONE_DECORATORS[decorator.qual], fn, [], {}, node, frame, def_node)
            if decorator.qual in ("builtins.staticmethod", "builtins.property") and isinstance(fn, FuncV):
                marked = dataclasses.replace(fn)
                setattr(marked, "static" if decorator.qual.endswith("staticmethod") else "prop", True)
                self.func_values[id(fn.node)] = marked
                return marked
            return WrappedV(None, fn, True, f"decorator {decorator.qual}")
        if isinstance(decorator, WrapsDecoV):
            return WrappedV(fn, decorator.inner, True, "functools.wraps")
        if isinstance(decorator, (FuncV, BoundV, PartialV)):
            label = _short(node, 40)
            result = self.call_value(decorator, [fn], {}, node, frame)
            if result is fn:
                return fn
            if isinstance(result, (WrappedV, ComponentV)):
                return result
            if isinstance(result, UnionV) and all(isinstance(o, (WrappedV, ComponentV)) for o in result.options):
                return result       # ``return async_wrapper if iscoroutinefunction(f) else sync_wrapper``
            if is_callable_value(result):
                return WrappedV(result, fn, False, f"decorator {label} returns another function without functools.wraps")
            return WrappedV(None, fn, True, f"decorator {label} (its result is not followed)")
        return WrappedV(None, fn, True, f"decorator {_short(node, 40)}")

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
            uri = _str(first if first is not None else deco.kwargs.get("uri"))
        elif explicit is None and _name_text(first) is not None:
            explicit = first
        named = "name=" if explicit is not None else ("uri" if uri else "")
        form = f"{prefix}{deco.method}({named})" + ("" if def_node is not None else "(fn)")
        self.register(kind, server, fn, form, site, frame, explicit=explicit, uri=uri, def_node=def_node,
                      version=deco.kwargs.get("version"))

    def standalone_component(self, kind: str, fn: Value, args: list, kwargs: dict, site, frame, def_node) -> Value:
        name = _str(kwargs.get("name")) or (_str(args[0]) if args and kind != "resource" else None)
        registration = self.register(kind, None, fn, f"@{kind} (fastmcp.{kind}s standalone)", site, frame,
                                     explicit=Const(name) if name else None,
                                     uri=_str(args[0]) if args and kind == "resource" else None, def_node=def_node)
        component = ComponentV(kind, FASTMCP, fn, name, site, frame.module, f"@{kind}")
        component.registration = registration
        return component

    # -- the low-level server ---------------------------------------------------------------------

    def lowlevel_handler(self, server: ServerV, method: str, fn: Value, site, frame, form: str, def_node=None) -> None:
        role, kind = LOWLEVEL_DECORATORS[method]
        if role == "dispatcher":
            label = f"server '{server.name}' {method}" if server.name else f"server {server.label} {method}"
            self.register("dispatcher" if kind == "tool" else f"{kind}-dispatcher", server, fn, form, site, frame,
                          explicit=Const(label), def_node=def_node)
            return
        for option in options(fn):
            handler = self.handler_of(option)[0]
            if not isinstance(handler, FuncV):
                continue
            self.lister_sites.add((frame.module.rel, site.lineno))
            collector: list = []
            self.collectors.append(collector)
            result = self.call_function(handler, [], {})
            self.collectors.pop()
            # module-level lists the handler reads (``SAMPLE_TOOLS = [types.Tool(...) for i in range(25)]``)
            referenced = []
            if not isinstance(handler.node, ast.Lambda):
                handler_frame = handler.closure or handler.module.frame
                for name in sorted({n.id for n in ast.walk(handler.node) if isinstance(n, ast.Name)}):
                    referenced.extend(_flatten(self.lookup(name, handler_frame)))
            listed, seen = [], set()
            for item in collector + _flatten(result) + referenced:
                marker = (id(item.site), item.name)
                if item.kind == kind and marker not in seen:
                    seen.add(marker)
                    listed.append(item)
            approximate = any(isinstance(v, Seq) and v.approximate for v in _walk_seqs(result))
            for item in listed:
                self.register(f"listed-{kind}", server, UNKNOWN, f"{method} -> types.{kind.title()}(name=)",
                              item.site, frame, explicit=Const(item.name) if item.name else None,
                              module_override=item.module, lister=handler,
                              notes=["approximate (filtered or partly unknown list)"] if approximate else [])

    # -- registrations ----------------------------------------------------------------------------

    def handler_of(self, fn: Value) -> tuple:
        """(def FuncV or None, handler form, the framework's default name, notes)."""
        if isinstance(fn, FuncV):
            if isinstance(fn.node, ast.Lambda):
                form = "lambda"
            elif fn.cls is not None:
                form = "method"
            elif fn.closure is not None:
                form = "nested def"
            else:
                form = "def"
            return fn, form, fn.name, []
        if isinstance(fn, BoundV):
            return fn.func, "self.method" if fn.via_self else "bound method", fn.func.name, []
        if isinstance(fn, PartialV):
            inner = self.handler_of(fn.func)
            return inner[0], f"partial({inner[1]})", None, inner[3] + ["functools.partial has no __name__: name= is needed"]
        if isinstance(fn, WrappedV):
            inner = self.handler_of(fn.inner)
            name = inner[2] if fn.wraps or fn.outer is None else self.handler_of(fn.outer)[2]
            return inner[0], f"wrapped {inner[1]}", name, inner[3] + [fn.note]
        if isinstance(fn, ComponentV):
            inner = self.handler_of(fn.fn)
            if inner[0] is None and fn.kind == "resource":
                return None, f"{fn.form} object", fn.name, []
            return inner[0], f"{fn.form}({inner[1]})", fn.name or inner[2], inner[3]
        if isinstance(fn, Param):
            return None, f"unresolved (parameter {fn.name})", None, []
        if isinstance(fn, UnionV):
            for option in fn.options:
                inner = self.handler_of(option)
                if inner[0] is not None:
                    return inner[0], inner[1], inner[2], inner[3] + ["one of several values"]
            return None, "unresolved (several values)", None, []
        return None, "unresolved", None, []

    def register(self, kind: str, server: Optional[ServerV], fn: Value, form: str, site, frame, explicit=None,
                 uri=None, def_node=None, notes=None, module_override=None, lister=None, version=None):
        from census_interp import Registration
        module = module_override or frame.module
        last = None
        for option in options(fn) if fn is not UNKNOWN else [UNKNOWN]:
            if isinstance(option, ComponentV) and getattr(option, "registration", None) is not None and server is not None:
                attached = option.registration
                attached.server, attached.server_name = server.label, server.name
                attached.framework, attached.server_ref = server.framework, server
                attached.form = f"{form} of {attached.form}"
                last = attached
                continue
            handler, handler_form, default_name, handler_notes = self.handler_of(option)
            if lister is not None:
                handler, handler_form = lister, "list_tools handler"
            name = _name_text(explicit) if explicit is not None else default_name
            if explicit is not None and _str(explicit) is None:
                handler_notes = handler_notes + [f"name= is computed: {type(explicit).__name__}"]
            decorators = []
            if def_node is not None:
                decorators = [_short(d, 60) for d in def_node.decorator_list if d is not site]
            registration = Registration(
                kind=kind, framework=server.framework if server is not None else FASTMCP, form=form, name=name,
                file=module.rel, line=site.lineno, col=site.col_offset,
                handler=handler.qualname if handler is not None else None,
                handler_file=handler.module.rel if handler is not None else None,
                handler_line=handler.node.lineno if handler is not None else None,
                handler_form=handler_form, server=server.label if server is not None else None,
                server_name=server.name if server is not None else None, scope=frame.scope_name(),
                via=[f.qualname for f in self.stack], call_sites=list(self.site_stack), conditional=self.cond_depth > 0, loop=self.loop_depth > 0,
                reached=not self.standalone, decorators=decorators, uri=uri or getattr(option, "uri", None),
                notes=list(notes or []) + [n for n in handler_notes if n],
            )
            registration.server_ref = server
            registration.handler_ref = handler
            registration.receiver_ref = option.receiver if isinstance(option, BoundV) else None
            registration.handler_node = handler.node if handler is not None else None
            registration.handler_module = handler.module if handler is not None else None
            handler_key = option.key() if lister is None else ("listed", id(site), name)
            registration.version = _name_text(version) if version is not None else None
            registration.dedupe = (module.rel, site.lineno, site.col_offset, kind, handler_key, name)
            last = self.add_registration(registration)
        return last

    def add_registration(self, registration):
        """One definition per (server, kind, name), as the frameworks keep it (a second registration of a
        name replaces or is refused); by site and handler where the name or server is unknown. What a
        standalone run (parameters unknown) finds at a site a real run reached is the same registration."""
        site = registration.dedupe[:4]
        if registration.reached:
            if registration.name is not None and registration.server_ref is not None:
                # servers built at one constructor site are one server (a factory called twice, both
                # branches of an if): the census counts what one process serves
                key = ("name", registration.kind, registration.server_ref.label, registration.name,
                       registration.version)
            else:
                key = ("site",) + registration.dedupe
        else:
            if any(existing.reached for existing in self._by_site.get(site, ())):
                return self._by_site[site][0]
            key = ("standalone",) + registration.dedupe
        existing = self._keys.get(key)
        if existing is not None:
            where = f"{registration.file}:{registration.line}"
            if (existing.file, existing.line) != (registration.file, registration.line) and where not in existing.notes:
                existing.notes.append(f"registered again at {where}")
            return existing
        self._keys[key] = registration
        self._by_site.setdefault(site, []).append(registration)
        self.registrations.append(registration)
        return registration

    def apply_mounts(self) -> None:
        parents: dict = {}
        for parent, child, prefix, _node, _module, _method in self.mounts:
            for option in options(child) if child is not None else []:
                if isinstance(option, ServerV):
                    parents.setdefault(id(option), []).append((parent, prefix))

        def expand(server, name, depth=0):
            out = []
            for parent, prefix in parents.get(id(server), []):
                if depth > 8:
                    break
                mounted = f"{prefix}_{name}" if prefix and name else name
                out.append(mounted)
                out.extend(expand(parent, mounted, depth + 1))
            return out

        for registration in self.registrations:
            if registration.server_ref is not None and registration.kind in ("tool", "prompt"):
                names = expand(registration.server_ref, registration.name)
                registration.mounted_as = [n for n in names if n != registration.name]


def _flatten(value: Value) -> list:
    out = []
    for option in options(value):
        if isinstance(option, ListedV):
            out.append(option)
        elif isinstance(option, Seq):
            for item in option.items:
                out.extend(_flatten(item))
    return out


def _walk_seqs(value: Value) -> list:
    out = []
    for option in options(value):
        if isinstance(option, Seq):
            out.append(option)
            for item in option.items:
                out.extend(_walk_seqs(item))
    return out
