"""What the names of a module mean: our own import/alias table (no ``QualifiedNameProvider``).

Recognition is by qualified name, not by spelling (DESIGN §4): ``from mcp_fusion import tool as t``,
``import mcp_fusion as mf; mf.tool``, a local rebinding ``define = mf.tool`` all resolve to
``mcp_fusion.tool``. A name read from another module of the project that may re-export the runtime
(``from myapp.api import tool``) is recognised on an *assumption* the project view confirms.
"""
from __future__ import annotations

import sys
from typing import Optional, Sequence, Union

import libcst as cst

from mcp_fusion import FACTORY_CODES

from .model import Assumptions, FileFacts, is_runtime
from .syntax import dotted

DEFINERS = ("tool", "resource", "prompt")
RUNTIME_API = frozenset(
    {*DEFINERS, "ErrorContract", "McpError", "JsonRpcErrorCode", "Context", "tool_error", *FACTORY_CODES}
)

Scope = dict[str, str]  # a function's local names -> qualified names


class Names:
    """The module's alias table, filled by a first pass over its statements (``declare``)."""

    def __init__(self, facts: FileFacts, module_name: str, is_package: bool, runtime_modules: Sequence[str]):
        self.module_name = module_name
        self.is_package = is_package
        self.runtime_modules = tuple(runtime_modules)
        self.aliases: dict[str, str] = facts.imports
        self.local_names: set[str] = set()
        self.local_classes: set[str] = set()
        self.runtime_star = False
        # ``from myapp.api import *`` of project modules: a bare runtime API name may come from one.
        self.star_modules: list[str] = []

    # ----- imports ------------------------------------------------------------------------------

    def absolute_module(self, node: cst.ImportFrom) -> Optional[str]:
        base = dotted(node.module) if node.module is not None else None
        level = len(node.relative)
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

    def bind_imports(self, node: Union[cst.Import, cst.ImportFrom], table: dict[str, str]) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                name = dotted(alias.name)
                if name is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    table[alias.asname.name.value] = name
                else:
                    head = name.split(".")[0]
                    table[head] = head
            return
        module = self.absolute_module(node)
        if module is None:
            return
        if isinstance(node.names, cst.ImportStar):
            if self.is_runtime(module):
                self.runtime_star = True
            elif module.split(".")[0] not in sys.stdlib_module_names:
                self.star_modules.append(module)
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            table[local] = f"{module}.{name}"

    # ----- the first pass: what each module-level name means ----------------------------------

    def declare(self, stmt: cst.CSTNode) -> None:
        """Record what a module-level statement binds; a later binding replaces an earlier one."""
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self._bind_local(stmt.name.value)
            if isinstance(stmt, cst.ClassDef):
                self.local_classes.add(stmt.name.value)
            return
        if not isinstance(stmt, cst.SimpleStatementLine):
            return
        for small in stmt.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                self.bind_imports(small, self.aliases)
                self.local_names.difference_update(self.aliases)
            elif isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        self._bind_assigned(target.target.value, small.value)
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                self._bind_local(small.target.value)

    def _bind_local(self, name: str) -> None:
        self.local_names.add(name)
        self.aliases.pop(name, None)  # ``def tool(...)`` after ``from mcp_fusion import tool`` shadows it

    def _bind_assigned(self, name: str, value: cst.BaseExpression) -> None:
        # ``ncbi = NcbiClient()``: calls ``ncbi.fetch(...)`` are followed into ``NcbiClient.fetch``
        # (the instance names its class, as an import names a module).
        cls = self.instance_class(value)
        if cls is not None:
            self.aliases[name] = cls
            self.local_names.discard(name)
            return
        # ``t = tool``, ``define = mf.tool``: a rebinding of an imported name keeps its meaning.
        source = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if source is not None and source != name:
            qname = self.qualify(value)
            head = source.split(".")[0]
            if qname is not None and (head in self.aliases or self.runtime_api(qname) is not None):
                self.aliases[name] = qname
                self.local_names.discard(name)
                return
        self._bind_local(name)

    def instance_class(self, value: cst.CSTNode, scope: Optional[Scope] = None) -> Optional[str]:
        """The qualified class name when ``value`` instantiates a class (``NcbiClient(...)``): a
        class of this module, or an imported CapWords name that is not the runtime's."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
            return None
        qname = self.qualify(value.func, scope)
        if qname is None or self.runtime_api(qname) is not None or self.is_runtime(qname):
            return None
        if isinstance(value.func, cst.Name) and value.func.value in self.local_classes:
            return qname
        last = qname.rpartition(".")[2]
        if "." in qname and last[:1].isupper() and not last.isupper():
            return qname
        return None

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

    def qualify(self, node: cst.CSTNode, scope: Optional[Scope] = None) -> Optional[str]:
        if isinstance(node, cst.Name):
            name = node.value
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
        if isinstance(node, cst.Attribute):
            base = self.qualify(node.value, scope)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def runtime_api(self, qname: Optional[str]) -> Optional[str]:
        """``tool``, ``not_found``, ... when ``qname`` names that runtime object, else None."""
        if qname is None or "." not in qname:
            return None
        prefix, _, last = qname.rpartition(".")
        if last in RUNTIME_API and self.is_runtime(prefix):
            return last
        return None

    def api_of(self, qname: Optional[str]) -> tuple[Optional[str], Assumptions]:
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
        if last in RUNTIME_API and self.may_reexport_runtime(prefix):
            return last, (qname,)
        return None, ()

    def may_reexport_runtime(self, prefix: str) -> bool:
        """Whether ``prefix`` (what a runtime API name was read from) may be another module of the
        project: not this module or anything in it, not the standard library."""
        if prefix == self.module_name or prefix.startswith(self.module_name + "."):
            return False
        return prefix.split(".")[0] not in sys.stdlib_module_names

    def code_member(self, qname: Optional[str]) -> Optional[str]:
        """``X`` for ``<runtime>...JsonRpcErrorCode.X``."""
        if qname is None:
            return None
        head, _, member = qname.rpartition(".")
        if self.runtime_api(head) == "JsonRpcErrorCode" and member:
            return member
        return None
