"""The typed model the extractor builds and the rules read (DESIGN §4).

Everything here is plain, picklable data: no libcst node survives extraction, so a file's facts can
cross a process boundary, sit in the cache, and be combined with other files' facts afterwards.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence, Union


@dataclass(slots=True)
class Span:
    """A source range. Lines are 1-based, columns 0-based code points; ``start``/``end`` are
    character offsets into the file's text (what fixes edit). ``stmt_line`` is the first line of
    the enclosing statement (suppressions may sit there)."""

    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0
    start: int = 0
    end: int = 0
    stmt_line: int = 0


# A fact the extractor could only derive by *assuming* that a project name re-exports the runtime
# object it is named after (``from myapp.api import tool``, where ``myapp/api.py`` imports it from
# the runtime): the qualified names it assumed, each ending in a runtime API name. One file cannot
# see another, so the project view confirms them (``Project.runtime_qname``) and drops, or reads
# as an ordinary call, what rests on an assumption that turned out false. Empty: no assumption.
# A re-export keeps the runtime's name (``from mcp_fusion import tool as define`` re-exported as
# ``define`` is not recognised). A file that reaches the runtime only through such a module never
# names it, so the pre-scan takes a second look at skipped files that import a re-exporting module
# (``engine._admit_reexport_users``).
Assumptions = tuple[str, ...]

def is_runtime(qname: str, runtime_modules: Sequence[str]) -> bool:
    """Whether ``qname`` is one of the runtime modules or something inside one."""
    return any(qname == m or qname.startswith(m + ".") for m in runtime_modules)


# ----- values ---------------------------------------------------------------------------------

ValueKind = Literal["str", "fstring", "bytes", "int", "float", "bool", "none", "code", "ref", "collection", "expr"]


@dataclass(slots=True)
class Value:
    """A field's statically known value.

    * ``str``/``int``/``float``/``bool``/``none``: a literal (``value`` holds it; a string written
      as implicit concatenation is joined);
    * ``code``: ``JsonRpcErrorCode.<value>`` through any alias (the member name, maybe unknown);
    * ``ref``: a name bound elsewhere (``value`` is its qualified name), resolved across files later;
    * ``fstring``, ``bytes``, ``collection``, ``expr``: anything else; ``value`` is a short description.
    """

    kind: ValueKind
    value: object
    span: Span


@dataclass(slots=True)
class EntryField:
    name: str
    value: Value
    key_span: Span  # the keyword or the dict key: where FL116 points


@dataclass(slots=True)
class Entry:
    """One contract entry: ``ErrorContract(...)`` or a dict literal."""

    form: Literal["call", "dict"]
    span: Span
    fields: list[EntryField]
    opaque: list[str] = field(default_factory=list)  # ``**spread``, positional args: fields unknown
    opaque_span: Optional[Span] = None  # the first of those (what FL190 points at)
    assumes: Assumptions = ()  # ``ErrorContract`` imported through a project module

    def get(self, name: str) -> Optional[EntryField]:
        for f in self.fields:
            if f.name == name:
                return f
        return None


# A contract expression, as written; resolved into a Contract once every file's facts are in.
@dataclass(slots=True)
class ListExpr:
    items: list["Item"]
    span: Span


@dataclass(slots=True)
class RefExpr:
    qname: str
    span: Span


@dataclass(slots=True)
class ConcatExpr:  # ``A + [...]``
    parts: list["ContractExpr"]
    span: Span


@dataclass(slots=True)
class BadExpr:
    """Not a list: ``invalid`` is a literal of the wrong type (FL100), else unresolvable (FL190)."""

    description: str
    span: Span
    invalid: bool


ContractExpr = Union[ListExpr, RefExpr, ConcatExpr, BadExpr]


@dataclass(slots=True)
class EntryItem:
    entry: Entry


@dataclass(slots=True)
class SpreadItem:  # ``*SHARED``
    expr: ContractExpr
    span: Span


@dataclass(slots=True)
class RefItem:  # a name bound to one entry
    qname: str
    span: Span


@dataclass(slots=True)
class BadItem:
    """Not an entry: ``invalid`` means a literal/known wrong type (FL102), else unresolvable (FL190)."""

    description: str
    span: Span
    invalid: bool


Item = Union[EntryItem, SpreadItem, RefItem, BadItem]

# Module-level bindings other files may import: a contract-ish expression, one entry, or a literal.
Binding = Union[ListExpr, ConcatExpr, RefExpr, BadExpr, Entry, Value]


# ----- handler facts ----------------------------------------------------------------------------


@dataclass(slots=True)
class FailSite:
    """``ctx.fail(...)`` or ``ctx.recovery_for(...)``."""

    method: Literal["fail", "recovery_for"]
    reason: Optional[str]  # None: not a literal (dynamic)
    span: Span  # the call
    reason_span: Optional[Span]
    usage: Literal["raised", "discarded", "other"]


@dataclass(slots=True)
class RaiseSite:
    span: Span  # the raise statement
    kind: Literal["fail", "mcp_error", "factory", "tool_error", "protocol", "builtin", "reraise", "other"]
    code: Optional[str] = None  # JsonRpcErrorCode member name the raise carries, when known
    factory: Optional[str] = None
    exc_name: Optional[str] = None  # builtin class name (FL300)
    data_reason: Optional[str] = None
    in_except: Optional[str] = None  # the ``as`` name of the enclosing except clause, or "" if unnamed
    has_cause: bool = False  # ``from x`` or ``cause=``
    leaks: list[str] = field(default_factory=list)  # FL303: what the message is built from
    call_span: Optional[Span] = None  # the raised call, when the raise is ``raise <call>``
    message_span: Optional[Span] = None  # its message argument
    assumes: Assumptions = ()  # the factory/``McpError``/code came through a project module


@dataclass(slots=True)
class Construction:
    """``McpError(JsonRpcErrorCode.X, ...)`` anywhere (FL301)."""

    span: Span  # the call
    code: str
    func_span: Span  # ``McpError``: the fix replaces it and the code argument with the factory
    code_span: Optional[Span]  # the positional code argument (None: passed by keyword, no fix)
    next_arg_span: Optional[Span]  # the argument after the code, if any
    assumes: Assumptions = ()


@dataclass(slots=True)
class ExceptClause:
    span: Span  # the whole clause; reported from its start to the end of ``type_span``
    type_span: Optional[Span]  # what follows ``except`` (None: a bare ``except:``)
    catches: str  # what it catches: "bare except", "BaseException", "CancelledError", "" if unrelated
    reraises: bool


@dataclass(slots=True)
class FunctionFacts:
    qualname: str  # ``func`` or ``Class.method`` in its module
    span: Span  # the def's name
    fail_sites: list[FailSite] = field(default_factory=list)
    raises: list[RaiseSite] = field(default_factory=list)
    constructions: list[Construction] = field(default_factory=list)
    excepts: list[ExceptClause] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # qualified names of what it calls, in order
    context_param: Optional[str] = None
    params: list[str] = field(default_factory=list)  # parameter names: a tool's arguments (FL4xx)


# ----- definitions ------------------------------------------------------------------------------

DefinitionKind = Literal["tool", "resource", "prompt"]


@dataclass(slots=True)
class Definition:
    kind: DefinitionKind
    name: Optional[str]  # tool/prompt name, resource URI; None when not a literal
    span: Span  # the decorator / registering call
    name_span: Span
    errors: Optional[ContractExpr]  # None: no ``errors=`` keyword
    errors_arg_span: Optional[Span]  # the whole ``errors=...`` argument (FL101's fix drops it)
    handler: Optional[str]  # qualname of the handler function in this module, when known
    handler_ref: Optional[str] = None  # qualified name when the handler is imported
    # The name given by a constant (``@tool(NAME)``): its qualified name, for the project view to
    # resolve (``name`` is then None until it does; see ``Project.definitions``).
    name_ref: Optional[str] = None
    assumes: Assumptions = ()  # the definer (``tool``, ...) came through a project module

    @property
    def label(self) -> str:
        shown = self.name if self.name is not None else "<dynamic>"
        return f"resource '{shown}'" if self.kind == "resource" else f"{self.kind} '{shown}'"


@dataclass(slots=True)
class FileFacts:
    """All a file contributes to the project model."""

    path: str
    module: Optional[str]
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    # The module-level names bound to runtime objects (local name -> the runtime's qualified name),
    # star imports included: what this module re-exports to the project (``Assumptions``).
    runtime_names: dict[str, str] = field(default_factory=dict)
    bindings: dict[str, Binding] = field(default_factory=dict)
    definitions: list[Definition] = field(default_factory=list)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    suppressions: dict[int, frozenset[str]] = field(default_factory=dict)  # line -> codes/names; "*" = all
