"""Resolving the project before any rule runs (DESIGN §2.1).

Every definition of the analysed files gets its contract (entries with resolved values), its
handler and its reach; every entry learns which definitions hold it, every reached function
which definitions reach it; the tool vocabulary is collected. Files the resolution needs (a shared
contract module, a service) are loaded here, through the index — never later, by a rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fusion_lint.facts.model import Definition, FileFacts, FunctionFacts, Try
from fusion_lint.project.contracts import ContractResolver
from fusion_lint.project.index import ProjectIndex
from fusion_lint.project.view import FunctionView, ProjectView, Reached, ResolvedDefinition, ResolvedEntry, Vocabulary


def resolve(
    index: ProjectIndex,
    recovery_min_words: int,
    runtime_modules: tuple[str, ...],
    full_paths: set[str] | None = None,
) -> ProjectView:
    """The resolved project: every definition of the analysed files, and what they reach.

    ``full_paths`` (a partial run: ``partial.reaching_files``): only the definitions of these
    files are resolved in full; every other one gets its contract and its handler's signature
    (what the vocabulary, the holders of entries and the order of definitions need), no reach."""
    contracts = ContractResolver(index)
    definitions = [
        resolved_definition(index, contracts, definition, path, full_paths)
        for definition, path in list(index.all_definitions())
    ]
    return assembled(
        index,
        definitions,
        held(definitions),
        contracts,
        full_paths,
        vocabulary(definitions, index.files.values()),
        recovery_min_words,
        runtime_modules,
    )


def resolved_definition(
    index: ProjectIndex, contracts: ContractResolver, definition: Definition, path: str, full_paths: set[str] | None
) -> ResolvedDefinition:
    """One definition resolved: in full when ``full_paths`` holds its file (or is None)."""
    if full_paths is not None and path not in full_paths:
        return _for_vocabulary(index, contracts, definition, path)
    handler = index.handler(definition, path)
    reach = index.reach(*handler) if handler is not None else []
    return ResolvedDefinition(
        definition,
        path,
        contracts.contract(definition, path),
        reach[0] if reach else None,
        reach,
        wrappers(index, handler[0], definition.wrapped_by) if handler is not None else [],
    )


def held(definitions: Iterable[ResolvedDefinition]) -> list[tuple[ResolvedEntry, ResolvedDefinition]]:
    """Each (entry, definition holding it), in the project's order: every definition holds its
    entries (labels count places in the first holder); an entry spread twice into one contract
    is held once."""
    found = []
    for resolved in definitions:
        seen: set[int] = set()
        for entry in resolved.contract.entries:
            if id(entry) not in seen:
                seen.add(id(entry))
                found.append((entry, resolved))
    return found


def assembled(
    index: ProjectIndex,
    definitions: list[ResolvedDefinition],
    holding: Iterable[tuple[ResolvedEntry, ResolvedDefinition]],
    contracts: ContractResolver,
    full_paths: set[str] | None,
    vocabulary: Vocabulary,
    recovery_min_words: int,
    runtime_modules: tuple[str, ...],
    full: int | None = None,
) -> ProjectView:
    """The view of resolved definitions (in the project's order): each entry's holders
    (``holding``: ``held(definitions)``), each reached function's callers and the definitions
    reaching it. ``full``: how many definitions were resolved in full, when the caller knows."""
    entries = list(contracts.entries.values())  # (in order of first use)
    for entry in entries:
        entry.holders = []  # (an entry the language server kept from its last lint: ``kept_resolution``)
    for entry, resolved in holding:
        entry.holders.append(resolved)
    functions: dict[tuple[str, str], FunctionView] = {}
    for resolved in definitions:
        for reached in resolved.reach:
            view = functions.get((reached.path, reached.function.qualname))
            if view is None:
                view = functions[(reached.path, reached.function.qualname)] = FunctionView(
                    reached.function, reached.path
                )
            view.reached_by.append((resolved, reached.depth))
            if reached.depth == 0:
                view.handler_of.append(resolved)
    for view in functions.values():
        for name, path, qualname in index.call_targets(view.function, view.path):
            callee = functions.get((path, qualname))
            if callee is not None and callee is not view:
                callee.callers.append((view, name))
    if full is None:
        full = len(definitions) - sum(1 for d in definitions if full_paths is not None and d.path not in full_paths)
    return ProjectView(
        definitions=definitions,
        entries=entries,
        functions=list(functions.values()),
        vocabulary=vocabulary,
        files=index.files,
        recovery_min_words=recovery_min_words,
        runtime_modules=runtime_modules,
        resolved_in_full=full,
    )


def _for_vocabulary(
    index: ProjectIndex, contracts: ContractResolver, definition: Definition, path: str
) -> ResolvedDefinition:
    """A definition no reported file depends on: its contract (entries' holders, reasons and codes)
    and its handler (its arguments), read from light facts as they are."""
    contract = contracts.contract(definition, path)
    index.signatures_only = True
    try:
        handler = index.handler(definition, path)
    finally:
        index.signatures_only = False
    return ResolvedDefinition(definition, path, contract, Reached(handler[0], handler[1], 0) if handler else None, [])


def wrappers(
    index: ProjectIndex, handler: FunctionFacts, wrapped_by: tuple[str, ...] = ()
) -> list[list[tuple[Try, ...]]]:
    """The handler's project decorators that call it from a wrapper, and those a registration
    helper wraps it in (``wrapped_by``): how each wrapper's calls of it are guarded (a decorator of
    a library, or one that never calls it, is not one)."""
    found = []
    for qname in (*handler.decorated_by, *wrapped_by):
        decorator = index.function(qname)
        if decorator is not None and decorator[0].wrapper_calls:
            found.append(decorator[0].wrapper_calls)
    return found


@dataclass(frozen=True)
class VocabularyShare:
    """What some definitions add to the vocabulary (the language server keeps each file's)."""

    tools: frozenset[str]
    arguments: frozenset[str]
    reasons: frozenset[str]
    codes: frozenset[str]
    all_named: bool
    # Tools whose name is computed: the functions they register (FL401 checks what it can see), and
    # whether one of them registers a function the project cannot follow (then nothing can be checked).
    computed: frozenset[str] = frozenset()
    unknowable: bool = False


def vocabulary(definitions: list[ResolvedDefinition], files: Iterable[FileFacts] = ()) -> Vocabulary:
    """What the model can name: every tool's name (with the prefixes a literal ``mount(prefix=...)``
    gives them, and the names a low-level server lists), its handler's arguments, the declared
    reasons and codes."""
    return vocabulary_of([vocabulary_share(definitions)], files)


def vocabulary_share(definitions: Iterable[ResolvedDefinition]) -> VocabularyShare:
    """What these definitions add to the vocabulary (tools, arguments, reasons, codes)."""
    tools: set[str] = set()
    arguments: set[str] = set()
    reasons: set[str] = set()
    codes: set[str] = set()
    computed: set[str] = set()
    all_named, unknowable = True, False
    for resolved in definitions:
        definition = resolved.definition
        if definition.kind == "tool":
            if definition.name is None:
                all_named = False
                if resolved.handler is not None:
                    computed.add(resolved.handler.function.qualname.rpartition(".")[2])
                else:
                    unknowable = True
            else:
                tools.add(definition.name)
        handler: Reached | None = resolved.handler
        if handler is not None:
            function = handler.function
            arguments.update(p for p in function.params if p != function.context_param)
        reasons.update(entry.reason for entry in resolved.contract.entries if entry.reason is not None)
        codes.update(entry.code for entry in resolved.contract.entries if entry.code is not None)
    return VocabularyShare(
        frozenset(tools),
        frozenset(arguments),
        frozenset(reasons),
        frozenset(codes),
        all_named,
        frozenset(computed),
        unknowable,
    )


def combined(shares: Iterable[VocabularyShare]) -> VocabularyShare:
    """What the definitions of all these shares add to the vocabulary."""
    shares = list(shares)
    return VocabularyShare(
        frozenset().union(*(s.tools for s in shares)),
        frozenset().union(*(s.arguments for s in shares)),
        frozenset().union(*(s.reasons for s in shares)),
        frozenset().union(*(s.codes for s in shares)),
        all(s.all_named for s in shares),
        frozenset().union(*(s.computed for s in shares)),
        any(s.unknowable for s in shares),
    )


def vocabulary_of(shares: Iterable[VocabularyShare], files: Iterable[FileFacts]) -> Vocabulary:
    """The vocabulary of the definitions whose shares these are, in a project of ``files``."""
    return vocabulary_from(combined(shares), ((facts.listed_tools, facts.mount_prefixes) for facts in files))


def vocabulary_from(share: VocabularyShare, listings: Iterable[tuple[Iterable[str], Iterable[str]]]) -> Vocabulary:
    """The vocabulary of the definitions ``share`` describes, with each file's listed tools and
    mount prefixes (``listings``: one ``(listed_tools, mount_prefixes)`` pair per file)."""
    tools, reasons, codes = set(share.tools), share.reasons, share.codes
    arguments = share.arguments - {"self", "cls"}
    prefixes: set[str] = set()
    for listed, mounted in listings:
        tools.update(listed)
        prefixes.update(mounted)
    tools |= {f"{prefix}_{name}" for prefix in prefixes for name in list(tools)}  # fastmcp's ``<prefix>_<tool>``
    return Vocabulary(
        frozenset(tools),
        arguments,
        reasons,
        share.all_named,
        codes=codes,
        computed_tools=share.computed,
        unknowable_tools=share.unknowable,
    )


def same_vocabulary(a: Vocabulary, b: Vocabulary) -> bool:
    """Whether two vocabularies hold the same words (every field a rule may read)."""
    return a.words() == b.words()
