"""The resolved project as the rules see it: plain data, every value a rule may ask already known.

``resolve`` builds it; rules read it and nothing else (no file is read or parsed once it exists),
and the fixes they describe are built from it and the text of the file they edit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from fusion_lint.base.diagnostics import Span
from fusion_lint.base.stats import ResolveCounts
from fusion_lint.facts.model import (
    BadExpr,
    BadItem,
    Definition,
    Entry,
    EntryField,
    FileFacts,
    FunctionFacts,
    Try,
    Value,
)
from fusion_lint.project.suggest import NameIndex
from mcp_fusion import JsonRpcErrorCode, code_name, coerce_code, is_valid_code


@dataclass
class Reached:
    function: FunctionFacts
    path: str
    depth: int  # 0: the handler itself; its direct callee is 1


@dataclass(eq=False)
class ResolvedEntry:
    """A contract entry with its fields' values resolved (constants, imports, re-exported codes).

    ``holders`` are the definitions whose contract holds it (a shared constant serves several),
    in the project's order; ``index`` is its position in the first holder's contract."""

    entry: Entry
    path: str  # the file it is written in
    fields: list[tuple[EntryField, Value]]  # every field as written, with its resolved value
    holders: list[ResolvedDefinition] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.values: dict[str, Value] = {}  # field name -> resolved value (the first, when written twice)
        for written, value in self.fields:
            self.values.setdefault(written.name, value)

    def get(self, name: str) -> Value | None:
        return self.values.get(name)

    @property
    def reason(self) -> str | None:
        value = self.values.get("reason")
        return str(value.value) if value is not None and value.kind == "str" else None

    @property
    def code(self) -> str | None:
        """The declared code by name, when known: a member's (``JsonRpcErrorCode.X``, its int, its
        name as a string) or a canonical or custom string code (DESIGN §3.1)."""
        value = self.values.get("code")
        if value is not None and value.kind == "code":
            return str(value.value)
        if value is not None and value.kind in ("int", "str") and is_valid_code(value.value):
            return code_name(coerce_code(value.value))
        return None

    @property
    def thrown_by(self) -> str | None:
        value = self.values.get("thrown_by")
        return str(value.value) if value is not None and value.kind == "str" else None


@dataclass(eq=False)
class ResolvedContract:
    """A definition's contract, resolved across files.

    ``complete`` is False when part of it could not be resolved statically: the rules that need the
    whole contract (§5.2) are then skipped and FL190 says so.
    """

    declared: bool
    entries: list[ResolvedEntry] = field(default_factory=list)
    # A framework handler's ``@contract`` above its registering decorator (FL118): the framework
    # registered the unwrapped function, so the contract never runs. Its entries are still checked.
    inert: bool = False
    wrong_type: tuple[BadExpr, str] | None = None  # FL100
    empty_literal: bool = False  # FL101: ``errors=[]`` written at the definition
    bad_items: list[tuple[BadItem, str]] = field(default_factory=list)  # FL102
    # FL190: (what could not be resolved, as a noun phrase; where; path)
    unresolved: list[tuple[str, Span, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.declared and not self.inert and self.wrong_type is None and not self.unresolved

    @cached_property
    def reasons_and_codes_known(self) -> bool:
        """Every entry's reason and code are statically known (or plainly wrong, which FL1xx
        reports). ``reason=REASONS.X`` or ``**COMMON`` hide them: comparing a handler with such a
        contract would guess."""
        for resolved in self.entries:
            for name in ("reason", "code"):
                value = resolved.get(name)
                if (value is None and resolved.entry.opaque) or (value is not None and value.kind in UNRESOLVED_KINDS):
                    return False
        return True

    @property
    def checkable(self) -> bool:
        """Whether the §5.2 rules may compare a handler with this contract."""
        return self.complete and self.reasons_and_codes_known

    @property
    def files(self) -> set[str]:
        """The files this contract is written in (where its diagnostics land)."""
        written = {entry.path for entry in self.entries} | {path for _, path in self.bad_items}
        written |= {path for _, _, path in self.unresolved}
        if self.wrong_type is not None:
            written.add(self.wrong_type[1])
        return written


@dataclass(eq=False)
class ResolvedDefinition:
    definition: Definition
    path: str
    contract: ResolvedContract
    handler: Reached | None  # depth 0 of ``reach``; None when the handler cannot be found
    reach: list[Reached]
    # Each project decorator between the framework and the handler: the try statements around
    # each call its wrapper makes of the handler (``FunctionFacts.wrapper_calls``).
    wrappers: list[list[tuple[Try, ...]]] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The definition's label; a computed name is labelled by the function only when the
        handler was found (``tool.fn`` of an object the project cannot follow names no function)."""
        if self.definition.name is None and self.handler is None and not self.definition.dispatcher:
            return self.definition.label_without_function
        return self.definition.label

    @property
    def kind(self) -> str:
        return self.definition.kind


