"""What a file *is*, as plain data (DESIGN §2.1 "facts, not conclusions").

The extractor records what the code says — the definitions and their contracts as written, every
raise, except clause, return and call of every function, the module's names — and nothing about
what any rule makes of it. Everything here is picklable data with no syntax-tree node inside, so a
file's facts can cross a process boundary, sit in the cache, and meet other files' facts in the
project view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal

from fusion_lint.base.diagnostics import Span

# A fact the extractor could only derive by *assuming* that a project name re-exports the runtime
# object it is named after (``from myapp.api import tool``, where ``myapp/api.py`` imports it from
# the runtime): the qualified names it assumed, each ending in a runtime API name. One file cannot
# see another, so the project view confirms them and drops, or reads as an ordinary call, what
# rests on an assumption that turned out false. Empty: no assumption.
Assumptions = tuple[str, ...]


def is_runtime(qname: str, runtime_modules: Sequence[str]) -> bool:
    """Whether ``qname`` is one of the runtime modules or something inside one."""
    return any(qname == m or qname.startswith(m + ".") for m in runtime_modules)


# ----- values -----------------------------------------------------------------------------------

ValueKind = Literal[
    "str", "fstring", "bytes", "int", "float", "bool", "none", "code", "ref", "collection", "expr", "member"
]


@dataclass(slots=True)
class Value:
    """A value as written.

    * ``str``/``int``/``float``/``bool``/``none``: a literal (``value`` holds it; a string written
      as implicit concatenation is joined);
    * ``code``: ``JsonRpcErrorCode.<value>`` through any alias (the member name, maybe unknown);
    * ``ref``: a name bound elsewhere (``value`` is its qualified name), resolved across files later;
    * ``fstring``, ``bytes``, ``collection``, ``expr``: anything else; ``value`` is a short description;
    * ``member``: (resolved only) a member of an ``Enum`` that is neither a ``str`` nor an ``int``,
      used where its value was meant; ``value`` says so.
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
    opaque_span: Span | None = None  # the first of those (what FL190 points at)
    assumes: Assumptions = ()  # ``ErrorContract`` imported through a project module
    # ``**BASE`` spreads whose name is known: (its qualified name, its entry in ``opaque``, the
    # ``**BASE`` argument), so the project view can read the fields of a module-level dict literal.
    spreads: tuple[tuple[str, str, Span], ...] = ()
    positional: Span | None = None  # the first positional argument of ``ErrorContract(...)`` (FL102)

    def get(self, name: str) -> EntryField | None:
        for entry_field in self.fields:
            if entry_field.name == name:
                return entry_field
        return None


# A contract expression, as written; the project view resolves it once every file's facts are in.
@dataclass(slots=True)
class ListExpr:
    items: list[Item]
    span: Span


@dataclass(slots=True)
class RefExpr:
    qname: str
    span: Span


@dataclass(slots=True)
class ConcatExpr:  # ``A + [...]``
    parts: list[ContractExpr]
    span: Span


@dataclass(slots=True)
class BadExpr:
    """Not a list: ``invalid`` is a literal of the wrong type (FL100), else unresolvable (FL190)."""

    description: str
    span: Span
    invalid: bool


ContractExpr = ListExpr | RefExpr | ConcatExpr | BadExpr


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


Item = EntryItem | SpreadItem | RefItem | BadItem

# Module-level bindings other files may import: a contract-ish expression, one entry, or a literal.
Binding = ListExpr | ConcatExpr | RefExpr | BadExpr | Entry | Value


# ----- calls as written (what a fix needs to rewrite one) ---------------------------------------


@dataclass(slots=True)
class Argument:
    """One argument of a call: ``span`` covers ``keyword=value``, ``*value`` or ``value``."""

    span: Span
    value_span: Span
    keyword: str | None = None
    star: str = ""  # "", "*" or "**"


@dataclass(slots=True)
class CallLayout:
    """Where a call's parts are, so that a fix can rewrite its arguments as text."""

    span: Span  # the call, from its callee to its closing parenthesis
    func_span: Span
    arguments: tuple[Argument, ...]


# ----- what a function does --------------------------------------------------------------------


UseKind = Literal["call", "format", "name"]


