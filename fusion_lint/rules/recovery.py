"""§5.4 Recovery text: FL400 recovery-names-internal and FL401 recovery-unknown-tool.

The reader of a recovery hint is a model whose only reachable surface is this server's tools (and
their arguments). A hint that names an internal function, a module path, a file, a flag or a tool
that does not exist invites a hallucinated call.

The text is scanned once per recovery value, in a fixed order where each pattern *claims* what it
matches so no later pattern sees it again: backticked code, then URLs and e-mail addresses (never
code), then the FL400 patterns (call, file, flag, setting, dotted path, private name, constant),
and last the FL401 candidates (snake_case identifiers; backticked identifiers were classified in
the first step). A token FL400 claims is therefore never also an unknown tool, and plain English
words are never tool candidates at all.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field as dataclass_field
from functools import cached_property
from typing import Iterable, Iterator, Literal, Optional
from weakref import WeakKeyDictionary

from mcp_fusion import JsonRpcErrorCode
from mcp_fusion.envelope import SECTION_KEYS
from mcp_fusion.validation import VALIDATION_REASON

from ..diagnostics import Finding
from ..model import Entry, Value
from ..project import Project
from . import DefinitionContext, Example, Rule, register
from .contract_shape import entry_label, field

InternalKind = Literal["call", "file", "flag", "setting", "path", "private", "constant"]

KIND_LABELS: dict[InternalKind, str] = {
    "call": "a function call",
    "file": "a file",
    "flag": "a command-line flag",
    "setting": "a config setting",
    "path": "a module or attribute path",
    "private": "a private name",
    "constant": "a config constant",
}

# The envelope's own vocabulary: the model reads these in every failure (``<available_actions>``,
# ``<retry_after>``, code ``NOT_FOUND``, reason ``invalid_arguments``), so they are never "unknown".
CODE_NAMES = frozenset(JsonRpcErrorCode.__members__)
WIRE_WORDS = frozenset(
    {VALIDATION_REASON, "tool_error", "validation_error", *SECTION_KEYS, *(name.lower() for name in CODE_NAMES)}
)
LITERAL_WORDS = frozenset({"None", "True", "False", "true", "false", "null", "nil", "undefined"})

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
FILE_EXTENSIONS = (
    "py|pyi|pyc|ipynb|yaml|yml|json|jsonl|toml|ini|cfg|conf|env|txt|csv|tsv|md|rst|lock|sql|sh|bash|"
    "log|xml|html|db|sqlite|sqlite3|pem|crt|key|pickle|pkl|parquet|properties|plist"
)  # not ``js``: "Node.js" is a product in a hint far more often than a file
# Last segments that make a dotted word a domain (``status.example.com``) or a product name
# (``Node.js``, ``ASP.NET``) rather than code.
NOT_CODE_SUFFIXES = frozenset({"com", "org", "net", "io", "dev", "ai", "app", "gov", "edu", "co", "js"})
# A snake_case word followed by one of these is an argument/field, named as such: not a tool.
NOT_TOOL_NOUNS = frozenset(
    {"argument", "arguments", "arg", "args", "parameter", "parameters", "param", "params", "field", "fields",
     "key", "keys", "value", "values", "column", "columns", "property", "attribute", "header", "option", "variable",
     "entry", "setting", "settings", "flag"}
)  # fmt: skip

BACKTICKED = re.compile(r"`([^`\n]+)`")
URL_OR_EMAIL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
CALL = re.compile(rf"(?<![\w.])({IDENT}(?:\.{IDENT})*)\(([^()\n]*)\)")
FILE = re.compile(
    rf"(?<![\w./~-])(?:~?/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:{FILE_EXTENSIONS})(?![\w/-])"
    r"|(?<![\w./-])\.(?:env|envrc|npmrc|netrc|pypirc|gitignore)(?![\w/-])"
)
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*(?:=\S*)?|(?<![\w-])-[A-Za-z](?![\w-])")
SETTING = re.compile(r"(?<![\w.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*=\S*")
DOTTED = re.compile(rf"(?<![\w.@/-]){IDENT}(?:\.{IDENT})+(?![\w(-]|\.\w)")
PRIVATE = re.compile(r"(?<![\w.])_+[A-Za-z0-9]\w*")
CONSTANT = re.compile(r"(?<![\w.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w])")
SNAKE = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w-])")
EMPHASIS = re.compile(r"_[A-Za-z]+_")  # markdown ``_word_``, not a private name
PLURAL_SUFFIX = frozenset({"s", "es", "ies"})  # ``item(s)`` is English, not a call
CAPITALISED_WORD = re.compile(r"[A-Z][a-z]+")
NEXT_WORD = re.compile(r"\s*([A-Za-z]+)")
CODE_LIKE = re.compile(r"[A-Za-z_][\w-]*")  # what a backticked tool name looks like


@dataclass(frozen=True)
class Vocabulary:
    """What the model can name in a hint: the project's tools and the arguments they take."""

    tools: frozenset[str]
    arguments: frozenset[str]
    reasons: frozenset[str]
    all_tools_named: bool  # False: some tool's name is not a literal, so the set is incomplete
    # Both rules read every recovery, and shared contracts repeat the same texts: scan each once.
    scans: dict[str, "Scan"] = dataclass_field(default_factory=dict, compare=False, hash=False, repr=False)

    @cached_property
    def sorted_tools(self) -> list[str]:
        return sorted(self.tools)

    def known(self, token: str) -> bool:
        return (
            token in self.tools or token in self.arguments or token in self.reasons
            or token in WIRE_WORDS or token in CODE_NAMES or token in LITERAL_WORDS
        )  # fmt: skip


