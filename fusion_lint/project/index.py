"""The project index: every file's facts by path and by module, names looked up across files.

A module a definition refers to that was not analysed yet (a contract constant, a service, a
re-export) is handed to ``load``, which runs the same per-file pipeline (and cache) as the main
pass. The index never parses, and it is only asked while the project is being resolved: by the
time a rule runs, ``resolve`` has asked everything a rule may need.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from fusion_lint.base.modules import is_test_module
from fusion_lint.facts.frameworks import framework_of_class
from fusion_lint.facts.model import (
    Binding,
    Definition,
    FailSite,
    FileFacts,
    FunctionFacts,
    Raise,
    RefExpr,
    ServerRef,
    Value,
)
from fusion_lint.project.helpers import instantiate
from fusion_lint.project.view import Reached

MAX_ALIAS_HOPS = 8
STR_BASES = frozenset({"str", "enum.StrEnum", "strenum.StrEnum"})
INT_BASES = frozenset({"int", "enum.IntEnum", "enum.IntFlag"})
ENUM_BASES = frozenset({"enum.Enum", "enum.Flag", *STR_BASES - {"str"}, *INT_BASES - {"int"}})


class ProjectIndex:
    def __init__(
        self,
        files: dict[str, FileFacts],
        load: Callable[[str], FileFacts | None],
        search_roots: list[Path],
        follow_calls: int,
        is_file: Callable[[Path], bool] = Path.is_file,
        full: Callable[[str], FileFacts | None] | None = None,
    ):
        self.files = files
        # A partial run reads some files with light facts (``FileFacts.light``): the full facts of
        # such a file are loaded through ``full`` the first time a function body of it is asked
        # for. While ``signatures_only`` is set (what the vocabulary needs of a definition no
        # reported file depends on), a function's signature is answered from light facts as is.
        self._full = full or load
        self.signatures_only = False
        self._is_file = is_file  # whether a module's file exists (an in-memory project has no disk)
        # The files analysed for this run: their definitions are the project's. Files loaded later
        # (a contract module, a service) contribute what definitions refer to, never definitions.
        self._analysed = sorted(files)
        self.load = load  # (a buffer's lint looks at the facts of files a name leads to: facts_partial)
        self.search_roots = search_roots
        self.follow_calls = follow_calls
        self.modules: dict[str, str] = {f.module: p for p, f in files.items() if f.module}
        self._module_misses: set[str] = set()
        self._root_names: dict[Path, frozenset[str]] = {}  # what each import root holds (``_may_hold``)
        self._call_targets: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._runtime_qnames: dict[str, str | None] = {}
        self._definitions: dict[str, list[Definition]] = {}
        self._settled_functions: dict[tuple[str, str], FunctionFacts] = {}
        self._mros: dict[tuple[str, str], list[tuple[str, str]]] = {}

    # ----- modules and symbols -------------------------------------------------------------------

    def module_facts(self, module: str) -> FileFacts | None:
        path = self.modules.get(module)
        if path is None:
            if module in self._module_misses:
                return None
            path = self.find_module_file(module)
            if path is None:
                self._module_misses.add(module)
                return None
            self.modules[module] = path
        facts = self.files.get(path)
        if facts is None:
            facts = self.load(path)
            if facts is None:
                self._module_misses.add(module)
                self.modules.pop(module, None)
                return None
            self.files[path] = facts
        return facts

    def find_module_file(self, module: str) -> str | None:
        parts = module.split(".")
        for root in self.search_roots:
            # An import root named like the module's first part is a namespace package (PEP 420:
            # ``awslabs/`` without ``__init__.py``, its packages' names relative to it): there
            # ``awslabs.x.y`` is ``x/y.py``, whichever folder above it the run started from.
            # (Paths are made only for a root that holds the first name: most hold none.)
            within = [parts] if self._may_hold(root, parts[0]) else []
            if len(parts) > 1 and root.name == parts[0] and self._may_hold(root, parts[1]):
                within.append(parts[1:])
            for names in within:
                relative = root.joinpath(*names)
                for candidate in (relative.with_suffix(".py"), relative / "__init__.py"):
                    if self._is_file(candidate):
                        return str(candidate)
        return None

    def _may_hold(self, root: Path, first: str) -> bool:
        """Whether ``root`` holds a package or module named ``first`` at all: one listing per root
        instead of a stat per candidate (a corpus has hundreds of import roots and thousands of
        names that are no project module: ``os``, ``pydantic``, ...). Unknown (no disk): True."""
        if self._is_file is not Path.is_file:
            return True
        names = self._root_names.get(root)
        if names is None:
            try:
                names = frozenset(os.listdir(root))
            except OSError:
                names = frozenset()
            self._root_names[root] = names
        return first in names or f"{first}.py" in names

    def _module_and_name(self, qname: str) -> tuple[FileFacts, str] | None:
        """The project module ``qname`` starts with (the longest one) and the rest of it."""
        parts = qname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            facts = self.module_facts(".".join(parts[:cut]))
            if facts is not None:
                return facts, ".".join(parts[cut:])
        return None

    def lookup(self, qname: str) -> tuple[FileFacts, str] | None:
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

    def runtime_qname(self, qname: str) -> str | None:
        """The runtime object a project name stands for, following re-exports through project
        modules (``myapp.tool`` → ``myapp.api.tool`` → ``mcp_fusion.tool``); None when it is the
        project's own, or not found."""
        if qname in self._runtime_qnames:
            return self._runtime_qnames[qname]
        found: str | None = None
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

    def binding(self, qname: str) -> tuple[Binding, str] | None:
        found = self.lookup(qname)
        if found is None:
            return None
        facts, name = found
        binding = facts.bindings.get(name)
        return (binding, facts.path) if binding is not None else None

    def function(self, qname: str) -> tuple[FunctionFacts, str] | None:
        found = self.lookup(qname)
        if found is None:
            return None
        facts, name = found
        return self.function_in(facts.path, name)

    def function_in(self, path: str, qualname: str) -> tuple[FunctionFacts, str] | None:
        """A function of a file by its qualified name there; ``Class.method`` is looked up
        through the class and its bases in MRO order, bases in other files included."""
        function = self.function_facts(path, qualname)
        if function is not None:
            return function, path
        owner, _, method = qualname.rpartition(".")
        if not owner or not method:
            return None
        for class_path, class_name in self.mro(path, owner)[1:]:
            function = self.function_facts(class_path, f"{class_name}.{method}")
            if function is not None:
                return function, class_path
        return None

    # ----- classes -------------------------------------------------------------------------------

    def class_of(self, qname: str) -> tuple[str, str] | None:
        """(path, class name) of the project class ``qname`` names, following re-exports."""
        found = self.lookup(qname)
        if found is None or found[1] not in found[0].classes:
            return None
        return found[0].path, found[1]

    def mro(self, path: str, name: str) -> list[tuple[str, str]]:
        """The class and its project bases in C3 order (Python's), as (path, class name); bases
        outside the project end it. An inconsistent hierarchy falls back to depth-first order."""
        key = (path, name)
        known = self._mros.get(key)
        if known is not None:
            return known
        self._mros[key] = [key]  # a cycle of bases (a broken project) stops here
        facts = self.files.get(path)
        cls = facts.classes.get(name) if facts is not None else None
        bases = [found for base in (cls.bases if cls is not None else ()) if base and (found := self.class_of(base))]
        linear = _c3_merge([list(self.mro(*base)) for base in bases] + [list(bases)])
        if linear is None:  # no consistent order: what Python would refuse; read left to right
            linear = list(dict.fromkeys(entry for base in bases for entry in self.mro(*base)))
        self._mros[key] = result = [key, *(entry for entry in linear if entry != key)]
        return result

    def base_names(self, path: str, name: str) -> set[str]:
        """The qualified names every class of the MRO names as a base, the outside ones included
        (``enum.StrEnum``, ``str``): what a class *is* beyond the project."""
        names: set[str] = set()
        for class_path, class_name in self.mro(path, name):
            cls = self.files[class_path].classes[class_name]
            names.update(base for base in cls.bases if base)
        return names

    def function_facts(self, path: str, qualname: str) -> FunctionFacts | None:
        """A function's facts, with every raise that rested on a refuted re-export read as an
        ordinary call (its callee is in ``calls``, so it is followed like any other)."""
        key = (path, qualname)
        settled = self._settled_functions.get(key)
        if settled is None:
            facts = self.files.get(path)
            if facts is not None and facts.light:
                if self.signatures_only:
                    return facts.functions.get(qualname)  # its parameters and context, not its body
                facts = self.full_facts(path)
            function = facts.functions.get(qualname) if facts is not None else None
            if function is None:
                return None
            settled = self._settled_functions[key] = self._settle(function)
        return settled

    def full_facts(self, path: str) -> FileFacts | None:
        """A light file's full facts, in its place from now on (module-level facts are the same;
        nothing derived from its function bodies was asked before: see ``function_facts``)."""
        loaded = self._full(path)
        if loaded is not None and not loaded.light:
            self.files[path] = loaded
            return loaded
        return self.files.get(path)

    def _settle(self, function: FunctionFacts) -> FunctionFacts:
        named = any(site.reason_ref is not None for site in function.fail_sites)
        if (
            not named
            and not any(site.assumes for site in function.raises)
            and not any(made.assumes for made in function.constructions)
        ):
            return function
        raises = [site if self.confirmed(site.assumes) else _ordinary_raise(site) for site in function.raises]
        constructions = [made for made in function.constructions if self.confirmed(made.assumes)]
        sites = [self._named_reason(site) for site in function.fail_sites] if named else function.fail_sites
        return dataclasses.replace(function, raises=raises, constructions=constructions, fail_sites=sites)

    def _named_reason(self, site: FailSite) -> FailSite:
        """``ctx.fail(NO_MATCH)``, ``ctx.fail(Reason.NO_MATCH)``: the literal the constant holds."""
        if site.reason is not None or site.reason_ref is None:
            return site
        value = self.resolve_value(Value("ref", site.reason_ref, site.reason_span or site.span))
        return dataclasses.replace(site, reason=str(value.value)) if value.kind == "str" else site

    # ----- values and contracts ----------------------------------------------------------------

    def resolve_value(self, value: Value) -> Value:
        """A field value with a reference to a module-level literal replaced by that literal: a
        constant, a class attribute, an enum member (``Reason.NO_MATCH``, ``Reason.NO_MATCH.value``)."""
        seen = 0
        current = value
        while current.kind == "ref" and seen < MAX_ALIAS_HOPS:
            qname = str(current.value)
            member = self._reexported_code(qname)
            if member is not None:
                return Value("code", member, value.span)
            found = self.binding(qname)
            enum_kind = None
            if found is None and qname.endswith(".value"):  # ``Reason.NO_MATCH.value``: any enum's member
                qname = qname[: -len(".value")]
                if self._enum_kind(qname.rpartition(".")[0]) is not None:
                    found = self.binding(qname)
            elif found is not None:
                enum_kind = self._enum_kind(qname.rpartition(".")[0])
            if found is None:
                return current
            binding, _ = found
            if isinstance(binding, Value) and enum_kind == "plain" and binding.kind != "ref":
                # A member of a plain ``Enum`` is neither its value nor a string (``Reason.X.value`` is).
                shown = ".".join(qname.split(".")[-2:])
                return Value(
                    "member", f"{shown}, an Enum member that is not a string (write {shown}.value)", value.span
                )
            if isinstance(binding, Value):
                current = Value(binding.kind, binding.value, value.span)
            elif isinstance(binding, RefExpr):
                current = Value("ref", binding.qname, value.span)
            else:
                return current
            seen += 1
        return current

    def _enum_kind(self, qname: str) -> str | None:
        """What the members of the class ``qname`` are when it is an enum: ``str`` (``StrEnum``,
        ``(str, Enum)``), ``int`` (``IntEnum``...) or ``plain``; None for any other class or name."""
        if not qname:
            return None
        found = self.class_of(qname)
        if found is None:
            return None
        bases = self.base_names(*found)
        if bases.isdisjoint(ENUM_BASES):
            return None
        if not bases.isdisjoint(STR_BASES):
            return "str"
        return "int" if not bases.isdisjoint(INT_BASES) else "plain"

    def _reexported_code(self, qname: str) -> str | None:
        """``NOT_FOUND`` for ``myapp.api.JsonRpcErrorCode.NOT_FOUND`` when ``myapp.api`` re-exports
        the runtime's ``JsonRpcErrorCode`` (the extractor records the runtime's own as codes)."""
        owner, _, member = qname.rpartition(".")
        if owner.rpartition(".")[2] != "JsonRpcErrorCode" or not member:
            return None
        runtime = self.runtime_qname(owner)
        return member if runtime is not None and runtime.rpartition(".")[2] == "JsonRpcErrorCode" else None

    # ----- handlers and what they reach ----------------------------------------------------------

    def handler(self, definition: Definition, path: str) -> tuple[FunctionFacts, str] | None:
        if definition.handler is not None:
            return self.function_in(path, definition.handler)
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

    def call_outcome(self, qname: str) -> str:
        """How a call of ``qname`` in a reached function is followed: ``followed`` (a function of the
        project, methods through their bases), ``class`` (a project class instantiated), ``unresolved``
        (it names a project module, but no function of it: an attribute of an instance whose class is
        unknown, a name bound at run time), or ``outside`` (a library, a builtin, a local value)."""
        if qname.split(".")[0] in _NEVER_PROJECT:
            return "outside"
        if self.function(qname) is not None:
            return "followed"
        if self.class_of(qname) is not None:
            return "class"
        found = self._module_and_name(qname)
        if found is None or found[1].split(".")[0] in found[0].bindings:
            return "outside"  # not the project's, or a method of a literal (``_CACHE.get``)
        return "unresolved"

    def all_definitions(self) -> Iterator[tuple[Definition, str]]:
        for path in self._analysed:
            for definition in self.definitions(path):
                yield definition, path

    def definitions(self, path: str) -> list[Definition]:
        """A file's definitions as the rules see them: a name given by a constant resolved, a
        definer imported through a project module kept only if it is the runtime's, and each call
        of a registration helper in place of the helper's own registration (``helpers``)."""
        settled = self._definitions.get(path)
        if settled is None:
            settled = []
            facts = self.files[path]
            if is_test_module(path, facts.module):  # a test re-registering the tools: not the project's
                self._definitions[path] = settled
                return settled
            made = [made for call in facts.helper_calls for made in instantiate(self, call)]
            for definition in [*facts.definitions, *made]:
                if definition.template is not None:
                    continue  # what a helper registers is defined by each of its calls
                if not self.confirmed(definition.assumes):
                    continue  # ``@tool`` of the project's own: not a definition of ours
                if definition.server is not None and definition.server.instance:
                    framework = self.server_class(definition.server.ref or "")
                    if framework is not None:
                        definition = dataclasses.replace(definition, server=ServerRef(framework))
                    elif self._module_and_name(definition.server.ref or "") is None or not facts.imports_framework:  # type: ignore[union-attr]  # server is not None: tested above
                        # A class from outside the project that is no server (pydantic-ai's ``Agent``),
                        # or a project class that is none in a module importing no framework.
                        continue
                    # else a project class wrapping a server, in a framework module: kept, as before
                elif definition.server is not None and definition.server.ref is not None:
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

    def server_class(self, qname: str) -> str | None:
        """The framework of a server class: a framework's own, or a project class deriving from one
        (through other project classes and re-exports); None for any other class."""
        seen: set[str] = set()
        pending = [qname]
        while pending and len(seen) < MAX_ALIAS_HOPS * 4:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            framework = framework_of_class(current)
            if framework is not None:
                return framework
            found = self._module_and_name(current)
            if found is None:
                continue
            facts, name = found
            if name in facts.classes:
                pending.extend(base for base in facts.classes[name].bases if base)
            elif name in facts.imports:  # a re-export of a class from another module
                pending.append(facts.imports[name])
        return None

    def server(self, qname: str) -> ServerRef | None:
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
    {
        "asyncio",
        "json",
        "os",
        "re",
        "sys",
        "logging",
        "typing",
        "time",
        "datetime",
        "math",
        "random",
        "itertools",
        "functools",
        "collections",
        "pathlib",
        "subprocess",
        "traceback",
        "dataclasses",
        "print",
        "len",
        "str",
        "int",
        "dict",
        "list",
        "set",
        "tuple",
        "isinstance",
        "range",
        "sum",
        "min",
        "max",
        "sorted",
        "enumerate",
        "zip",
        "any",
        "all",
        "getattr",
        "setattr",
        "hasattr",
    }
)


def _c3_merge(sequences: list[list[tuple[str, str]]]) -> list[tuple[str, str]] | None:
    """C3 linearization's merge step; None when no consistent order exists."""
    sequences = [list(sequence) for sequence in sequences if sequence]
    merged: list[tuple[str, str]] = []
    while sequences:
        for sequence in sequences:
            head = sequence[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        merged.append(head)
        sequences = [[entry for entry in sequence if entry != head] for sequence in sequences]
        sequences = [sequence for sequence in sequences if sequence]
    return merged