@dataclass(slots=True)
class Uses:
    """What an expression is built from, in the order the extractor met it: each part is
    ``("call", <callee's qualified name>, <dotted name of its first argument or None>)``,
    ``("format", <dotted name formatted into an f-string>, <conversion: "r", "s", "a" or "">)`` or
    ``("name", <dotted name read>, None)``."""

    parts: tuple[tuple[UseKind, str, str | None], ...] = ()


FailMethod = Literal["fail", "recovery_for"]
Usage = Literal["raised", "discarded", "other"]


@dataclass(slots=True)
class FailSite:
    """``ctx.fail(...)`` or ``ctx.recovery_for(...)`` (through the context, an alias, or the
    runtime's module-level functions)."""

    method: FailMethod
    reason: str | None  # None: not a literal (dynamic)
    span: Span  # the call
    reason_span: Span | None
    usage: Usage
    written: str = "ctx.fail"  # the callee as written: ``ctx.fail``, ``fail``, ``mcp_fusion.recovery_for``
    reason_ref: str | None = None  # the qualified name a non-literal reason reads (a constant, an enum member)


RaiseKind = Literal["fail", "mcp_error", "factory", "tool_error", "call", "name", "reraise", "other"]


def compact_reduce(fact: object) -> tuple[Any, ...]:
    """Pickle a fact as its class and its field values, positionally, without the trailing ones
    that hold their defaults: a file's facts hold hundreds of raises and returns, most fields at
    their defaults, and the cache stores them (field names would be written for every one)."""
    values = []
    trailing = 0
    for item in fields(fact):  # type: ignore[arg-type]  # every fact of a file is a dataclass
        value = getattr(fact, item.name)
        values.append(value)
        trailing = trailing + 1 if item.default is not MISSING and value == item.default else 0
    return type(fact), tuple(values[: len(values) - trailing])


@dataclass(slots=True)
class Raise:
    """One ``raise`` statement and what it raises.

    ``kind``: ``fail`` (``raise ctx.fail(...)``), ``mcp_error``/``factory``/``tool_error`` (the
    runtime's error types, with the ``code`` and ``data_reason`` they carry), ``call`` (any other
    call, ``exception`` naming the callee), ``name`` (a class or variable, ``exception`` naming
    it), ``reraise`` (bare ``raise``, or re-raising the caught exception's name), ``other``.
    """

    span: Span  # the raise statement
    kind: RaiseKind
    exception: str | None = None  # qualified name of what is raised or called, when it is a name
    code: str | None = None  # JsonRpcErrorCode member name the raise carries, when known
    factory: str | None = None
    data_reason: str | None = None
    clauses: tuple[Except, ...] = ()  # the except clauses around it in its function, innermost first
    tries: tuple[Try, ...] = ()  # the try bodies around it, innermost first
    has_cause: bool = False  # ``from x`` or ``cause=``
    call: CallLayout | None = None  # the raised call as written (the runtime's raises)
    message_span: Span | None = None  # its message argument
    message: Uses | None = None  # what the message is built from
    data: Uses | None = None  # what its data argument is built from
    assumes: Assumptions = ()  # the factory/``McpError``/code came through a project module
    text: str | None = None  # the message's literal text (an f-string's up to its first placeholder)
    #: For ``raise Exc(<one positional argument>)`` (what FL208's fix makes ``fail(reason, <it>)``),
    #: the message's whole text, placeholders as ``<name>`` (expressions.sentence), when it is text.
    sentence: str | None = None
    #: The literal integer code a raised call carries: its ``code`` (first argument or keyword), or the
    #: ``code`` of the ``ErrorData(...)`` it wraps (the SDK's ``McpError(ErrorData(code=..., ...))``).
    wire_code: int | None = None

    __reduce__ = compact_reduce


@dataclass(slots=True)
class Construction:
    """``McpError(<code>, ...)`` anywhere, with a code known statically (FL301)."""

    code: str
    call: CallLayout
    code_by_keyword: bool = False  # ``McpError(code=...)``: no positional code to drop
    assumes: Assumptions = ()


@dataclass(slots=True)
class Except:
    """An except clause: the qualified names of what it catches, its binding, its body's raises."""

    span: Span  # the whole clause; reported from its start to the end of ``type_span``
    type_span: Span | None  # what follows ``except`` (None: a bare ``except:``)
    types: tuple[str, ...]  # qualified names of the types it names; () for a bare except
    name: str  # ``as e``; "" when unnamed
    reraises: bool  # its body holds a raise statement (nested functions aside)
    try_awaits: bool  # the try body awaits: cancellation can arrive while it runs
    rethrows: bool = False  # its body re-raises what it caught: a bare ``raise`` or ``raise <its name>``