@dataclass
class Scan:
    """The tokens of one recovery text (each once, in text order): FL400's internal names and
    FL401's tool candidates."""

    _internal: dict[str, tuple[int, InternalKind]] = dataclass_field(default_factory=dict)
    _tools: dict[str, int] = dataclass_field(default_factory=dict)

    def add_internal(self, token: str, kind: InternalKind, at: int) -> None:
        self._internal.setdefault(token, (at, kind))

    def add_tool(self, token: str, at: int) -> None:
        self._tools.setdefault(token, at)

    @property
    def internal(self) -> list[tuple[str, InternalKind]]:
        ordered = sorted(self._internal.items(), key=lambda item: item[1][0])
        return [(token, kind) for token, (_, kind) in ordered]

    @property
    def tool_mentions(self) -> list[str]:
        return sorted(self._tools, key=self._tools.__getitem__)


class _Text:
    """The text being scanned; what a pattern claims is blanked so later patterns skip it."""

    def __init__(self, text: str):
        self.text = text

    def claim(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        matches = list(pattern.finditer(self.text))
        if not matches:
            return iter(())
        chars = list(self.text)
        for match in matches:
            chars[match.start() : match.end()] = " " * (match.end() - match.start())
        self.text = "".join(chars)
        return iter(matches)


def scan_recovery(text: str, vocabulary: Vocabulary) -> Scan:
    cached = vocabulary.scans.get(text)
    if cached is None:
        cached = vocabulary.scans[text] = _scan(text, vocabulary)
    return cached


def _scan(text: str, vocabulary: Vocabulary) -> Scan:
    scan = Scan()
    remaining = _Text(text)
    for match in remaining.claim(BACKTICKED):
        _code_span(match.group(1).strip(), match.start(), vocabulary, scan)
    for _ in remaining.claim(URL_OR_EMAIL):
        pass
    _prose(remaining, vocabulary, scan)
    return scan


def _code_span(code: str, at: int, vocabulary: Vocabulary, scan: Scan) -> None:
    """A backticked span: code by the writer's own marking, so a bare identifier is a tool candidate."""
    if not code or code in vocabulary.tools:
        return
    kind = _internal_kind(code, vocabulary)
    if kind is not None:
        scan.add_internal(code, kind, at)
    elif CODE_LIKE.fullmatch(code):
        if not vocabulary.known(code):
            scan.add_tool(code, at)
    elif not re.fullmatch(r"\w+=\S*", code):  # ``page_size=50`` is an argument, not a tool
        _prose(_Text(code), vocabulary, scan, at)  # a phrase or an expression: scan it like prose


def _internal_kind(code: str, vocabulary: Vocabulary) -> Optional[InternalKind]:
    """What a whole backticked span is, when it is something the model cannot reach."""
    call = CALL.fullmatch(code)
    if call is not None:
        return None if _harmless_call(call, vocabulary) else "call"
    if FILE.fullmatch(code):
        return "file"
    if FLAG.fullmatch(code):
        return "flag"
    if SETTING.fullmatch(code):
        return "setting"
    if DOTTED.fullmatch(code):
        return None if _harmless_path(code, vocabulary) else "path"
    if PRIVATE.fullmatch(code) and not EMPHASIS.fullmatch(code):
        return "private"
    if CONSTANT.fullmatch(code) and code not in CODE_NAMES:
        return "constant"
    return None


def _prose(remaining: _Text, vocabulary: Vocabulary, scan: Scan, base: int = 0) -> None:
    """Unmarked text: the FL400 patterns in order, then snake_case words as tool candidates."""
    for match in remaining.claim(CALL):
        if not _harmless_call(match, vocabulary):
            scan.add_internal(match.group(0), "call", base + match.start())
    for pattern, kind in ((FILE, "file"), (FLAG, "flag"), (SETTING, "setting")):
        for match in remaining.claim(pattern):
            scan.add_internal(match.group(0), kind, base + match.start())  # type: ignore[arg-type]
    for match in remaining.claim(DOTTED):
        if not _harmless_path(match.group(0), vocabulary):
            scan.add_internal(match.group(0), "path", base + match.start())
    for match in remaining.claim(PRIVATE):
        if not EMPHASIS.fullmatch(match.group(0)):
            scan.add_internal(match.group(0), "private", base + match.start())
    for match in remaining.claim(CONSTANT):
        if match.group(0) not in CODE_NAMES:
            scan.add_internal(match.group(0), "constant", base + match.start())
    for match in remaining.claim(SNAKE):
        token = match.group(0)
        if not vocabulary.known(token) and not _names_an_argument(remaining.text, match):
            scan.add_tool(token, base + match.start())


def _harmless_call(match: re.Match[str], vocabulary: Vocabulary) -> bool:
    """``item(s)`` is English; ``search_articles()`` names a tool the model can call."""
    return match.group(2).strip() in PLURAL_SUFFIX or match.group(1) in vocabulary.tools


def _harmless_path(dotted: str, vocabulary: Vocabulary) -> bool:
    """Dotted words that are not code: abbreviations, domains, a missing space, a tool, an argument."""
    parts = dotted.split(".")
    if all(len(part) <= 2 and part.isalpha() for part in parts):
        return True  # e.g, i.e, U.S, a.m, Ph.D
    if parts[-1].lower() in NOT_CODE_SUFFIXES:
        return True  # status.example.com, Node.js, ASP.NET
    if len(parts) == 2 and parts[0].isalpha() and CAPITALISED_WORD.fullmatch(parts[1]):
        return True  # "again.Then": a sentence missing its space
    return dotted in vocabulary.tools or parts[0] in vocabulary.arguments  # ``filters.date_from``


def _names_an_argument(text: str, match: re.Match[str]) -> bool:
    """``page_size=50`` or ``the page_size field``: the writer says it is not a tool."""
    after = text[match.end() :]
    if after.startswith("=") and not after.startswith("=="):
        return True
    following = NEXT_WORD.match(after)
    return following is not None and following.group(1).lower() in NOT_TOOL_NOUNS


# ----- the project's vocabulary, built once per lint run ----------------------------------------

# Per project (one lint run), with the ``tool_names`` set it was built from: the rules run once per
# definition, and the vocabulary is the whole project's.
_VOCABULARIES: "WeakKeyDictionary[Project, tuple[set[str], Vocabulary]]" = WeakKeyDictionary()


def vocabulary_of(ctx: DefinitionContext) -> Vocabulary:
    cached = _VOCABULARIES.get(ctx.project)
    if cached is not None and cached[0] is ctx.tool_names:
        return cached[1]
    arguments: set[str] = set()
    reasons: set[str] = set()
    all_named = True
    for definition, path in list(ctx.project.all_definitions()):
        if definition.kind == "tool" and definition.name is None:
            all_named = False
        handler = ctx.project.handler(definition, path)
        if handler is not None:
            function = handler[0]
            # getattr: facts cached by a version that did not record parameters have none to offer
            arguments.update(p for p in getattr(function, "params", ()) if p != function.context_param)
        for entry, _ in ctx.project.contract(definition, path).entries:
            reason = entry.get("reason")
            if reason is not None:
                resolved = ctx.project.resolve_value(reason.value)
                if resolved.kind == "str":
                    reasons.add(str(resolved.value))
    arguments -= {"self", "cls"}
    vocabulary = Vocabulary(frozenset(ctx.tool_names), frozenset(arguments), frozenset(reasons), all_named)
    _VOCABULARIES[ctx.project] = (ctx.tool_names, vocabulary)
    return vocabulary


def recoveries(ctx: DefinitionContext) -> Iterator[tuple[Entry, str, Value]]:
    """Each entry's recovery that is a string (constants resolved), with where to report it."""
    for entry, path in ctx.contract.entries:
        value = field(ctx, entry, "recovery")
        if value is not None and value.kind == "str" and str(value.value).strip():
            yield entry, path, value


def _listing(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ----- the rules --------------------------------------------------------------------------------

HEADER = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context\n"


def _tools(recovery: str) -> str:
    """Two tools; ``get_invoice``'s one contract entry has ``recovery``."""
    return (
        HEADER
        + "@tool(\"list_invoices\")\nasync def list_invoices(customer_id: str) -> list:\n    return []\n\n"
        + "@tool(\n    \"get_invoice\",\n    errors=[\n        ErrorContract(\n"
        + "            reason=\"no_match\",\n            code=JsonRpcErrorCode.NOT_FOUND,\n"
        + "            when=\"No invoice has that id\",\n"
        + f'            recovery="{recovery}",\n'
        + "        )\n    ],\n)\n"
        + "async def get_invoice(invoice_id: str, ctx: Context) -> dict:\n    raise ctx.fail(\"no_match\")\n"
    )


RECOVERY_LINE = 13  # the ``recovery=`` line of ``_tools``


@register
class RecoveryNamesInternal(Rule):
    code, name, severity = "FL400", "recovery-names-internal", "warning"
    summary = (
        "The recovery names code the model cannot reach: a call such as `reset_cache()`, a private `_name`, "
        "a dotted module path, a file name, or a config flag, setting or constant."
    )
    why = (
        "The agent reading the hint can only call this server's tools. A function, a module path, a file "
        "or a flag in the hint is a step it cannot take: at best it gives up, at worst it invents a tool "
        "call with that name. Name the tool to call next, and its arguments, in plain words. Ordinary prose "
        "stays silent: abbreviations (e.g., i.e.), version numbers, URLs and domains, error code names, and "
        "a dotted path that starts with one of the tools' arguments (`filters.date_from`)."
    )
    VALID = (
        _tools("Call list_invoices with the customer_id to find a valid invoice id, then retry."),
        _tools("Wait a few minutes, then try again; see https://status.example.com for outages."),
    )
    INVALID = (
        Example(
            _tools("Run billing.cache.reset() and then retry get_invoice."),
            lines=(RECOVERY_LINE,),
            message="'billing.cache.reset()' (a function call)",
        ),
        Example(
            _tools("Set MAX_RETRIES in settings.py or pass --force, then call _reload_index first."),
            lines=(RECOVERY_LINE,),
            message="'MAX_RETRIES' (a config constant), 'settings.py' (a file), '--force' (a command-line flag) "
            "and '_reload_index' (a private name)",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        vocabulary = vocabulary_of(ctx)
        for entry, path, value in recoveries(ctx):
            internal = scan_recovery(str(value.value), vocabulary).internal
            if not internal:
                continue
            named = _listing([f"'{token}' ({KIND_LABELS[kind]})" for token, kind in internal])
            yield Finding(
                value.span,
                f"{entry_label(ctx, entry)}: recovery names code the model cannot reach: {named}; "
                "the agent can only call tools, so name the tool to call next instead",
                path=path,
            )


@register
class RecoveryUnknownTool(Rule):
    code, name, severity = "FL401", "recovery-unknown-tool", "warning"
    summary = "The recovery names a tool (backticked or snake_case) that no definition of the project registers."
    why = (
        "An agent told to call a tool that does not exist will try it anyway and get a protocol error, or "
        "hallucinate its arguments: a typo or a renamed tool in a recovery hint turns one failure into two. "
        "Tools are collected across every file of the project. Only backticked identifiers and identifiers "
        "with an underscore are candidates, never plain words; the tools' argument names, declared reasons "
        "and error code names are known, and so is a word the hint calls an argument or field "
        "(`page_size=50`, \"the sort_order field\"). When some tool's name is not a literal, the set of tools "
        "is unknown and the rule stays silent rather than guess."
    )
    VALID = (
        _tools("Call list_invoices to find a valid invoice id, then call get_invoice again."),
        _tools("Check the `invoice_id` argument, then retry; it must come from `list_invoices`."),
    )
    INVALID = (
        Example(
            _tools("Call list_invoice to find a valid invoice id, then retry."),
            lines=(RECOVERY_LINE,),
            message="'list_invoice' (did you mean 'list_invoices'?)",
        ),
        Example(
            _tools("Call `search` or find_customer first, then call get_invoice again."),
            lines=(RECOVERY_LINE,),
            message="'search' and 'find_customer'",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        vocabulary = vocabulary_of(ctx)
        if not vocabulary.all_tools_named:
            return
        for entry, path, value in recoveries(ctx):
            unknown = scan_recovery(str(value.value), vocabulary).tool_mentions
            if not unknown:
                continue
            yield Finding(
                value.span,
                f"{entry_label(ctx, entry)}: recovery names {_with_suggestions(unknown, vocabulary)}, which no "
                f"tool of this project registers; {_known_tools(vocabulary)}",
                path=path,
            )


def _with_suggestions(unknown: list[str], vocabulary: Vocabulary) -> str:
    shown = []
    for token in unknown:
        # A typo keeps about the length: compare with those tools only (a project may have thousands).
        similar = [tool for tool in vocabulary.sorted_tools if abs(len(tool) - len(token)) <= 3]
        close = difflib.get_close_matches(token, similar, n=1, cutoff=0.75)
        shown.append(f"'{token}' (did you mean '{close[0]}'?)" if close else f"'{token}'")
    return _listing(shown)


def _known_tools(vocabulary: Vocabulary, limit: int = 8) -> str:
    if not vocabulary.tools:
        return "the project registers no tool by a literal name"
    names = vocabulary.sorted_tools
    listed = ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
    return f"name one of its tools ({listed})"
