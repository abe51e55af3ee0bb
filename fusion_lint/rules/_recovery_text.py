"""Reading a recovery text the way the agent will (FL400 and FL401 share this).

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

import re
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Literal

from fusion_lint.project.view import Vocabulary
from mcp_fusion import CANONICAL_CODES, JsonRpcErrorCode
from mcp_fusion.envelope import SECTION_KEYS
from mcp_fusion.validation import VALIDATION_REASON

InternalKind = Literal["call", "file", "flag", "env", "setting", "path", "private", "constant"]

KIND_LABELS: dict[InternalKind, str] = {
    "call": "a function call",
    "file": "a file",
    "flag": "a command-line flag",
    "env": "an environment variable",
    "setting": "a config setting",
    "path": "a module or attribute path",
    "private": "a private name",
    "constant": "a config constant",
}

# The envelope's own vocabulary: the model reads these in every failure (``<available_actions>``,
# ``<retry_after>``, code ``NOT_FOUND`` or ``SERVER_BUSY``, reason ``invalid_arguments``), so they are
# never "unknown" (the project's own custom codes are in ``Vocabulary.codes``).
CODE_NAMES = frozenset({*JsonRpcErrorCode.__members__, *CANONICAL_CODES})
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
    {
        "argument",
        "arguments",
        "arg",
        "args",
        "parameter",
        "parameters",
        "param",
        "params",
        "field",
        "fields",
        "key",
        "keys",
        "value",
        "values",
        "column",
        "columns",
        "property",
        "attribute",
        "header",
        "option",
        "variable",
        "entry",
        "setting",
        "settings",
        "flag",
    }
)

BACKTICKED = re.compile(r"`([^`\n]+)`")
URL_OR_EMAIL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
CALL = re.compile(rf"(?<![\w.])({IDENT}(?:\.{IDENT})*)\(([^()\n]*)\)")
FILE = re.compile(
    rf"(?<![\w./~-])(?:~?/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:{FILE_EXTENSIONS})(?![\w/-])"
    r"|(?<![\w./-])\.(?:env|envrc|npmrc|netrc|pypirc|gitignore)(?![\w/-])"
)
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*(?:=\S*)?|(?<![\w-])-[A-Za-z](?![\w-])")
SETTING = re.compile(r"(?<![\w.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*=\S*")
# Environment variables: ``$TOKEN``, ``${API_KEY}``, ``%APPDATA%``, and a name the hint itself calls
# one (``the BILLING_TOKEN environment variable``, ``set TOKEN in the environment``, ``env var TOKEN``).
# The name is the ``name`` group; what else a pattern matches is claimed with it.
_ENV_WORDS = r"(?:environment\s+variables?|env(?:ironment)?\s+vars?)"
_UPPER_NAME = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*"
ENV_PATTERNS = (
    re.compile(r"(?<![\w$])(?P<name>\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)|(?<![\w%])(?P<percent>%[A-Za-z_][A-Za-z0-9_]*%)"),
    re.compile(rf"(?<![\w.])(?P<name>{_UPPER_NAME})\s+(?:{_ENV_WORDS}|in\s+(?:the|your)\s+environment)\b"),
    re.compile(rf"\b{_ENV_WORDS}\s+(?P<name>{_UPPER_NAME})(?![\w])"),
)
DOTTED = re.compile(rf"(?<![\w.@/-]){IDENT}(?:\.{IDENT})+(?![\w(-]|\.\w)")
PRIVATE = re.compile(r"(?<![\w.])_+[A-Za-z0-9]\w*")
CONSTANT = re.compile(r"(?<![\w.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w])")
SNAKE = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w-])")
EMPHASIS = re.compile(r"_[A-Za-z]+_")  # markdown ``_word_``, not a private name
PLURAL_SUFFIX = frozenset({"s", "es", "ies"})  # ``item(s)`` is English, not a call
CAPITALISED_WORD = re.compile(r"[A-Z][a-z]+")
NEXT_WORD = re.compile(r"\s*([A-Za-z]+)")
CODE_LIKE = re.compile(r"[A-Za-z_][\w-]*")  # what a backticked tool name looks like


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


def known(vocabulary: Vocabulary, token: str) -> bool:
    """A token the model can name without it being a tool: an argument, a reason, a wire word."""
    return (
        token in vocabulary.tools
        or token in vocabulary.arguments
        or token in vocabulary.reasons
        or token in WIRE_WORDS
        or is_code_name(vocabulary, token)
        or token in LITERAL_WORDS
    )


def is_code_name(vocabulary: Vocabulary, token: str) -> bool:
    """An error code the model reads in the envelope: a member, a canonical code, a code the
    project's contracts declare (``INVOICE_LOCKED``)."""
    return token in CODE_NAMES or token in vocabulary.codes


class _Text:
    """The text being scanned; what a pattern claims is blanked so later patterns skip it."""

    def __init__(self, text: str):
        self.text = text

    def claim(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        matches = list(pattern.finditer(self.text))
        if not matches:
            return iter(())
        pieces: list[str] = []
        at = 0  # slices, not a list of characters: this runs for every recovery text
        for match in matches:
            pieces += (self.text[at : match.start()], " " * (match.end() - match.start()))
            at = match.end()
        pieces.append(self.text[at:])
        self.text = "".join(pieces)
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
        if not known(vocabulary, code):
            scan.add_tool(code, at)
    elif not re.fullmatch(r"\w+=\S*", code):  # ``page_size=50`` is an argument, not a tool
        _prose(_Text(code), vocabulary, scan, at)  # a phrase or an expression: scan it like prose


def _internal_kind(code: str, vocabulary: Vocabulary) -> InternalKind | None:
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
    if any(pattern.fullmatch(code) for pattern in ENV_PATTERNS[:1]):
        return "env"
    if CONSTANT.fullmatch(code) and not is_code_name(vocabulary, code):
        return "constant"
    return None


def _prose(remaining: _Text, vocabulary: Vocabulary, scan: Scan, base: int = 0) -> None:
    """Unmarked text: the FL400 patterns in order, then snake_case words as tool candidates."""
    for match in remaining.claim(CALL):
        if not _harmless_call(match, vocabulary):
            scan.add_internal(match.group(0), "call", base + match.start())
    for pattern, kind in ((FILE, "file"), (FLAG, "flag")):
        for match in remaining.claim(pattern):
            scan.add_internal(match.group(0), kind, base + match.start())  # type: ignore[arg-type]  # "file" or "flag": the loop's own literals
    for pattern in ENV_PATTERNS:
        for match in remaining.claim(pattern):
            token = match.group("name") or match.group(0).strip()
            scan.add_internal(token, "env", base + match.start())
    for match in remaining.claim(SETTING):
        scan.add_internal(match.group(0), "setting", base + match.start())
    for match in remaining.claim(DOTTED):
        if not _harmless_path(match.group(0), vocabulary):
            scan.add_internal(match.group(0), "path", base + match.start())
    for match in remaining.claim(PRIVATE):
        if not EMPHASIS.fullmatch(match.group(0)):
            scan.add_internal(match.group(0), "private", base + match.start())
    for match in remaining.claim(CONSTANT):
        if not is_code_name(vocabulary, match.group(0)):
            scan.add_internal(match.group(0), "constant", base + match.start())
    for match in remaining.claim(SNAKE):
        token = match.group(0)
        if not known(vocabulary, token) and not _names_an_argument(remaining.text, match):
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
