"""The project index: every file's facts by path and by module, names looked up across files.

A module a definition refers to that was not analysed yet (a contract constant, a service, a
re-export) is handed to ``load``, which runs the same per-file pipeline (and cache) as the main
pass. The index never parses, and it is only asked while the project is being resolved: by the
time a rule runs, ``resolve`` has asked everything a rule may need.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Iterator, Optional

from ..facts.model import Binding, Definition, FileFacts, FunctionFacts, Raise, RefExpr, ServerRef, Value
from .view import Reached

MAX_ALIAS_HOPS = 8


class ProjectIndex:
    def __init__(
        self,
        files: dict[str, FileFacts],
        load: Callable[[str], Optional[FileFacts]],
        search_roots: list[Path],
        follow_calls: int,
        is_file: Callable[[Path], bool] = Path.is_file,
    ):
        self.files = files
        self._is_file = is_file  # whether a module's file exists (an in-memory project has no disk)
        # The files analysed for this run: their definitions are the project's. Files loaded later
        # (a contract module, a service) contribute what definitions refer to, never definitions.
        self._analysed = sorted(files)
        self._load = load
        self.search_roots = search_roots
        self.follow_calls = follow_calls
        self.modules: dict[str, str] = {f.module: p for p, f in files.items() if f.module}
        self._module_misses: set[str] = set()
        self._call_targets: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._runtime_qnames: dict[str, Optional[str]] = {}
        self._definitions: dict[str, list[Definition]] = {}
        self._settled_functions: dict[tuple[str, str], FunctionFacts] = {}

    # ----- modules and symbols -------------------------------------------------------------------

    def module_facts(self, module: str) -> Optional[FileFacts]:
        path = self.modules.get(module)
        if path is None:
            if module in self._module_misses:
                return None
            path = self._find_module_file(module)
            if path is None:
                self._module_misses.add(module)
                return None
            self.modules[module] = path
        facts = self.files.get(path)
        if facts is None:
            facts = self._load(path)
            if facts is None:
                self._module_misses.add(module)
                self.modules.pop(module, None)
                return None
            self.files[path] = facts
        return facts

    def _find_module_file(self, module: str) -> Optional[str]:
        relative = Path(*module.split("."))
        for root in self.search_roots:
            for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
                if self._is_file(candidate):
                    return str(candidate)
        return None

    def _module_and_name(self, qname: str) -> Optional[tuple[FileFacts, str]]:
        """The project module ``qname`` starts with (the longest one) and the rest of it."""
        parts = qname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            facts = self.module_facts(".".join(parts[:cut]))
            if facts is not None:
                return facts, ".".join(parts[cut:])
        return None

    def lookup(self, qname: str) -> Optional[tuple[FileFacts, str]]:
        """The file and the top-level name ``qname`` refers to, following re-exports."""
        for _ in range(MAX_ALIAS_HOPS):
            found = self._module_and_name(qname)
            if found is None:
                return None
            facts, name = found
            head = name.split(".")[0]
            if head in facts.imports and head not in facts.bindings and head not in facts.functions:
                rest = name[len(head) :]
                target = facts.imports[head] + rest
                if target == qname:
                    return None
                qname = target  # a re-export: follow it into the module it came from
                continue
            return facts, name
        return None

    def runtime_qname(self, qname: str) -> Optional[str]:
        """The runtime object a project name stands for, following re-exports through project
        modules (``myapp.tool`` → ``myapp.api.tool`` → ``mcp_fusion.tool``); None when it is the
        project's own, or not found."""
        if qname in self._runtime_qnames:
            return self._runtime_qnames[qname]
        found: Optional[str] = None
        current = qname
        for _ in range(MAX_ALIAS_HOPS):
            located = self._module_and_name(current)
            if located is None:
                break
            facts, name = located
            head, dot, rest = name.partition(".")
            if head in facts.runtime_names:
                found = facts.runtime_names[head] + dot + rest
                break
            if head not in facts.imports or head in facts.bindings or head in facts.functions:
                break
            target = facts.imports[head] + dot + rest
            if target == current:
                break
            current = target
        self._runtime_qnames[qname] = found
        return found

    def confirmed(self, assumes: tuple[str, ...]) -> bool:
        """Whether each assumed name does stand for the runtime object it is named after."""
        for assumed in assumes:
            runtime = self.runtime_qname(assumed)
            if runtime is None or runtime.rpartition(".")[2] != assumed.rpartition(".")[2]:
                return False
        return True

    def binding(self, qname: str) -> Optional[tuple[Binding, str]]:
        found = self.lookup(qname)
        if found is None:
            return None
        facts, name = found
        binding = facts.bindings.get(name)
        return (binding, facts.path) if binding is not None else None

    def function(self, qname: str) -> Optional[tuple[FunctionFacts, str]]:
        found = self.lookup(qname)
        if found is None:
            return None
        facts, name = found
        function = self.function_facts(facts.path, name)
        return (function, facts.path) if function is not None else None

    def function_facts(self, path: str, qualname: str) -> Optional[FunctionFacts]:
        """A function's facts, with every raise that rested on a refuted re-export read as an
        ordinary call (its callee is in ``calls``, so it is followed like any other)."""
        key = (path, qualname)
        settled = self._settled_functions.get(key)
        if settled is None:
            facts = self.files.get(path)
            function = facts.functions.get(qualname) if facts is not None else None
            if function is None:
                return None
            settled = self._settled_functions[key] = self._settle(function)
        return settled

    def _settle(self, function: FunctionFacts) -> FunctionFacts:
        if not any(site.assumes for site in function.raises) and not any(made.assumes for made in function.constructions):
            return function
        raises = [site if self.confirmed(site.assumes) else _ordinary_raise(site) for site in function.raises]
        constructions = [made for made in function.constructions if self.confirmed(made.assumes)]
        return dataclasses.replace(function, raises=raises, constructions=constructions)

    # ----- values and contracts ----------------------------------------------------------------

    def resolve_value(self, value: Value) -> Value:
        """A field value with a reference to a module-level literal replaced by that literal."""
        seen = 0
        current = value
        while current.kind == "ref" and seen < MAX_ALIAS_HOPS:
            member = self._reexported_code(str(current.value))
            if member is not None:
                return Value("code", member, value.span)
            found = self.binding(str(current.value))
            if found is None:
                return current
            binding, _ = found
            if isinstance(binding, Value):
                current = Value(binding.kind, binding.value, value.span)
            elif isinstance(binding, RefExpr):
                current = Value("ref", binding.qname, value.span)
            else:
                return current
            seen += 1
        return current

    def _reexported_code(self, qname: str) -> Optional[str]:
        """``NOT_FOUND`` for ``myapp.api.JsonRpcErrorCode.NOT_FOUND`` when ``myapp.api`` re-exports
        the runtime's ``JsonRpcErrorCode`` (the extractor records the runtime's own as codes)."""
        owner, _, member = qname.rpartition(".")
        if owner.rpartition(".")[2] != "JsonRpcErrorCode" or not member:
            return None
        runtime = self.runtime_qname(owner)
        return member if runtime is not None and runtime.rpartition(".")[2] == "JsonRpcErrorCode" else None

    # ----- handlers and what they reach ----------------------------------------------------------

    def handler(self, definition: Definition, path: str) -> Optional[tuple[FunctionFacts, str]]:
        if definition.handler is not None:
            function = self.function_facts(path, definition.handler)
            return (function, path) if function is not None else None
        if definition.handler_ref is not None:
            return self.function(definition.handler_ref)
        return None

    def reach(self, handler: FunctionFacts, path: str) -> list[Reached]:
        """The handler and the project functions it calls, breadth-first, bounded, cycle-safe."""
        reached = [Reached(handler, path, 0)]
        seen = {(path, handler.qualname)}
        frontier = [(handler, path)]
        for depth in range(1, self.follow_calls + 1):
            following: list[tuple[FunctionFacts, str]] = []
            for function, where in frontier:
                for target_path, qualname in self._targets(function, where):
                    if (target_path, qualname) in seen:
                        continue
                    seen.add((target_path, qualname))
                    target = self.function_facts(target_path, qualname)
                    if target is None:
                        continue
                    reached.append(Reached(target, target_path, depth))
                    following.append((target, target_path))
            frontier = following
            if not frontier:
                break
        return reached

    def call_targets(self, function: FunctionFacts, path: str) -> list[tuple[str, str, str]]:
        """(the name called, the callee's path, its qualname) of each project function it calls."""
        found = []
        for qname in function.calls:
            if qname.split(".")[0] in _NEVER_PROJECT:
                continue
            target = self.function(qname)
            if target is not None:
                found.append((qname, target[1], target[0].qualname))
        return found

    def _targets(self, function: FunctionFacts, path: str) -> list[tuple[str, str]]:
        key = (path, function.qualname)
        cached = self._call_targets.get(key)
        if cached is None:
            cached = []
            for qname in function.calls:
                if qname.split(".")[0] in _NEVER_PROJECT:
                    continue
                found = self.function(qname)
                if found is not None:
                    cached.append((found[1], found[0].qualname))
            self._call_targets[key] = cached
        return cached

    def all_definitions(self) -> Iterator[tuple[Definition, str]]:
        for path in self._analysed:
            for definition in self.definitions(path):
                yield definition, path

    def definitions(self, path: str) -> list[Definition]:
        """A file's definitions as the rules see them: a name given by a constant resolved, and
        a definer imported through a project module kept only if it is the runtime's."""
        settled = self._definitions.get(path)
        if settled is None:
            settled = []
            facts = self.files[path]
            for definition in facts.definitions:
                if not self.confirmed(definition.assumes):
                    continue  # ``@tool`` of the project's own: not a definition of ours
                if definition.server is not None and definition.server.ref is not None:
                    server = self.server(definition.server.ref)
                    if server is None and not facts.imports_framework:
                        continue  # ``x.tool(...)`` on something imported that is no server
                    if server is not None:
                        definition = dataclasses.replace(definition, server=server)
                if definition.name is None and definition.name_ref is not None:
                    name = self.resolve_value(Value("ref", definition.name_ref, definition.name_span))
                    if name.kind == "str":
                        definition = dataclasses.replace(definition, name=str(name.value))
                settled.append(definition)
            self._definitions[path] = settled
        return settled


    def server(self, qname: str) -> Optional[ServerRef]:
        """The server a module-level name of another project module is bound to (through re-exports;
        the alias table names an instance by its class, so a server is looked for before that)."""
        for _ in range(MAX_ALIAS_HOPS):
            found = self._module_and_name(qname)
            if found is None:
                return None
            facts, name = found
            if name in facts.servers:
                return facts.servers[name]
            head, dot, rest = name.partition(".")
            if head not in facts.imports or head in facts.bindings or head in facts.functions:
                return None
            target = facts.imports[head] + dot + rest
            if target == qname:
                return None
            qname = target
        return None


def _ordinary_raise(site: Raise) -> Raise:
    """A raise of a call that turned out to be the project's own: a call like any other."""
    kind = "call" if site.kind != "fail" else site.kind
    return dataclasses.replace(site, kind=kind, code=None, factory=None, data_reason=None, call=None, assumes=())


# Modules that are never project code: calls into them are opaque and not looked up on disk.
_NEVER_PROJECT = frozenset(
    {"asyncio", "json", "os", "re", "sys", "logging", "typing", "time", "datetime", "math", "random",
     "itertools", "functools", "collections", "pathlib", "subprocess", "traceback", "dataclasses",
     "print", "len", "str", "int", "dict", "list", "set", "tuple", "isinstance", "range", "sum",
     "min", "max", "sorted", "enumerate", "zip", "any", "all", "getattr", "setattr", "hasattr"}
)  # fmt: skip
