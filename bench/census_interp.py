"""The census interpreter: runs one unit's import-time code abstractly and records what gets registered.

A server registers its tools when the unit's modules are imported and its entry point runs: module top
levels execute, ``main()`` builds the server, helpers such as ``register_tools(mcp)`` or handler
classes' ``__init__`` call ``mcp.tool(...)``. So the census does the same, with abstract values
(``census_values``): every module's top level, the unit's console-script entry points, then every
function that mentions a registration but that nothing ran ("standalone", its parameters unknown). It
follows calls into the unit's own functions and classes (bases in other files included), unrolls loops
over lists it can see, takes both branches of an ``if``, and never imports or runs the unit's code.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

from census_calls import STATEMENT_BUDGET, CallsMixin
from census_exprs import ExprsMixin
from census_model import Frame, Module
from census_register import RegisterMixin
from census_values import (
    FASTMCP,
    INTERESTING_TOKENS,
    MCP1,
    MCP2,
    UNKNOWN,
    ClsV,
    Const,
    DictV,
    Ext,
    FuncV,
    InstV,
    ModV,
    NsV,
    Seq,
    ServerV,
    Value,
    options,
    union,
)

_BUILTINS = frozenset(dir(builtins))
FRAMEWORK_TOPS = ("mcp", "fastmcp", "mcp_types")


_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from[ \t]+((?:mcp|fastmcp|mcp_types)(?:\.[\w.]*)?)[ \t]+import|import[ \t]+((?:mcp|fastmcp|mcp_types)\b[\w.]*))",
    re.MULTILINE,
)


def module_framework(text: str) -> str | None:
    """The framework a module's imports name (fastmcp > mcp 2.x > mcp 1.x > any mcp), from its import lines."""
    found = {a or b for a, b in _IMPORT_LINE.findall(text)}
    if not found:
        return None
    tops = {name.split(".")[0] for name in found}
    if "fastmcp" in tops:
        return FASTMCP
    if any(n.startswith("mcp.server.mcpserver") for n in found):
        return MCP2
    if any(n.startswith("mcp.server.fastmcp") for n in found):
        return MCP1
    return "mcp"