@dataclass(slots=True)
class Suppressing:
    """``with contextlib.suppress(<types>):`` and whether its body awaits."""

    span: Span  # the ``suppress(...)`` call
    types: tuple[str, ...]
    awaits: bool


@dataclass(slots=True)
class Try:
    """A ``try`` statement: its except clauses, and whether its body awaits."""

    handlers: tuple[Except, ...]
    awaits: bool


ShapeKind = Literal["none", "str", "fstring", "dict", "list", "call", "name", "other"]


@dataclass(slots=True)
class Shape:
    """What an expression is, one or two levels deep: a string and its text (an f-string: the
    literal text it starts with), a dict display and its literal keys, a list display and its
    items, a call with its callee and arguments, a name."""

    kind: ShapeKind
    text: str | None = None  # str/fstring: the text (first 200 characters); name: the dotted name
    callee: str | None = None  # call: the qualified name of what is called
    items: tuple[Shape, ...] = ()  # list: the elements; call: the positional arguments
    keys: tuple[tuple[str, Shape], ...] = ()  # dict: literal key -> value; call: keyword -> value


@dataclass(slots=True)
class Return:
    """A ``return`` and what it returns."""

    span: Span
    value: Shape
    uses: Uses  # what the value is built from (recorded inside an except clause only)
    clauses: tuple[Except, ...] = ()  # the except clauses around it, innermost first
    text: ReturnedText | None = None  # when what it returns is text

    __reduce__ = compact_reduce


@dataclass(slots=True)
class ReturnedText:
    """A returned text (FL208's fix raises it instead): where it is, its sentence, the tries around it."""

    span: Span  # the returned expression
    sentence: str  # placeholders as ``<name>`` (expressions.sentence)
    tries: tuple[Try, ...] = ()  # the try bodies around the return, innermost first


@dataclass(slots=True)
class FunctionFacts:
    qualname: str  # ``func`` or ``Class.method`` in its module
    span: Span  # the def's name
    fail_sites: list[FailSite] = field(default_factory=list)
    raises: list[Raise] = field(default_factory=list)
    constructions: list[Construction] = field(default_factory=list)
    tries: list[Try] = field(default_factory=list)
    excepts: list[Except] = field(default_factory=list)
    returns: list[Return] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # qualified names of what it calls, in order, once each
    context_param: str | None = None
    params: list[str] = field(default_factory=list)  # parameter names: a tool's arguments (FL4xx)
    # Each callee's call sites that sit in a try body: the try statements around it, innermost first
    # (a callee missing here is called outside any try somewhere, or nowhere guarded).
    guarded_calls: dict[str, list[tuple[Try, ...]]] = field(default_factory=dict)
    unguarded_calls: set[str] = field(default_factory=set)  # callees called at least once outside any try
    suppressing: list[Suppressing] = field(default_factory=list)  # ``with contextlib.suppress(...)`` blocks
    # A name assigned inside an except clause: what its value is built from (``msg = str(e)``),
    # the names the enclosing clauses bind (``e``) and the assignment's span (a use above it, in
    # the try body, sees another value), the last such assignment of each name.
    assigned_in_except: dict[str, tuple[Uses, tuple[str, ...], Span]] = field(default_factory=dict)
    # The decorators that wrap what the framework registers, by qualified name (``@handle_errors``
    # below ``@mcp.tool()``, or every decorator when the registration is elsewhere).
    decorated_by: list[str] = field(default_factory=list)
    # As a decorator: the try statements around each call of its first parameter that a nested
    # function (the wrapper) makes, innermost first; ``()`` for such a call outside any try.
    wrapper_calls: list[tuple[Try, ...]] = field(default_factory=list)


# ----- definitions ------------------------------------------------------------------------------

DefinitionKind = Literal["tool", "resource", "prompt"]


@dataclass(slots=True)
class ServerRef:
    """The server a definition is registered on (DESIGN §12.2)."""

    framework: str  # ``facts.frameworks.Framework``; "unknown" until the project view resolves ``ref``
    name: str | None = None  # the server's own name (its first argument), when a literal
    ref: str | None = None  # a server bound in another module: its qualified name
    masked: bool = False  # fastmcp's ``mask_error_details=True``, passed literally
    # ``ref`` is the class of an instance this module builds (``mcp = BillingServer(...)``): a server
    # only if the project view finds that class deriving from a framework's server class.
    instance: bool = False


