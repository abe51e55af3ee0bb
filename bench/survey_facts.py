"""Per-function facts for the corpus survey (``corpus_survey.py``): raises, returns, except clauses, calls.

Plain ``ast`` over a function's own body (nested defs, lambdas and classes are their own functions),
with names resolved through the census interpreter's module frames — the same resolution the census
used to find the handlers, so "this callee is ``HttpRepo.get`` in another file" means what it says.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

from census_values import UNKNOWN, BoundV, ClsV, Ext, FuncV, InstV, ModV, PartialV, ServerV, WrappedV, options

ERROR_WORD = re.compile(r"^\s*(error|failed|failure|exception|unable|cannot|can't|could not)\b", re.IGNORECASE)
TOOL_ERRORS = {
    "fastmcp.exceptions.ToolError",
    "mcp.server.fastmcp.exceptions.ToolError",
    "mcp.server.mcpserver.exceptions.ToolError",
}
PROTOCOL_ERRORS = {"mcp.shared.exceptions.McpError", "mcp.shared.exceptions.MCPError", "mcp.McpError", "mcp.MCPError"}
GUARDS = {"TypeError", "AssertionError", "NotImplementedError"}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


_OWN_CACHE: dict = {}


def own_nodes(func_node: ast.AST):
    """Every node of a function's body, not entering nested functions or classes; with parents."""
    cached = _OWN_CACHE.get(id(func_node))
    if cached is not None and cached[0] is func_node:
        return cached[1], cached[2]
    parents = {}
    stack = [func_node]
    out = []
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            parents[child] = node
            out.append(child)
            if not isinstance(child, _SCOPES):
                stack.append(child)
    _OWN_CACHE[id(func_node)] = (func_node, out, parents)
    return out, parents


def awaits(nodes: list) -> bool:
    for stmt in nodes:
        for node in [stmt] + own_nodes(stmt)[0]:
            if isinstance(node, (ast.Await, ast.AsyncWith, ast.AsyncFor)):
                return True
    return False


def error_string(node: ast.AST | None) -> str | None:
    """The leading text of a string expression when it starts with an error word."""
    text = None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        text = str(node.values[0].value)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return error_string(node.left)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return error_string(node.func.value)
    if text is not None and ERROR_WORD.match(text) and not re.match(r"^\s*Exception\(", text):
        return text
    return None


def error_key_dict(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and key.value in ("error", "errors"):
                if not (isinstance(value, ast.Constant) and value.value in (None, False, "")):
                    return key.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        for keyword in node.keywords:
            if keyword.arg in ("error", "errors"):
                return keyword.arg
    return None


def names_in(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def exception_text_uses(node: ast.AST, exc: str) -> list:
    """``str(e)``, ``f"{e}"``/``{e!s}``, ``{e!r}``, ``repr(e)``, ``e.args`` of the caught exception ``exc``."""
    found = []
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Name)
            and sub.func.id in ("str", "repr")
            and len(sub.args) == 1
            and isinstance(sub.args[0], ast.Name)
            and sub.args[0].id == exc
        ):
            found.append(f"{sub.func.id}({exc})")
        elif isinstance(sub, ast.FormattedValue) and isinstance(sub.value, ast.Name) and sub.value.id == exc:
            found.append("{%s!r}" % exc if sub.conversion == ord("r") else "{%s}" % exc)
        elif (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == exc
            and sub.attr == "args"
        ):
            found.append(f"{exc}.args")
    return found


@dataclass
class Raise:
    node: ast.Raise
    category: str  # builtin | guard | custom | ToolError | McpError | reraise | external | unknown
    type_name: str
    py_class: type | None  # the builtin class (or a custom class's builtin base) for catch matching
    caught: str = "escapes"  # escapes | caught | caught-and-reraised


@dataclass
class Facts:
    func: FuncV
    raises: list = field(default_factory=list)
    returns: list = field(default_factory=list)  # (Return node, enclosing ExceptHandler or None)
    handlers: list = field(default_factory=list)  # (ExceptHandler, Try, category, try-body awaits)
    suppress: list = field(default_factory=list)  # (With node, [names], body awaits)
    calls: list = field(default_factory=list)  # (Call node, enclosing Try handlers [(types, reraises)])
    parents: dict = field(default_factory=dict)