class UnitInterpreter(ExprsMixin, CallsMixin, RegisterMixin):
    def __init__(self, modules: list, entry_points: list):
        self.modules = modules
        self.by_name: dict = {}
        for module in modules:
            for name in module.names:
                self.by_name.setdefault(name, []).append(module)
        self.prefixes = {name.rsplit(".", i)[0] for name in self.by_name for i in range(name.count(".") + 1)}
        self.entry_points = entry_points
        self.registrations: list = []
        self.servers: list = []
        self.mounts: list = []  # (parent ServerV, child ServerV, prefix, site, module)
        self.unresolved: list = []  # registration-shaped calls whose receiver or handler is unknown
        self.stack: list = []  # FuncV being executed
        self.cond_depth = 0
        self.loop_depth = 0
        self.standalone = False
        self.collectors: list = []
        self.memo: dict = {}
        self.executed: set = set()
        self.func_values: dict = {}  # id(def node) -> the last FuncV made for it
        self.inferred_servers: dict = {}
        self.statements = 0
        self.budget_exhausted = False
        self.class_fw_memo: dict = {}
        self._by_site: dict = {}
        self._keys: dict = {}
        self.lister_sites: set = set()
        self.site_stack: list = []  # "file:line" of the calls being evaluated
        self.loop_memo: dict = {}

    # -- driver ----------------------------------------------------------------------------------

    def run(self) -> None:
        # The statement budget bounds each activity (a module's top level with what it imports and
        # calls, an entry point, a standalone function), so one pathological file cannot starve the rest.
        for module in self.modules:
            self.statements = 0
            self.ensure_executed(module)
        for module_name, func_name in self.entry_points:
            target = self.find_module(module_name, None)
            if target is None:
                continue
            self.ensure_executed(target)
            value = target.frame.vars.get(func_name)
            self.statements = 0
            if isinstance(value, FuncV):
                self.call_value(value, [], {}, None, target.frame)
        self.standalone = True
        progress = True
        while progress:
            progress = False
            for node_id, func in sorted(self.func_values.items(), key=lambda kv: (kv[1].module.rel, kv[1].node.lineno)):
                if node_id in self.executed or isinstance(func.node, ast.Lambda) or not self.interesting(func):
                    continue
                self.executed.add(node_id)
                progress = True
                self.statements = 0
                self.run_standalone(func)
        self.apply_mounts()

    def interesting(self, func: FuncV) -> bool:
        node = func.node
        text = "\n".join(func.module.lines[node.lineno - 1 : node.end_lineno])
        return any(token in text for token in INTERESTING_TOKENS)

    def run_standalone(self, func: FuncV) -> None:
        receiver = None
        if func.cls is not None and not getattr(func, "static", False):
            receiver = self.instantiate(func.cls, None, [], {}, standalone=True)
        self.call_function(func, [], {}, receiver=receiver, standalone=True)

    # -- modules ----------------------------------------------------------------------------------

    def find_module(self, dotted: str, importer: Module | None) -> Module | None:
        found = self.by_name.get(dotted)
        if not found:
            return None
        if len(found) == 1 or importer is None:
            return found[0]
        parts = importer.path.parts
        return max(found, key=lambda m: _common_prefix(m.path.parts, parts))

    def module_value(self, dotted: str, importer: Module | None) -> Value:
        module = self.find_module(dotted, importer)
        if module is not None:
            return ModV(module, dotted)
        if dotted.split(".")[0] not in FRAMEWORK_TOPS and dotted in self.prefixes:
            return NsV(dotted)
        return Ext(dotted)

    def relative_base(self, importer: Module, level: int, module: str | None) -> Path | None:
        base = importer.path.parent
        for _ in range(level - 1):
            base = base.parent
        if module:
            base = base.joinpath(*module.split("."))
        return base

    def module_at(self, base: Path) -> Module | None:
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            for module in self.modules:
                if module.path == candidate:
                    return module
        return None

    def ensure_executed(self, module: Module) -> None:
        if module.state != "new":
            return
        module.state = "running"
        saved = (self.cond_depth, self.loop_depth, self.stack, self.standalone, self.site_stack)
        self.cond_depth, self.loop_depth, self.stack, self.site_stack = 0, 0, [], []
        self.exec_block(module.tree.body, module.frame)
        self.cond_depth, self.loop_depth, self.stack, self.standalone, self.site_stack = saved
        module.state = "done"

    def module_global(self, module: Module, name: str, dotted: str) -> Value:
        self.ensure_executed(module)
        if name in module.frame.vars:
            return module.frame.vars[name]
        sub = self.module_value(f"{dotted}.{name}", module)
        return sub if not isinstance(sub, Ext) else UNKNOWN

    # -- statements -------------------------------------------------------------------------------

    def exec_block(self, body: list, frame: Frame) -> None:
        for stmt in body:
            self.exec_stmt(stmt, frame)

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        self.statements += 1
        if self.statements > STATEMENT_BUDGET:
            self.budget_exhausted = True
            return
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is not None:
            method(stmt, frame)

    def stmt_Expr(self, stmt, frame):
        self.ev(stmt.value, frame)

    def stmt_Assign(self, stmt, frame):
        value = self.ev(stmt.value, frame)
        for target in stmt.targets:
            self.assign(target, value, frame)

    def stmt_AnnAssign(self, stmt, frame):
        if stmt.value is not None:
            self.assign(stmt.target, self.ev(stmt.value, frame), frame)

    def stmt_AugAssign(self, stmt, frame):
        value = self.ev(stmt.value, frame)
        current = self.ev(stmt.target, frame) if isinstance(stmt.target, ast.Name) else UNKNOWN
        if isinstance(stmt.op, ast.Add) and isinstance(current, Seq) and isinstance(value, Seq):
            current.items.extend(value.items)
        elif isinstance(stmt.op, ast.Add) and isinstance(current, Seq):
            current.approximate = True

    def stmt_NamedExpr(self, stmt, frame):
        self.ev(stmt, frame)

    def stmt_Return(self, stmt, frame):
        frame.returns.append(self.ev(stmt.value, frame) if stmt.value is not None else Const(None))

    def stmt_Global(self, stmt, frame):
        frame.global_names.update(stmt.names)

    stmt_Nonlocal = None

    def stmt_If(self, stmt, frame):
        test = stmt.test
        if _is_main_guard(test):
            self.exec_block(stmt.body, frame)
            return
        self.cond_depth += 1
        before = dict(frame.vars)
        self.exec_block(stmt.body, frame)
        after_body = frame.vars
        frame.vars = dict(before)
        self.exec_block(stmt.orelse, frame)
        merged = {}
        for name in set(after_body) | set(frame.vars):
            a, b = after_body.get(name), frame.vars.get(name)
            if a is None or b is None or a is b:
                merged[name] = a if b is None else b
            else:
                merged[name] = union([a, b])
        frame.vars = merged
        self.cond_depth -= 1

    def stmt_For(self, stmt, frame):
        iterable = self.ev(stmt.iter, frame)
        elements = self.iter_values(iterable)
        if elements and all(isinstance(e, Const) for e in elements) and not self.loop_may_register(stmt, frame):
            elements = None  # ``for i in range(250)`` in a script: once, with i unknown
        self.loop_depth += 1
        if elements is None:
            self.assign(stmt.target, UNKNOWN, frame)
            self.exec_block(stmt.body, frame)
        else:
            for element in elements:
                self.assign(stmt.target, element, frame)
                self.exec_block(stmt.body, frame)
        self.loop_depth -= 1
        self.exec_block(stmt.orelse, frame)

    stmt_AsyncFor = stmt_For

    def loop_may_register(self, stmt, frame) -> bool:
        cached = self.loop_memo.get(id(stmt))
        if cached is None:
            lines = frame.module.lines[stmt.body[0].lineno - 1 : stmt.body[-1].end_lineno]
            text = "\n".join(lines)
            cached = any(token in text for token in INTERESTING_TOKENS + ("mcp", "server", "register"))
            self.loop_memo[id(stmt)] = cached
        return cached

    def stmt_While(self, stmt, frame):
        self.loop_depth += 1
        self.exec_block(stmt.body, frame)
        self.loop_depth -= 1
        self.exec_block(stmt.orelse, frame)

    def stmt_With(self, stmt, frame):
        for item in stmt.items:
            self.ev(item.context_expr, frame)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, UNKNOWN, frame)
        self.exec_block(stmt.body, frame)

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, stmt, frame):
        self.exec_block(stmt.body, frame)
        self.cond_depth += 1
        for handler in stmt.handlers:
            if handler.name:
                frame.vars[handler.name] = UNKNOWN
            self.exec_block(handler.body, frame)
        self.cond_depth -= 1
        self.exec_block(stmt.orelse, frame)
        self.exec_block(stmt.finalbody, frame)

    stmt_TryStar = stmt_Try

    def stmt_Match(self, stmt, frame):
        self.ev(stmt.subject, frame)
        self.cond_depth += 1
        for case in stmt.cases:
            self.exec_block(case.body, frame)
        self.cond_depth -= 1

    def stmt_Import(self, stmt, frame):
        for alias in stmt.names:
            if alias.asname:
                self.bind(frame, alias.asname, self.module_value(alias.name, frame.module))
            else:
                top = alias.name.split(".")[0]
                self.bind(frame, top, self.module_value(top, frame.module))

    def stmt_ImportFrom(self, stmt, frame):
        importer = frame.module
        if stmt.level:
            base = self.relative_base(importer, stmt.level, stmt.module)
            source = self.module_at(base) if base is not None else None
            for alias in stmt.names:
                local = alias.asname or alias.name
                if alias.name == "*":
                    self._import_star(source, frame)
                    continue
                value = UNKNOWN
                if source is not None:
                    self.ensure_executed(source)
                    value = source.frame.vars.get(alias.name, UNKNOWN)
                if value is UNKNOWN and base is not None:
                    sub = self.module_at(base / alias.name)
                    if sub is not None:
                        value = ModV(sub, sub.names[0] if sub.names else alias.name)
                self.bind(frame, local, value)
            return
        dotted = stmt.module or ""
        source = self.find_module(dotted, importer)
        for alias in stmt.names:
            local = alias.asname or alias.name
            if alias.name == "*":
                self._import_star(source, frame)
                continue
            if source is None:
                if dotted.split(".")[0] in FRAMEWORK_TOPS or dotted not in self.prefixes:
                    self.bind(frame, local, Ext(f"{dotted}.{alias.name}"))
                else:
                    self.bind(frame, local, self.module_value(f"{dotted}.{alias.name}", importer))
                continue
            self.bind(frame, local, self.module_global(source, alias.name, dotted))

    def _import_star(self, source: Module | None, frame: Frame) -> None:
        if source is None:
            return
        self.ensure_executed(source)
        for name, value in source.frame.vars.items():
            if not name.startswith("_"):
                self.bind(frame, name, value)

    def stmt_FunctionDef(self, stmt, frame):
        closure = frame if frame.kind == "function" else (frame.parent if frame.kind == "class" else None)
        prefix = frame.scope_name()
        qualname = stmt.name if prefix == "<module>" else f"{prefix}.{stmt.name}"
        func = FuncV(frame.module, stmt, qualname, closure=closure, cls=frame.cls if frame.kind == "class" else None)
        self.func_values[id(stmt)] = func
        value: Value = func
        for decorator in reversed(stmt.decorator_list):
            value = self.apply_decorator(self.ev(decorator, frame), value, decorator, frame, stmt)
        self.bind(frame, stmt.name, value)

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_ClassDef(self, stmt, frame):
        prefix = frame.scope_name()
        qualname = stmt.name if prefix == "<module>" else f"{prefix}.{stmt.name}"
        bases = [self.ev(base, frame) for base in stmt.bases]
        cls = ClsV(frame.module, stmt, qualname, None, bases)
        body = Frame(frame.module, "class", parent=frame if frame.kind != "module" else None, cls=cls)
        cls.frame = body
        self.exec_block(stmt.body, body)
        self.bind(frame, stmt.name, cls)

    # -- binding and lookup -----------------------------------------------------------------------

    def bind(self, frame: Frame, name: str, value: Value) -> None:
        if name in frame.global_names:
            frame.module.frame.vars[name] = value
        else:
            frame.vars[name] = value

    def assign(self, target: ast.AST, value: Value, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            self.bind(frame, target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, Seq) and len(value.items) == len(target.elts) else None
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    self.assign(element.value, UNKNOWN, frame)
                else:
                    self.assign(element, items[i] if items is not None else UNKNOWN, frame)
        elif isinstance(target, ast.Attribute):
            owner = self.ev(target.value, frame)
            for option in options(owner):
                if isinstance(option, (InstV, ServerV)):
                    option.attrs[target.attr] = value
                elif isinstance(option, ClsV):
                    option.frame.vars[target.attr] = value
                elif isinstance(option, ModV):
                    self.ensure_executed(option.module)
                    option.module.frame.vars[target.attr] = value
        elif isinstance(target, ast.Subscript):
            owner = self.ev(target.value, frame)
            key = self.ev(target.slice, frame)
            if isinstance(owner, DictV):
                owner.items.append((key, value))

    def lookup(self, name: str, frame: Frame) -> Value:
        if name in frame.global_names:
            return frame.module.frame.vars.get(name, UNKNOWN)
        scope: Frame | None = frame
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
            while scope is not None and scope.kind == "class":
                scope = scope.parent
        module_vars = frame.module.frame.vars
        if name in module_vars:
            return module_vars[name]
        if name in _BUILTINS:
            return Ext(f"builtins.{name}")
        return UNKNOWN


def _is_main_guard(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _common_prefix(a: tuple, b: tuple) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