@dataclass(slots=True)
class MiddlewareUse:
    """A fastmcp middleware this module adds to a server, in the order it is added: the fusion
    integration (``fusion.install(app)``, ``app.add_middleware(FusionMiddleware())``), fastmcp's
    ``ErrorHandlingMiddleware`` or ``RetryMiddleware``. Each one added later sees a call first."""

    kind: Literal["fusion", "error_handling", "retry"]
    span: Span  # the call that adds it (in ``FastMCP(middleware=[...])``: the middleware's constructor)
    transform_errors: bool = True  # ``ErrorHandlingMiddleware(transform_errors=False)`` written literally: False


@dataclass(slots=True)
class HelperTemplate:
    """A registration a project helper makes on a server its caller hands it (``def
    audited_tool(mcp, name, **kw): def decorator(fn): ... mcp.tool(name=name)(wrapper)``): which
    of the helper's parameters the server, the name and the handler come from. The project view
    turns each call ``audited_tool(server, "x")(fn)`` into a definition (``project.helpers``)."""

    function: str  # the helper's qualname: the function whose parameter is the server
    server_param: str
    decorator: str  # the qualname of the function the helper returns (``helper.decorator``)
    name_param: str | None = None  # the helper's parameter the name is registered under
    named: bool = False  # the registration passes a name at all (else the framework takes ``__name__``)
    handler_is_param: bool = False  # the decorator registers its own parameter, not a wrapper of it
    keeps_name: bool = True  # what is registered carries the handler's ``__name__`` (``functools.wraps``)
    param_only: bool = False  # the receiver is a server only because a caller hands one over


@dataclass(slots=True)
class HelperArgument:
    """One argument of a call to a possible registration helper, as far as a registration reads it."""

    span: Span
    keyword: str | None = None  # None: positional
    text: str | None = None  # a string literal's value
    is_none: bool = False  # the literal ``None``
    ref: str | None = None  # a name or attribute: its qualified name (a constant, a server)
    server: ServerRef | None = None  # a server, or a parameter a server may arrive through
    star: bool = False  # ``*args``/``**kwargs``: what it binds is unknown


@dataclass(slots=True)
class HelperCall:
    """``helper(server, "x", ...)(fn)`` or ``@helper(server, "x", ...)`` where an argument may be a
    server: a definition if ``helper`` is a project function holding a ``HelperTemplate``.
    ``definition`` is what it would define (its handler, contract and span), name and server
    still unbound."""

    callee: str  # the helper's qualified name
    arguments: tuple[HelperArgument, ...]
    definition: Definition


@dataclass(slots=True)
class Definition:
    kind: DefinitionKind
    name: str | None  # tool/prompt name, resource URI; None when not a literal
    span: Span  # the decorator / registering call
    name_span: Span
    errors: ContractExpr | None  # None: no ``errors=`` keyword
    errors_arg_span: Span | None  # the whole ``errors=...`` argument
    handler: str | None  # qualname of the handler function in this module, when known
    handler_ref: str | None = None  # qualified name when the handler is imported
    # The name given by a constant (``@tool(NAME)``): its qualified name, for the project view.
    name_ref: str | None = None
    call: CallLayout | None = None  # the registering call as written (FL101's fix drops errors=)
    assumes: Assumptions = ()  # the definer (``tool``, ...) came through a project module
    server: ServerRef | None = None  # a framework definition: the server; None: the runtime's own
    dispatcher: bool = False  # a low-level server's ``call_tool`` handler, serving all its tools
    contract_span: Span | None = None  # ``@contract(...)`` on a framework handler
    contract_above: bool = False  # that ``@contract`` sits above the registering decorator (FL118)
    # The handler given as something that names no function (``a lambda``, ``a call to make()``):
    # what it is, for FL190 (None when ``handler``/``handler_ref`` name it).
    handler_unresolved: str | None = None
    template: HelperTemplate | None = None  # registered by a helper on a server its caller hands it
    # Decorators that wrap the handler where the framework calls it, by qualified name, besides its
    # own (``helper.decorator`` whose wrapper a registration helper registers).
    wrapped_by: tuple[str, ...] = ()

    @property
    def framework(self) -> str:
        return self.server.framework if self.server is not None else "mcp_fusion"

    @property
    def label(self) -> str:
        """How messages name it: ``tool 'get_invoice'``; a name computed at run time is labelled by
        the function it registers (``tool health_check (name computed)``), never a placeholder."""
        if self.dispatcher:
            if self.server is not None and self.server.name:
                return f"server '{self.server.name}' call_tool"
            return "low-level server call_tool (server name computed)"
        if self.name is not None:
            return f"{self.kind} '{self.name}'"
        function = (self.handler or self.handler_ref or "").rpartition(".")[2]
        return f"{self.kind} {function} ({self._computed})" if function else self.label_without_function

    @property
    def label_without_function(self) -> str:
        return f"{self.kind} ({self._computed})"

    @property
    def _computed(self) -> str:
        return "URI computed" if self.kind == "resource" else "name computed"


