"""What the names of a module mean: our own import/alias table (no ``QualifiedNameProvider``).

Recognition is by qualified name, not by spelling (DESIGN §4): ``from mcp_fusion import tool as t``,
``import mcp_fusion as mf; mf.tool``, a local rebinding ``define = mf.tool`` all resolve to
``mcp_fusion.tool``. A name read from another module of the project that may re-export the runtime
(``from myapp.api import tool``) is recognised on an *assumption* the project view confirms.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Sequence

from fusion_lint.facts.frameworks import Framework, framework_of_class, imports_a_framework
from fusion_lint.facts.model import Assumptions, FileFacts, ServerRef, is_runtime
from fusion_lint.facts.syntax import (
    argument_value,
    dotted,
    is_name_or_attribute,
    keyword_argument,
    name_value,
    string_value,
)
from mcp_fusion import FACTORY_CODES

DEFINERS = ("tool", "resource", "prompt")
RUNTIME_API = frozenset(
    {
        *DEFINERS,
        "ErrorContract",
        "McpError",
        "JsonRpcErrorCode",
        "Context",
        "tool_error",
        "contract",
        "fail",
        "recovery_for",
        *FACTORY_CODES,
    }
)

Scope = dict[str, str]  # a function's local names -> qualified names


class Names:
    """The module's alias table, filled by a first pass over its statements (``declare``)."""

    def __init__(self, facts: FileFacts, module_name: str, is_package: bool, runtime_modules: Sequence[str]):
        self.module_name = module_name
        self.is_package = is_package
        self.runtime_modules = tuple(runtime_modules)
        self.aliases: dict[str, str] = facts.imports
        self.instances: set[str] = set()  # module-level names whose alias is the class of an instance
        self.local_names: set[str] = set()
        self.local_classes: set[str] = set()
        self.runtime_star = False
        # ``from myapp.api import *`` of project modules: a bare runtime API name may come from one.
        self.star_modules: list[str] = []
        self.servers: dict[str, ServerRef] = facts.servers  # module-level names bound to a server
        self.server_classes: dict[str, Framework] = {}  # classes of this module that subclass a server
        self.server_factories: dict[str, ServerRef] = {}  # functions of this module returning a new server
        self.imported: set[str] = set()  # every module or name the module imports (qualified)
        # Local names an import statement binds: in a package's ``__init__``, ``from . import session``
        # makes ``session.start`` look like a name of this module (``pkg.session.start``), yet it is
        # another module's function.
        self.import_bound: set[str] = set()
        # Whether a block is a one-line suite (``def f(): return X()``): the extractor's text knows.
        self.is_suite: Callable[[list[ast.stmt]], bool] = lambda body: False

    # ----- imports ------------------------------------------------------------------------------

    def absolute_module(self, node: ast.ImportFrom) -> str | None:
        base = node.module
        level = node.level or 0
        if level == 0:
            return base
        parts = self.module_name.split(".")
        if not self.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        prefix = ".".join(parts)
        if base:
            return f"{prefix}.{base}" if prefix else base
        return prefix or None

    def bind_imports(self, node: ast.Import | ast.ImportFrom, table: dict[str, str]) -> None:
        if type(node) is ast.Import:
            for alias in node.names:
                name = alias.name
                self.imported.add(name)
                if alias.asname is not None:
                    table[alias.asname] = name
                    self.import_bound.add(alias.asname)
                else:
                    head = name.split(".")[0]
                    table[head] = head
                    self.import_bound.add(head)
            return
        module = self.absolute_module(node)  # type: ignore[arg-type]  # not an Import: an ImportFrom
        if module is None:
            return
        self.imported.add(module)
        if node.names[0].name == "*":
            if self.is_runtime(module):
                self.runtime_star = True
            elif module.split(".")[0] not in sys.stdlib_module_names:
                self.star_modules.append(module)
            return
        for alias in node.names:
            name = alias.name
            local = name
            if alias.asname is not None:
                local = alias.asname
            table[local] = f"{module}.{name}"
            self.import_bound.add(local)

    # ----- the first pass: what each module-level name means ----------------------------------

    def declare(self, stmt: ast.stmt) -> None:
        """Record what a module-level statement binds; a later binding replaces an earlier one."""
        kind = type(stmt)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            self._bind_local(stmt.name)  # type: ignore[attr-defined]  # a def or a class (tested above); mypy does not narrow through kind = type(...)
            if kind is not ast.ClassDef:
                made = self._server_made_by(stmt)  # type: ignore[arg-type]  # kind is not ast.ClassDef above; mypy does not narrow through kind = type(...)
                if made is not None:  # ``def create_server(): return FastMCP(...)``
                    self.server_factories[stmt.name] = made  # type: ignore[attr-defined]  # kind is not ast.ClassDef above; mypy does not narrow through kind = type(...)
            else:
                self.local_classes.add(stmt.name)  # type: ignore[attr-defined]  # a class: kind is not ast.ClassDef failed above; mypy does not narrow through kind = type(...)
                for base in stmt.bases:  # type: ignore[attr-defined]  # a class: kind is not ast.ClassDef failed above; mypy does not narrow through kind = type(...)
                    framework = self.server_class(base.value if type(base) is ast.Starred else base)
                    if framework is not None:
                        self.server_classes[stmt.name] = framework  # type: ignore[attr-defined]  # a class: kind is not ast.ClassDef failed above; mypy does not narrow through kind = type(...)
            return
        if kind is ast.Import or kind is ast.ImportFrom:
            self.bind_imports(stmt, self.aliases)  # type: ignore[arg-type]  # kind is ast.Import or kind is ast.ImportFrom above; mypy does not narrow through kind = type(...)
            self.local_names.difference_update(self.aliases)
        elif kind is ast.Assign:
            for target in stmt.targets:  # type: ignore[attr-defined]  # kind is ast.Assign above; mypy does not narrow through kind = type(...)
                if type(target) is ast.Name:
                    self._bind_assigned(target.id, stmt.value)  # type: ignore[attr-defined]  # kind is ast.Assign above; mypy does not narrow through kind = type(...)
        elif kind is ast.AnnAssign and type(stmt.target) is ast.Name:  # type: ignore[attr-defined]  # kind is ast.AnnAssign and type(stmt.target) is ast.Name; mypy does not narrow through kind = type(...)
            if stmt.value is not None:  # type: ignore[attr-defined]  # kind is ast.AnnAssign and type(stmt.target) is ast.Name above; mypy does not narrow through kind = type(...)
                self._bind_assigned(stmt.target.id, stmt.value)  # type: ignore[attr-defined]  # kind is ast.AnnAssign and type(stmt.target) is ast.Name above; mypy does not narrow through kind = type(...)
            else:
                self._bind_local(stmt.target.id)  # type: ignore[attr-defined]  # kind is ast.AnnAssign and type(stmt.target) is ast.Name above; mypy does not narrow through kind = type(...)

    def _bind_local(self, name: str) -> None:
        self.local_names.add(name)
        self.import_bound.discard(name)
        self.aliases.pop(name, None)  # ``def tool(...)`` after ``from mcp_fusion import tool`` shadows it
        self.instances.discard(name)

    def _bind_assigned(self, name: str, value: ast.expr) -> None:
        server = self.server_of_call(value) if type(value) is ast.Call else None
        if server is not None:
            self.servers[name] = server
        else:
            self.servers.pop(name, None)
        # ``ncbi = NcbiClient()``: calls ``ncbi.fetch(...)`` are followed into ``NcbiClient.fetch``
        # (the instance names its class, as an import names a module).
        cls = self.instance_class(value)
        if cls is not None:
            self.aliases[name] = cls
            self.instances.add(name)
            self.local_names.discard(name)
            self.import_bound.discard(name)
            return
        self.instances.discard(name)
        # ``t = tool``, ``define = mf.tool``: a rebinding of an imported name keeps its meaning.
        source = dotted(value)
        if source is not None and source != name:
            qname = self.qualify(value)
            head = source.split(".")[0]
            if qname is not None and (head in self.aliases or self.runtime_api(qname) is not None):
                self.aliases[name] = qname
                self.local_names.discard(name)
                return
        self._bind_local(name)

    def instance_class(self, value: ast.AST, scope: Scope | None = None) -> str | None:
        """The qualified class name when ``value`` instantiates a class (``NcbiClient(...)``): a
        class of this module, or an imported CapWords name that is not the runtime's."""
        if type(value) is not ast.Call or not is_name_or_attribute(value.func):
            return None
        qname = self.qualify(value.func, scope)
        if qname is None or self.runtime_api(qname) is not None or self.is_runtime(qname):
            return None
        if name_value(value.func) in self.local_classes:
            return qname
        last = qname.rpartition(".")[2]
        if "." in qname and last[:1].isupper() and not last.isupper():
            return qname
        return None

    @property
    def imports_framework(self) -> bool:
        """Whether the module imports from ``mcp.server``, ``mcp.types`` or ``fastmcp`` (DESIGN §12.2)."""
        return imports_a_framework(self.imported)

    @property
    def imported_framework(self) -> Framework:
        """The one framework the module's imports name ("unknown" when none or several): what a server
        handed to it as an unannotated parameter most likely is."""
        found = set()
        for name in self.imported:
            if name == "fastmcp" or name.startswith("fastmcp."):
                found.add("fastmcp")
            elif name.startswith("mcp.server.fastmcp"):
                found.add("mcp1")
            elif name.startswith("mcp.server.mcpserver"):
                found.add("mcp2")
        return found.pop() if len(found) == 1 else "unknown"  # type: ignore[return-value]  # each name added is a Framework literal

    def server_class(self, node: ast.AST, scope: Scope | None = None) -> Framework | None:
        """The framework when ``node`` names a server class (``MCPServer[State]`` included), or a
        class of this module subclassing one."""
        if type(node) is ast.Subscript:
            node = node.value
        name = name_value(node)
        if name is not None and name in self.server_classes and (scope is None or name not in scope):
            return self.server_classes[name]
        return framework_of_class(self.qualify(node, scope))

    def _server_made_by(self, function: ast.FunctionDef) -> ServerRef | None:
        """The server a factory returns: a ``return <server class>(...)`` among its own statements."""
        body = function.body if not self.is_suite(function.body) else ()
        for stmt in body:
            if type(stmt) is ast.Return and type(stmt.value) is ast.Call:
                made = self.server_of_call(stmt.value)
                if made is not None:
                    return made
        return None

    def server_of_call(self, call: ast.Call, scope: Scope | None = None) -> ServerRef | None:
        """The server ``call`` constructs: its framework, its name, whether fastmcp masks errors."""
        func_name = name_value(call.func)
        if func_name is not None and func_name in self.server_factories:
            if scope is None or func_name not in scope:
                return self.server_factories[func_name]
        framework = self.server_class(call.func, scope)
        if framework is None:
            return None
        name_node = argument_value(call, 0, "name")
        name = string_value(name_node) if name_node is not None else None
        mask = keyword_argument(call, "mask_error_details")
        masked = mask is not None and name_value(mask.value) == "True"
        return ServerRef(framework, name if isinstance(name, str) else None, None, masked)

    def runtime_exports(self) -> dict[str, str]:
        """What this module re-exports of the runtime (``FileFacts.runtime_names``)."""
        names = {local: qname for local, qname in self.aliases.items() if self.is_runtime(qname)}
        if self.runtime_star:
            for api in sorted(RUNTIME_API):
                if api not in self.aliases and api not in self.local_names:
                    names[api] = f"{self.runtime_modules[0]}.{api}"
        return names

    # ----- qualified names ---------------------------------------------------------------------

    def is_runtime(self, qname: str) -> bool:
        return is_runtime(qname, self.runtime_modules)

    def qualify(self, node: ast.AST | None, scope: Scope | None = None) -> str | None:
        if type(node) is ast.Attribute:
            base = self.qualify(node.value, scope)
            return f"{base}.{node.attr}" if base else None
        name = name_value(node)
        if name is not None:
            if scope is not None and name in scope:
                return scope[name]
            if name in self.aliases:
                return self.aliases[name]
            if name in self.local_names:
                return f"{self.module_name}.{name}"
            if name in RUNTIME_API:
                if self.runtime_star:
                    return f"{self.runtime_modules[0]}.{name}"
                if self.star_modules:  # the last star import that may bind it wins, as at run time
                    return f"{self.star_modules[-1]}.{name}"
            return name
        return None

    def runtime_api(self, qname: str | None) -> str | None:
        """``tool``, ``not_found``, ... when ``qname`` names that runtime object, else None."""
        if qname is None or "." not in qname:
            return None
        prefix, _, last = qname.rpartition(".")
        if last in RUNTIME_API and self.is_runtime(prefix):
            return last
        return None

    def api_of(self, qname: str | None) -> tuple[str | None, Assumptions]:
        """The runtime API ``qname`` names, and what that rests on: nothing for the runtime's own
        names; for a name imported from a project module (``myapp.api.tool``), the assumption
        that the module re-exports the runtime's object of that name, which the project view
        confirms (``model.Assumptions``). A fact built on it carries it."""
        api = self.runtime_api(qname)
        if api is not None:
            return api, ()
        if qname is None or "." not in qname:
            return None, ()
        prefix, _, last = qname.rpartition(".")
        if last in RUNTIME_API and self.may_reexport_runtime(prefix) and framework_of_class(prefix) is None:
            return last, (qname,)
        return None, ()

    def may_reexport_runtime(self, prefix: str) -> bool:
        """Whether ``prefix`` (what a runtime API name was read from) may be another module of the
        project: not this module or anything in it, not the standard library."""
        if prefix == self.module_name or prefix.startswith(self.module_name + "."):
            return False
        return prefix.split(".")[0] not in sys.stdlib_module_names

    def code_member(self, qname: str | None) -> str | None:
        """``X`` for ``<runtime>...JsonRpcErrorCode.X``."""
        if qname is None:
            return None
        head, _, member = qname.rpartition(".")
        if self.runtime_api(head) == "JsonRpcErrorCode" and member:
            return member
        return None