class FactsBuilder:
    def __init__(self, interpreter):
        self.interp = interpreter
        self.cache: dict = {}
        self.assign_cache: dict = {}
        # every function and method name the unit defines: a call to any other name is not unit code
        self.unit_defs = {
            node.name
            for module in interpreter.modules
            for node in ast.walk(module.tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }

    def frame_of(self, func: FuncV):
        return func.closure or func.module.frame

    def resolve_expr(self, node: ast.AST, func: FuncV):
        if isinstance(node, (ast.Name, ast.Attribute)) and not _has_call(node):
            try:
                return self.interp.ev(node, self.frame_of(func))
            except RecursionError:
                return UNKNOWN
        return UNKNOWN

    def facts(self, func: FuncV) -> Facts:
        cached = self.cache.get(id(func.node))
        if cached is not None:
            return cached
        facts = Facts(func)
        nodes, parents = own_nodes(func.node)
        facts.parents = parents
        for node in nodes:
            if isinstance(node, ast.Raise):
                facts.raises.append(self.classify_raise(node, func, parents))
            elif isinstance(node, ast.Return) and node.value is not None:
                facts.returns.append((node, _enclosing_handler(node, parents)))
            elif isinstance(node, ast.ExceptHandler):
                try_node = parents[node]
                facts.handlers.append((node, try_node, self.handler_category(node, func), awaits(try_node.body)))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call):
                        target = self.resolve_expr(call.func, func)
                        if isinstance(target, Ext) and target.qual == "contextlib.suppress":
                            facts.suppress.append((node, [ast.unparse(a) for a in call.args], awaits(node.body)))
            elif isinstance(node, ast.Call):
                facts.calls.append((node, self.enclosing_catches(node, parents, func)))
        for raised in facts.raises:
            raised.caught = self.local_catch(raised, parents, func)
        self.cache[id(func.node)] = facts
        return facts

    # -- raises and catches -----------------------------------------------------------------------

    def classify_raise(self, node: ast.Raise, func: FuncV, parents: dict) -> Raise:
        if node.exc is None:
            return Raise(node, "reraise", "raise", None)
        target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        handler = _enclosing_handler(node, parents)
        if isinstance(target, ast.Name) and handler is not None and handler.name == target.id:
            return Raise(node, "reraise", f"raise {target.id}", None)
        for value in options(self.resolve_expr(target, func)):
            if isinstance(value, Ext):
                qual = value.qual
                if qual in TOOL_ERRORS:
                    return Raise(node, "ToolError", qual.rsplit(".", 1)[-1], None)
                if qual in PROTOCOL_ERRORS:
                    return Raise(node, "McpError", qual.rsplit(".", 1)[-1], None)
                if qual.startswith("builtins."):
                    cls = getattr(builtins, qual[9:], None)
                    if isinstance(cls, type) and issubclass(cls, BaseException):
                        return Raise(node, "guard" if cls.__name__ in GUARDS else "builtin", cls.__name__, cls)
                return Raise(node, "external", qual, None)
            if isinstance(value, ClsV):
                return Raise(node, "custom", value.qualname, self.builtin_base(value))
        return Raise(node, "unknown", ast.unparse(target)[:40], None)

    def builtin_base(self, cls, seen=None) -> type | None:
        seen = seen or set()
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        for base in cls.bases:
            for option in options(base):
                if isinstance(option, Ext):
                    if option.qual in TOOL_ERRORS or option.qual in PROTOCOL_ERRORS:
                        return Exception
                    found = getattr(builtins, option.qual[9:], None) if option.qual.startswith("builtins.") else None
                    if isinstance(found, type) and issubclass(found, BaseException):
                        return found
                    return Exception
                if isinstance(option, ClsV):
                    found = self.builtin_base(option, seen)
                    if found:
                        return found
        return None

    def handler_types(self, handler: ast.ExceptHandler, func: FuncV) -> list:
        """The classes an except clause names: Python classes for builtins, else qualified names."""
        if handler.type is None:
            return [BaseException]
        parts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        out = []
        for part in parts:
            for value in options(self.resolve_expr(part, func)):
                if isinstance(value, Ext) and value.qual.startswith("builtins."):
                    cls = getattr(builtins, value.qual[9:], None)
                    out.append(cls if isinstance(cls, type) else value.qual)
                elif isinstance(value, Ext):
                    out.append(value.qual)
                elif isinstance(value, ClsV):
                    out.append(value.qualname)
                else:
                    out.append(ast.unparse(part))
        return out

    def handler_category(self, handler: ast.ExceptHandler, func: FuncV) -> str:
        if handler.type is None:
            return "bare except"
        names = [t.__name__ if isinstance(t, type) else str(t) for t in self.handler_types(handler, func)]
        if "BaseException" in names:
            return "except BaseException"
        if any(n.endswith("CancelledError") for n in names):
            return "except CancelledError"
        if "Exception" in names:
            return "except Exception"
        return "specific"

    def matches(self, types: list, raised: Raise) -> bool:
        for t in types:
            if isinstance(t, type) and t in (BaseException, Exception) and raised.category not in ("reraise",):
                return True
            if isinstance(t, type) and raised.py_class is not None and issubclass(raised.py_class, t):
                return True
            if (
                isinstance(t, str)
                and raised.type_name
                and (t == raised.type_name or t.endswith("." + raised.type_name))
            ):
                return True
        return False

    def local_catch(self, raised: Raise, parents: dict, func: FuncV) -> str:
        if raised.category == "reraise":
            return "escapes"
        child, node = raised.node, parents.get(raised.node)
        while node is not None and node is not func.node:
            if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))) and child in node.body:
                for handler in node.handlers:
                    if self.matches(self.handler_types(handler, func), raised):
                        reraises = any(isinstance(n, ast.Raise) for n in own_nodes(handler)[0])
                        return "caught-and-reraised" if reraises else "caught"
            child, node = node, parents.get(node)
        return "escapes"

    def enclosing_catches(self, node: ast.AST, parents: dict, func: FuncV) -> list:
        out = []
        child, parent = node, parents.get(node)
        while parent is not None and parent is not func.node:
            if isinstance(parent, ast.Try) and child in parent.body:
                for handler in parent.handlers:
                    reraises = any(isinstance(n, ast.Raise) for n in own_nodes(handler)[0])
                    out.append((self.handler_types(handler, func), reraises))
            child, parent = parent, parents.get(parent)
        return out

    # -- callees ----------------------------------------------------------------------------------

    def resolve_call(self, call: ast.Call, func: FuncV, receiver=None):
        """(FuncV or None, how) for a call in ``func``; ``how`` names the form either way."""
        target = call.func
        called = (
            target.attr if isinstance(target, ast.Attribute) else (target.id if isinstance(target, ast.Name) else None)
        )
        if called is not None and called not in self.unit_defs:
            return None, "not unit code"
        if isinstance(target, ast.Call):
            inner = target.func
            if isinstance(inner, ast.Name) and inner.id == "getattr":
                return None, "getattr(obj, name)(...)"
            return None, "call of a call's result"
        if isinstance(target, ast.Subscript):
            return None, "table[key](...) (dict or list of functions)"
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id in ("self", "cls")
        ):
            cls = (
                func.cls if func.cls is not None else (receiver.cls if isinstance(receiver, (InstV, ServerV)) else None)
            )
            if isinstance(cls, ClsV):
                found, owner = self.class_lookup(cls, target.attr)
                if isinstance(found, FuncV):
                    how = (
                        "self.method"
                        if owner is cls
                        else (
                            "inherited method (base in another file)"
                            if owner.module is not cls.module
                            else "inherited method (base in the same file)"
                        )
                    )
                    return found, how
                attr = self.self_attribute(cls, target.attr)
                if attr is not None:
                    return None, attr
            return None, "self.<attribute> (unknown)"
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Attribute)
            and isinstance(target.value.value, ast.Name)
            and target.value.value.id == "self"
        ):
            cls = func.cls
            held = self.self_attribute_value(cls, target.value.attr) if isinstance(cls, ClsV) else None
            if isinstance(held, ClsV):
                found, _owner = self.class_lookup(held, target.attr)
                if isinstance(found, FuncV):
                    return found, "self.<service>.method (service class in the unit)"
            return None, "self.<client>.method (object from outside the unit or unknown)"
        if isinstance(target, ast.Name) and not isinstance(func.node, ast.Lambda):
            for node in own_nodes(func.node)[0]:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == target.id:
                    return FuncV(func.module, node, f"{func.qualname}.{node.name}"), "nested function"
        local = self.local_binding(target, func)
        if local is not None:
            return local
        value = self.resolve_expr(target, func) if isinstance(target, (ast.Name, ast.Attribute)) else UNKNOWN
        for option in options(value):
            fn, how = self.callable_of(option)
            if fn is not None or how != "unknown":
                return fn, how
        if isinstance(target, ast.Attribute):
            owner = self.resolve_expr(target.value, func) if not _has_call(target.value) else UNKNOWN
            if owner is UNKNOWN and isinstance(target.value, ast.Name):
                return None, "method of a module-level object the census could not build (factory/global)"
            if isinstance(owner, Ext):
                return None, "external library"
            if _has_call(target.value):
                return None, "method on a call's result (factory().method())"
        if isinstance(target, ast.Name) and target.id in dir(builtins):
            return None, "builtin"
        return None, "unknown"

    def callable_of(self, value):
        if isinstance(value, FuncV):
            return value, "function" if value.cls is None else "method"
        if isinstance(value, BoundV):
            return value.func, "method of a module-level instance"
        if isinstance(value, PartialV):
            return self.callable_of(value.func)
        if isinstance(value, WrappedV):
            return self.callable_of(value.inner)
        if isinstance(value, ClsV):
            init, _ = self.class_lookup(value, "__init__")
            if isinstance(init, FuncV):
                return init, "constructor"
            return None, "not unit code"  # a model, dataclass or exception: no __init__ of the unit's to follow
        if isinstance(value, Ext):
            return None, "builtin" if value.qual.startswith("builtins.") else "external library"
        if isinstance(value, ModV):
            return None, "module"
        return None, "unknown"

    def local_binding(self, target: ast.AST, func: FuncV):
        """Calls through a local variable: ``handler = HANDLERS[name]; handler()``, ``repo = Repo(); repo.get()``."""
        name = (
            target.id
            if isinstance(target, ast.Name)
            else (target.value.id if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) else None)
        )
        if name is None or isinstance(func.node, ast.Lambda):
            return None
        params = {a.arg for a in func.node.args.args + func.node.args.kwonlyargs + func.node.args.posonlyargs}
        if name in params:
            return None, "parameter object (ctx, client passed in)" if isinstance(
                target, ast.Attribute
            ) else "parameter called"
        node = self.local_assignments(func).get(name)
        if node is None:
            return None
        value = node.value
        if isinstance(value, ast.Subscript) or (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "get"
            and isinstance(target, ast.Name)
        ):
            return None, "local from a table (dict of functions)"
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr":
            return None, "local from getattr"
        if isinstance(value, ast.Call) and isinstance(target, ast.Attribute):
            made = self.resolve_expr(value.func, func)
            if isinstance(made, ClsV):
                found, _ = self.class_lookup(made, target.attr)
                if isinstance(found, FuncV):
                    return found, "method of a local instance (Repo().get)"
            if isinstance(made, FuncV):
                return None, "method of an object a unit factory returns"
            return None, "method of a local object (external or unknown)"
        return None, "local variable"

    def local_assignments(self, func: FuncV) -> dict:
        """name -> the first ``name = ...`` in the function's own body."""
        cached = self.assign_cache.get(id(func.node))
        if cached is None:
            cached = {}
            for node in own_nodes(func.node)[0]:
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            cached.setdefault(target.id, node)
            self.assign_cache[id(func.node)] = cached
        return cached

    def class_lookup(self, cls, attr, seen=None):
        seen = seen or set()
        if not isinstance(cls, ClsV) or id(cls) in seen:
            return None, None
        seen.add(id(cls))
        if attr in cls.frame.vars:
            return cls.frame.vars[attr], cls
        for base in cls.bases:
            for option in options(base):
                found, owner = self.class_lookup(option, attr, seen)
                if found is not None:
                    return found, owner
        return None, None

    def self_attribute_value(self, cls: ClsV, attr: str):
        """What ``self.attr = X(...)`` assigns in the class's methods, when X is a unit class."""
        for value in cls.frame.vars.values():
            if not isinstance(value, FuncV) or isinstance(value.node, ast.Lambda):
                continue
            for node in own_nodes(value.node)[0]:
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Attribute)
                    and t.attr == attr
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    for t in node.targets
                ):
                    if isinstance(node.value, ast.Call):
                        made = self.resolve_expr(node.value.func, value)
                        if isinstance(made, ClsV):
                            return made
        return None

    def self_attribute(self, cls: ClsV, attr: str) -> str | None:
        for value in cls.frame.vars.values():
            if not isinstance(value, FuncV) or isinstance(value.node, ast.Lambda):
                continue
            for node in own_nodes(value.node)[0]:
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr == attr for t in node.targets
                ):
                    return "self.<callable attribute> (a function stored on the instance)"
        return None


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _enclosing_handler(node: ast.AST, parents: dict) -> ast.ExceptHandler | None:
    parent = parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.ExceptHandler):
            return parent
        if isinstance(parent, _SCOPES):
            return None
        parent = parents.get(parent)
    return None