# ----- what a fix that adds a name needs of the file --------------------------------------------


@dataclass(slots=True)
class ImportedName:
    name: str
    asname: str | None
    start: int  # offsets of the alias in the text
    end: int
    line: int


@dataclass(slots=True)
class FromImport:
    """A top-level ``from M import a, b``."""

    module: str | None
    level: int
    names: tuple[ImportedName, ...]
    line: int
    star: bool


@dataclass(slots=True)
class FileNames:
    """The file's top-level ``from`` imports and how often each name is bound anywhere in it
    (every scope, every binding form). Recorded only for files where a fix may add a name
    (an ``McpError(...)`` FL301 rewrites to its factory, a tool FL208 drafts a contract for)."""

    from_imports: tuple[FromImport, ...]
    bound: dict[str, int]
    import_end: int = 0  # the offset just after the leading import block's last line (0: none)


@dataclass(slots=True)
class ClassFacts:
    """A module-level class: its bases as written (the project view follows method lookups
    through them in MRO order, across files) and the attributes its methods store the context
    in (``self.ctx = ctx``)."""

    qualname: str
    bases: tuple[str, ...]  # qualified names of the bases, in order ("" for one that is no name)
    context_attributes: tuple[str, ...] = ()


@dataclass(slots=True)
class FileFacts:
    """All a file contributes to the project model."""

    path: str
    module: str | None
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    # The module-level names bound to runtime objects (local name -> the runtime's qualified name),
    # star imports included: what this module re-exports to the project (``Assumptions``).
    runtime_names: dict[str, str] = field(default_factory=dict)
    # Module-level names, and the attributes of module-level classes as ``Class.NAME`` (enum
    # members, contracts kept in a class), with what they are bound to.
    bindings: dict[str, Binding] = field(default_factory=dict)
    definitions: list[Definition] = field(default_factory=list)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    suppressions: dict[int, frozenset[str]] = field(default_factory=dict)  # line -> codes/names; "*" = all
    # A line inside a multi-line string -> the line that string closes on, when that line carries a
    # suppression (it suppresses the whole string's findings, as in ruff)
    string_lines: dict[int, int] = field(default_factory=dict)
    # line -> (column, text) of a ``# fusion-lint:`` comment that is no directive (FL900 reports it)
    unknown_directives: dict[int, tuple[int, str]] = field(default_factory=dict)
    # ``# fusion-lint: noqa[: codes]`` comments, for the whole file: line -> codes/names; "*" = all
    file_suppressions: dict[int, frozenset[str]] = field(default_factory=dict)
    names: FileNames | None = None
    servers: dict[str, ServerRef] = field(default_factory=dict)  # module-level names bound to a server
    imports_framework: bool = False  # the module imports from ``mcp.server``, ``mcp.types`` or ``fastmcp``
    mount_prefixes: list[str] = field(default_factory=list)  # literal ``mount(prefix=...)``: tool names gain it
    middleware: list[MiddlewareUse] = field(default_factory=list)  # fastmcp middleware added here, in order
    listed_tools: list[str] = field(default_factory=list)  # low-level ``Tool(name="...")`` literals it lists
    classes: dict[str, ClassFacts] = field(default_factory=dict)  # module-level classes by name
    helper_calls: list[HelperCall] = field(default_factory=list)  # calls that may be registration helpers
    # Every module an import statement of the file names, in any scope (``from m import *`` and
    # imports inside functions included): with ``imports``, every module this one's names may
    # lead to (what the run's snapshot follows, ``snapshot``).
    imported_modules: tuple[str, ...] = ()
    light: bool = False  # some bodies not walked (``extract(light=True)``, a partial run's; never cached)
