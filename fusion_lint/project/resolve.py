"""Resolving the project before any rule runs (DESIGN §2.1).

Every definition of the analysed files gets its contract (entries with resolved values), its
handler and its reach; every entry learns which definitions hold it, every reached function
which definitions reach it; the tool vocabulary is collected. Files the resolution needs (a shared
contract module, a service) are loaded here, through the index — never later, by a rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from ..facts.model import Definition, FileFacts, FunctionFacts, Try
from .contracts import ContractResolver
from .index import ProjectIndex
from .view import FunctionView, ProjectView, Reached, ResolvedDefinition, Vocabulary


def resolve(index: ProjectIndex, recovery_min_words: int, runtime_modules: tuple[str, ...],
            full_paths: Optional[set[str]] = None) -> ProjectView:  # fmt: skip
    """The resolved project: every definition of the analysed files, and what they reach.

    ``full_paths`` (a partial run: ``partial.reaching_files``): only the definitions of these
    files are resolved in full; every other one gets its contract and its handler's signature
    (what the vocabulary, the holders of entries and the order of definitions need), no reach."""
    contracts = ContractResolver(index)
    definitions: list[ResolvedDefinition] = []
    for definition, path in list(index.all_definitions()):
        if full_paths is not None and path not in full_paths:
            resolved = _for_vocabulary(index, contracts, definition, path)
        else:
            handler = index.handler(definition, path)
            reach = index.reach(*handler) if handler is not None else []
            resolved = ResolvedDefinition(definition, path, contracts.contract(definition, path),
                                          reach[0] if reach else None, reach,
                                          wrappers(index, handler[0], definition.wrapped_by) if handler is not None else [])  # fmt: skip
        definitions.append(resolved)  # (every one holds its entries: labels count places in the first holder)
        seen: set[int] = set()
        for entry in resolved.contract.entries:
            if id(entry) not in seen:  # an entry spread twice into one contract: one holder
                seen.add(id(entry))
                entry.holders.append(resolved)
    functions: dict[tuple[str, str], FunctionView] = {}
    for resolved in definitions:
        for reached in resolved.reach:
            view = functions.get((reached.path, reached.function.qualname))
            if view is None:
                view = functions[(reached.path, reached.function.qualname)] = FunctionView(reached.function, reached.path)
            view.reached_by.append((resolved, reached.depth))
            if reached.depth == 0:
                view.handler_of.append(resolved)
    for view in functions.values():
        for name, path, qualname in index.call_targets(view.function, view.path):
            callee = functions.get((path, qualname))
            if callee is not None and callee is not view:
                callee.callers.append((view, name))
    LAST_RESOLVE.vocabulary_only = sum(1 for d in definitions if full_paths is not None and d.path not in full_paths)
    LAST_RESOLVE.full = len(definitions) - LAST_RESOLVE.vocabulary_only
    return ProjectView(
        definitions=definitions,
        entries=list(contracts.entries.values()),
        functions=list(functions.values()),
        vocabulary=vocabulary(definitions, index.files.values()),
        files=index.files,
        recovery_min_words=recovery_min_words,
        runtime_modules=runtime_modules,
    )


@dataclass
class ResolveCounts:
    """What the last ``resolve`` did (the partial-run tests count it; no timing)."""

    full: int = 0  # definitions resolved in full (reach, wrappers)
    vocabulary_only: int = 0  # definitions given only their contract and handler's signature


LAST_RESOLVE = ResolveCounts()


def _for_vocabulary(index: ProjectIndex, contracts: ContractResolver, definition: Definition,
                    path: str) -> ResolvedDefinition:  # fmt: skip
    """A definition no reported file depends on: its contract (entries' holders, reasons and codes)
    and its handler (its arguments), read from light facts as they are."""
    contract = contracts.contract(definition, path)
    index.signatures_only = True
    try:
        handler = index.handler(definition, path)
    finally:
        index.signatures_only = False
    return ResolvedDefinition(definition, path, contract, Reached(handler[0], handler[1], 0) if handler else None, [])


def wrappers(index: ProjectIndex, handler: FunctionFacts, wrapped_by: tuple[str, ...] = ()) -> list[list[tuple[Try, ...]]]:
    """The handler's project decorators that call it from a wrapper, and those a registration
    helper wraps it in (``wrapped_by``): how each wrapper's calls of it are guarded (a decorator of
    a library, or one that never calls it, is not one)."""
    found = []
    for qname in (*handler.decorated_by, *wrapped_by):
        decorator = index.function(qname)
        if decorator is not None and decorator[0].wrapper_calls:
            found.append(decorator[0].wrapper_calls)
    return found


def vocabulary(definitions: list[ResolvedDefinition], files: Iterable[FileFacts] = ()) -> Vocabulary:
    """What the model can name: every tool's name (with the prefixes a literal ``mount(prefix=...)``
    gives them, and the names a low-level server lists), its handler's arguments, the declared
    reasons and codes."""
    tools: set[str] = set()
    arguments: set[str] = set()
    reasons: set[str] = set()
    codes: set[str] = set()
    all_named = True
    for resolved in definitions:
        definition = resolved.definition
        if definition.kind == "tool":
            if definition.name is None:
                all_named = False
            else:
                tools.add(definition.name)
        handler: Optional[Reached] = resolved.handler
        if handler is not None:
            function = handler.function
            arguments.update(p for p in function.params if p != function.context_param)
        reasons.update(entry.reason for entry in resolved.contract.entries if entry.reason is not None)
        codes.update(entry.code for entry in resolved.contract.entries if entry.code is not None)
    arguments -= {"self", "cls"}
    prefixes: set[str] = set()
    for facts in files:
        tools.update(facts.listed_tools)
        prefixes.update(facts.mount_prefixes)
    tools |= {f"{prefix}_{name}" for prefix in prefixes for name in list(tools)}  # fastmcp's ``<prefix>_<tool>``
    return Vocabulary(frozenset(tools), frozenset(arguments), frozenset(reasons), all_named, codes=frozenset(codes))