@dataclass(eq=False)
class FunctionView:
    """A function some definition reaches, with every definition that reaches it."""

    function: FunctionFacts
    path: str
    handler_of: list[ResolvedDefinition] = field(default_factory=list)  # depth 0
    reached_by: list[tuple[ResolvedDefinition, int]] = field(default_factory=list)  # (definition, depth)
    # The reached functions that call it, with the name they call it by (their ``guarded_calls`` say
    # whether a try around the call catches what it raises).
    callers: list[tuple[FunctionView, str]] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """What the model can name in a hint: the project's tools and the arguments they take."""

    tools: frozenset[str]
    arguments: frozenset[str]
    reasons: frozenset[str]
    all_tools_named: bool  # False: some tool's name is not a literal, so the set is incomplete
    codes: frozenset[str] = frozenset()  # the codes the contracts declare, by name (``INVOICE_LOCKED``)
    computed_tools: frozenset[str] = frozenset()  # the functions registered under a computed name
    unknowable_tools: bool = False  # a computed name registers a function the project cannot follow
    # What the recovery rules learn about each text, so a text shared by many entries is read once.
    scans: dict[str, Any] = field(default_factory=dict[str, Any], compare=False, hash=False, repr=False)

    def words(self) -> tuple[Any, ...]:
        """Every field a rule may read, in ``VocabularyShare``'s order: what the run's snapshot stores
        per file, the rules' cache digests and ``same_vocabulary`` compares (one list for the three,
        so a field added here cannot be missed by one of them)."""
        return (
            self.tools,
            self.arguments,
            self.reasons,
            self.codes,
            self.all_tools_named,
            self.computed_tools,
            self.unknowable_tools,
        )

    @cached_property
    def sorted_tools(self) -> list[str]:
        return self.tool_index.names

    @cached_property
    def tool_index(self) -> NameIndex:
        """The tools by trigram, for "did you mean" (built on first use, once per run)."""
        return NameIndex(self.tools)


@dataclass(eq=False)
class ProjectView:
    """Everything the rules may look at, resolved."""

    definitions: list[ResolvedDefinition]  # every definition of the analysed files, in order
    entries: list[ResolvedEntry]  # every distinct entry some contract holds, in order of first use
    functions: list[FunctionView]  # every function some definition reaches, in order of first reach
    vocabulary: Vocabulary
    files: dict[str, FileFacts]
    recovery_min_words: int = 5
    runtime_modules: tuple[str, ...] = ("mcp_fusion",)
    # The definitions that may report into the reported files, in order, when the resolution knows
    # most cannot (the language server's kept resolution); None: any of them may.
    touch_candidates: list[ResolvedDefinition] | None = None
    release_hook: Callable[[], object] | None = None  # run by ``release`` (the kept resolution's lock)
    resolved_in_full: int = 0  # how many definitions have their reach (the others: vocabulary only)

    @cached_property
    def _views(self) -> dict[int, FunctionView]:
        return {id(view.function): view for view in self.functions}

    def resolve_counts(self) -> ResolveCounts:
        """What the resolution did, for the run's stats: definitions in full, and for vocabulary only."""
        return ResolveCounts(self.resolved_in_full, len(self.definitions) - self.resolved_in_full)

    def function_view(self, function: FunctionFacts) -> FunctionView | None:
        """The view of a reached function (its callers, the definitions it serves)."""
        return self._views.get(id(function))

    def release(self) -> None:
        """Drop the links between definitions, entries and functions once the run is done: they
        are reference cycles, which left the whole view (3,000 modules: 3.5 million objects) to a
        garbage collection scanning all of it (~2 s); without them reference counting frees it."""
        for entry in self.entries:
            entry.holders = []
        for view in self.functions:
            view.callers, view.handler_of, view.reached_by = [], [], []
        self.__dict__.pop("_views", None)
        if self.release_hook is not None:
            self.release_hook()


UNRESOLVED_KINDS = ("ref", "expr")  # values a field holds that could not be resolved statically
CODE_NAMES = {int(member): member.name for member in JsonRpcErrorCode}
