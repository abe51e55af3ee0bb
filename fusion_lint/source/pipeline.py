"""The per-file pipeline: read → cheap pre-scan → gate → parse once → extract (DESIGN §10, §11).

``analyze_file`` is a pure function of the file's bytes and the settings that shape its facts, so
its result can be computed in a worker process and cached by content.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

from fusion_lint.base.files import FileTooLarge, NotRegularFile, read_regular
from fusion_lint.base.lines import split_lines
from fusion_lint.base.modules import module_of
from fusion_lint.facts.model import FileFacts
from fusion_lint.source.gate import Unreadable, decode, deep_recursion, gate_tree

_SUPPRESSION = re.compile(
    r"#\s*(?:noqa(?::\s*(?P<codes>[\w-]+(?:[\s,]+[\w-]+)*))?|fusion-lint:\s*ignore(?![\w-])(?:\[(?P<names>[^\]]*)\])?)",
    re.IGNORECASE,
)

_MENTIONS_SUPPRESSION = re.compile(r"noqa|fusion-lint", re.IGNORECASE)


#: A file larger than this is reported (FL001), neither parsed nor read past this many bytes: the
#: largest hand-written modules are well under 1 MB.
MAX_FILE_BYTES = 4_000_000


@dataclass(slots=True)
class FileResult:
    """What one file contributes: facts, or the one problem that stopped it, or skipped by the pre-scan."""

    path: str
    facts: FileFacts | None = None
    problem: Unreadable | None = None
    skipped: bool = False
    # Skipped, but it builds a server (``builds_a_server``): parsed only if a module registers on it.
    builds_server: bool = False
    # The file's cache key (content, path, module, settings, linter code), when it was analysed with
    # the cache on: the whole-run cache is keyed by these.
    key: str | None = None


# An import of an MCP framework, import-precise (DESIGN §12.2): ``from mcp.server.fastmcp import``,
# ``import fastmcp``, ``from mcp.server.lowlevel import``, ``from mcp import types``, ... — never the
# bare word ``mcp``.
_FRAMEWORK_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(?:mcp\.server|mcp\.types|mcp_types|fastmcp)\b"
    rb"|import[ \t]+(?:mcp\.server|mcp\.types|mcp_types|fastmcp)\b"
    rb"|from[ \t]+mcp[ \t]+import[ \t]+[(\\ \t]*(?:[\w \t,]*,[ \t]*)?types\b)",
    re.MULTILINE,
)


# Where a registration can stand: a statement's start, a decorator, after ``=``, ``:`` (``for f in
# fns: mcp.add_tool(f)``), ``;``, an opening bracket or a comma, or ``return`` — not in the middle of
# a sentence (``decorated with @mcp.tool()`` in a docstring) nor after ``#``.
_STANDS = rb"(?:^|[:;(\[,=]|\breturn\b)[ \t]*(?:@[ \t]*)?(?:\w+\.)*"
# A module that registers on a server handed to it under the conventional name (``def register(mcp):
# mcp.tool()(fn)``) need not import any framework.
_ON_MCP_NEEDLES = (b"mcp.tool(", b"mcp.resource(", b"mcp.prompt(", b"mcp.add_tool(")  # what it must hold
_REGISTERS_ON_MCP = re.compile(_STANDS + rb"mcp\.(?:tool|resource|prompt|add_tool)\(", re.MULTILINE)
# What a module importing a framework must also spell to hold anything we check: a registration
# (every form of DESIGN §12.1-§12.2), a low-level dispatcher or tool listing, or a mount prefix. A
# module that imports the framework only for its types, ``ToolError`` or ``Context``, or to run a
# server made elsewhere, is then never parsed (unless a definition reaches it). One that builds a
# server and registers nothing on it is parsed only when another module registers on that server
# (``builds_a_server``: the second look, or the project index on demand).
# ``.tool``/``.resource``/``.prompt`` count called or as a decorator (not ``mock.tool = ...``,
# ``params.resource``), ``from_function`` on a tool class (``Prompt.from_function`` defines nothing we
# check), ``on_call_tool`` passed (``Server(..., on_call_tool=...)``; fastmcp middleware's ``async def
# on_call_tool`` is none). ``.mount(`` counts unless it mounts one bare name with nothing else
# (``mcp.mount(sub)``: no prefix, so the mounting module adds nothing to the tools' names).
_REGISTRATION_WORD = re.compile(
    rb"\.(?:tool|resource|prompt)[ \t]*\(|@[\w.]+\.(?:tool|resource|prompt)\b"
    rb"|\.(?:add_tool|add_resource|add_prompt|add_resource_fn)\b|\.mount[ \t]*\((?![ \t]*\w+[ \t]*\))|Tool\.from_function\b"
    rb"|@[\w.]+\.(?:call_tool|list_tools)\b|\bon_call_tool[ \t]*=|^[ \t]*@(?:tool|resource|prompt)\b",
    re.MULTILINE,
)
_SERVER_MADE = re.compile(rb"\b(?:FastMCP|MCPServer|Server)\(")


def builds_a_server(data: bytes) -> bool:
    """Whether a file the pre-scan skips imports a framework and builds a server (``mcp =
    FastMCP("x")``) whose tools other modules may register: the second look's server hub."""
    return _SERVER_MADE.search(data) is not None and _FRAMEWORK_IMPORT.search(data) is not None


def mentions_runtime(data: bytes, runtime_modules: Sequence[str]) -> bool:
    """The pre-scan: a file that never names a runtime module, and imports no MCP framework, cannot
    define or raise anything we check.

    The last part of a dotted name is what every import spells, relative ones of a vendored copy
    (``from .vendor.mcp_fusion import tool``) included."""
    if any(name.rpartition(".")[2].encode() in data for name in runtime_modules):
        return True
    if b"mcp" not in data:
        return False
    if any(needle in data for needle in _ON_MCP_NEEDLES) and _in_code(data, _REGISTERS_ON_MCP.finditer(data)):
        return True
    return _FRAMEWORK_IMPORT.search(data) is not None and _in_code(data, _REGISTRATION_WORD.finditer(data))


def _in_code(data: bytes, matches: Iterable[re.Match[bytes]]) -> bool:
    """Whether one of ``matches`` stands outside a triple-quoted string (a prompt's text or a
    docstring quoting ``mcp.prompt(...)`` registers nothing): an even number of each triple quote
    before it. Counted only up to the first match in code, which is usually the first match."""
    return any(data.count(b'"""', 0, m.start()) % 2 == 0 and data.count(b"'''", 0, m.start()) % 2 == 0 for m in matches)


# The methods that register a handler on a server (DESIGN §12.1-§12.2), for the second look.
# A mount of one bare name has no prefix: it registers nothing new under its server's names.
_REGISTERING_METHODS = (
    rb"(?:(?:tool|resource|prompt|add_tool|add_resource|add_prompt|add_resource_fn)[ \t]*\("
    rb"|mount[ \t]*\((?![ \t]*\w+[ \t]*\)))"
)


def registers_on(data: bytes, names: Iterable[str] | None) -> bool:
    """Whether ``data`` spells a registration on one of ``names`` (the servers a module it imports
    binds; None: any name, when they are not known yet), or on a name it imports one as (``import
    mcp as server``): ``mcp.tool(``, ``@mcp.tool``, ``mcp.add_tool(``, ``@server.call_tool()``. A
    file that imports a server only to run it, test it or call its tools (``await
    mcp.call_tool(...)``) spells none of these."""
    if not any(needle in data for needle in _REGISTERING_NEEDLES):
        return False  # (what every spelling below holds: most files hold none, and this is cheap)
    if names is None:
        return _in_code(data, _registration(None).finditer(data))
    wanted = {name.encode() for name in names}
    for name in list(wanted):
        wanted.update(m.group(1) for m in _alias(name).finditer(data))
    if not wanted:
        return False
    return _in_code(data, _registration(tuple(sorted(wanted))).finditer(data))


# ``.`` and the start of a registering method, as every registration spells it.
_REGISTERING_NEEDLES = (b".tool", b".resource", b".prompt", b".add_", b".mount", b".call_tool")


# The second look tries every hub's needles on every file the pre-scan left: each pattern is
# compiled once (there are more of them than ``re``'s own cache holds).
@cache
def _registration(names: tuple[bytes, ...] | None) -> re.Pattern[bytes]:
    spelled = rb"\w+" if names is None else b"|".join(re.escape(name) for name in names)
    called = _STANDS + rb"(?:" + spelled + rb")\." + _REGISTERING_METHODS
    decorating = rb"^[ \t]*@[ \t]*(?:\w+\.)*(?:" + spelled + rb")\.(?:tool|resource|prompt|call_tool)\b"
    return re.compile(called + b"|" + decorating, re.MULTILINE)


@cache
def _alias(name: bytes) -> re.Pattern[bytes]:
    return re.compile(rb"\b" + re.escape(name) + rb"[ \t]+as[ \t]+(\w+)")


@cache
def _word(name: bytes) -> re.Pattern[bytes]:
    return re.compile(rb"\b" + re.escape(name) + rb"\b")


_TEST_MODULE = re.compile(rb"^[ \t]*(?:import|from)[ \t]+(?:pytest|unittest)\b", re.MULTILINE)


def calls_one_of(data: bytes, names: Iterable[str]) -> bool:
    """Whether ``data`` calls one of ``names`` (``audited_tool(``): a registration helper it imports.
    A test module (it imports pytest or unittest) calls a helper on a test double or a throwaway
    server, never on the server that is served: it registers nothing we check."""
    if _TEST_MODULE.search(data) is not None:
        return False
    return _calls(tuple(sorted(set(names)))).search(data) is not None


@cache
def _calls(names: tuple[str, ...]) -> re.Pattern[bytes]:
    if not names:
        return re.compile(rb"(?!)")  # matches nothing
    spelled = b"|".join(re.escape(name.encode()) for name in names)
    return re.compile(rb"\b(?:" + spelled + rb")[ \t]*\(")


def hub_of(
    result: FileResult,
) -> tuple[str, str, tuple[tuple[str, ...] | None, tuple[str, ...]] | None] | None:
    """What the second look of the pre-scan learns from an analysed file (``engine``): a re-export
    hub (module, package folder, None), a server or helper hub (module, package folder, (servers,
    helpers)), or None."""
    facts = result.facts
    if facts is None or not facts.module:
        return None
    if facts.runtime_names and not facts.definitions:
        return (facts.module, package_folder(result.path, facts.module), None)
    helpers = {d.template.function.rpartition(".")[2] for d in facts.definitions if d.template is not None}
    if facts.servers or helpers:
        return (facts.module, package_folder(result.path, facts.module), (tuple(facts.servers), tuple(sorted(helpers))))
    return None  # (most files: asked for every file of the project, each lint of the editor)


def package_folder(path: str, module: str) -> str:
    """The folder of the top-level package of ``module``, the module of the file ``path``."""
    return os.path.join(module_of(path)[2], module.split(".")[0])  # (the base is absolute and normal)


_IMPORT_KEYWORDS = (b"from ", b"from\t", b"import ", b"import\t")


def import_tails(data: bytes) -> bytes:
    """What follows the keyword on each line that starts (after blanks) with ``from`` or
    ``import``, one line each: where ``imports_module`` looks. Made once per file of the second
    look, so that each hub's needle is tried on a few short lines, not on the whole file."""
    if b"import" not in data:
        return b""
    tails = []
    for line in (data.replace(b"\r", b"\n") if b"\r" in data else data).split(b"\n"):
        stripped = line.lstrip()
        if stripped.startswith(_IMPORT_KEYWORDS):
            tails.append(stripped[5:] if stripped.startswith(b"from") else stripped[7:])
    return b"\n".join(tails)


def imports_module(data: bytes, module: str, relative: bool, tails: bytes | None = None) -> bool:
    """Whether ``data`` holds an import statement naming ``module``: by its full dotted name, or
    (``relative``: the file sits in that module's package) by its last part, as ``from .api import``
    spells it. The words are checked after the keyword at the start of their line (``tails``: the
    file's ``import_tails``, when the caller made them already)."""
    name = (module.rpartition(".")[2] if relative else module).encode()
    if name not in data:
        return False
    if tails is None:
        tails = import_tails(data)
    return name in tails and _word(name).search(tails) is not None


def suppressions(text: str) -> dict[int, frozenset[str]]:
    """line -> the codes/names its suppression comment lists ("*": all)."""
    return scan_comments(text).suppressions


@dataclass(slots=True)
class Comments:
    """What a file's comments say to fusion-lint, lines numbered as spans number them."""

    suppressions: dict[int, frozenset[str]] = field(default_factory=dict)  # line -> codes/names; "*" = all
    # A line inside a multi-line string -> the line its closing quotes end on, when a suppression
    # comment follows them there (ruff's convention: it suppresses the whole string's findings).
    string_lines: dict[int, int] = field(default_factory=dict)
    # line -> (column, text) of a ``# fusion-lint:`` comment that is no directive fusion-lint reads
    unknown: dict[int, tuple[int, str]] = field(default_factory=dict)


#: ``# fusion-lint: <anything>`` in a comment: a directive of ours, known or not.
_OUR_DIRECTIVE = re.compile(r"#[ \t]*fusion-lint[ \t]*:[^#]*", re.IGNORECASE)
#: The directives a line may carry: ``ignore`` and ``ignore[names]`` (``noqa`` only on a line of its own).
_KNOWN_LINE_DIRECTIVE = re.compile(r"#[ \t]*fusion-lint:[ \t]*ignore(?:\[[^\]]*\])?(?:\s|$)", re.IGNORECASE)


def scan_comments(text: str) -> Comments:
    """The suppressions of ``text`` (``suppressions``), the lines of the multi-line strings they
    close, and the ``# fusion-lint:`` comments that are no directive."""
    found = Comments()
    if _MENTIONS_SUPPRESSION.search(text) is None:
        return found
    candidates: dict[int, list[re.Match[str]]] = {}
    ours: dict[int, list[re.Match[str]]] = {}
    lines = split_lines(text)  # as spans count lines (a lone "\r" ends one): numbers agree with diagnostics'
    for number, line in enumerate(lines, start=1):
        if "#" in line:
            matches = list(_SUPPRESSION.finditer(line))
            if matches:
                candidates[number] = matches
            directives = list(_OUR_DIRECTIVE.finditer(line))
            if directives:
                ours[number] = directives
    if not candidates and not ours:
        return found
    comments, strings = _comment_starts(text, candidates.keys() | ours.keys())
    for number, matches in candidates.items():
        for match in matches:
            comment = comments.get(number)
            if comment is None or match.start() < comment:
                continue  # "# noqa" inside a string literal is not a comment
            listed = match.group("codes") or match.group("names")
            if listed is None or not listed.strip():
                tokens = frozenset({"*"})
            else:
                tokens = frozenset(
                    t.strip().upper() if t.strip().upper().startswith("FL") else t.strip()
                    for t in re.split(r"[\s,]+", listed)
                    if t.strip()
                )
            found.suppressions[number] = found.suppressions.get(number, frozenset()) | tokens
    for first, last in strings:
        if last in found.suppressions:
            for number in range(first, last):
                found.string_lines.setdefault(number, last)
    for number, directives in ours.items():
        comment = comments.get(number)
        line = lines[number - 1]
        for match in directives:
            if comment is None or match.start() < comment:
                continue  # inside a string
            directive = match.group(0).rstrip()
            own_line = match.start() == comment and not line[:comment].strip()
            if _KNOWN_LINE_DIRECTIVE.match(directive) or (own_line and _file_tokens(line) is not None):
                continue
            found.unknown.setdefault(number, (match.start(), directive))
    return found


# ``# fusion-lint: noqa`` or ``# fusion-lint: noqa: FL300, FL302`` on a line of its own (ruff's
# ``# ruff: noqa``): for the whole file. Without the colon, words after ``noqa`` make it no directive
# (a typo must not silence the whole file).
_FILE_SUPPRESSION = re.compile(r"^[ \t]*#[ \t]*fusion-lint:[ \t]*noqa[ \t]*(?::(?P<codes>.*))?$", re.IGNORECASE)
_MENTIONS_FILE_SUPPRESSION = re.compile(r"fusion-lint:[ \t]*noqa", re.IGNORECASE)


def file_suppressions(text: str) -> dict[int, frozenset[str]]:
    """line -> the codes/names a whole-file suppression comment lists ("*": all)."""
    if _MENTIONS_FILE_SUPPRESSION.search(text) is None:
        return {}
    candidates: dict[int, frozenset[str]] = {}
    lines = split_lines(text)
    for number, line in enumerate(lines, start=1):
        tokens = _file_tokens(line)
        if tokens is not None:
            candidates[number] = tokens
    comments = _comment_starts(text, candidates.keys())[0] if candidates else {}
    found: dict[int, frozenset[str]] = {}
    for number, tokens in candidates.items():
        line = lines[number - 1]
        if comments.get(number) == len(line) - len(line.lstrip()):  # else a line of a multi-line string
            found[number] = tokens
    return found


def _file_tokens(line: str) -> frozenset[str] | None:
    """What a line's whole-file suppression names ("*": all), None when it is none: a colon
    with no code after it is none (nor, thanks to the pattern, words after ``noqa`` without one)."""
    match = _FILE_SUPPRESSION.match(line)
    if match is None:
        return None
    listed = match.group("codes")
    tokens = [t.upper() if t.upper().startswith("FL") else t for t in re.split(r"[\s,]+", listed or "") if t]
    if listed is not None and not tokens:
        return None
    return frozenset(tokens or ["*"])


def _comment_starts(text: str, lines: Collection[int]) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """The column where the comment of each of ``lines`` starts (tokenized: a ``#`` in a string is
    not one), and the first and last lines of each multi-line string. Only files that mention a
    suppression get here, and the file already parsed."""
    starts: dict[int, int] = {}
    strings: list[tuple[int, int]] = []
    fstring_starts: list[int] = []
    fstring_start = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    try:
        # ``newline=None``: a lone "\r" ends a line for the tokenizer too (columns are kept).
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            kind = token.type
            if kind == tokenize.COMMENT:
                if token.start[0] in lines:
                    starts[token.start[0]] = token.start[1]
            elif kind == tokenize.STRING:
                if token.start[0] < token.end[0]:
                    strings.append((token.start[0], token.end[0]))
            elif fstring_start is not None and kind == fstring_start:
                fstring_starts.append(token.start[0])
            elif fstring_end is not None and kind == fstring_end and fstring_starts:
                first = fstring_starts.pop()
                if first < token.end[0]:
                    strings.append((first, token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass  # keep what was read: a tokenizer hiccup must not drop the other suppressions
    return starts, strings


def analyze_file(
    path: str, runtime_modules: Sequence[str], data: bytes | None = None, prescan: bool = True, light: bool = False
) -> FileResult:
    """``light``: facts for a file a partial run only reads (``facts.extract``), never cached."""
    if data is None:
        read = read_source(path)
        if isinstance(read, Unreadable):
            return FileResult(path, problem=read)
        data = read
    if len(data) > MAX_FILE_BYTES:
        return FileResult(path, problem=too_large(len(data)))
    if prescan and not mentions_runtime(data, runtime_modules):
        return FileResult(path, skipped=True, builds_server=builds_a_server(data))
    try:
        return _analyze_text(path, data, runtime_modules, light)
    except (RecursionError, MemoryError) as exc:
        # Both parsers accepted it, but it nests more deeply than the analysis can follow.
        why = "nests too deeply" if isinstance(exc, RecursionError) else "needs too much memory"
        return FileResult(
            path, problem=Unreadable("FL000", f"the file parses, but {why} for fusion-lint to analyse it")
        )
    except Exception as exc:  # noqa: BLE001 (a bug of ours costs this file, never the run)
        why = f"internal error while analysing this file: {type(exc).__name__}: {exc}"
        return FileResult(path, problem=Unreadable("FL999", why, transient=True))


def read_source(path: str) -> bytes | Unreadable:
    """A file's bytes, or its FL001: only a regular file is opened (a FIFO given by name or found
    in the tree would block the run, ``/dev/zero`` would never end), and never more than
    ``MAX_FILE_BYTES`` of it is read, whatever its size claims."""
    try:
        return read_regular(path, MAX_FILE_BYTES)
    except FileTooLarge as exc:
        return too_large(exc.size)
    except NotRegularFile as exc:
        return Unreadable("FL001", f"not a regular file ({exc.kind}): fusion-lint reads regular files only")
    except OSError as exc:
        return Unreadable("FL001", f"cannot read file: {exc.strerror or exc}")


def too_large(size: int) -> Unreadable:
    megabytes, limit = size / 1_000_000, MAX_FILE_BYTES / 1_000_000
    return Unreadable("FL001", f"file too large to lint ({megabytes:.1f} MB; the limit is {limit:.0f} MB)")


def _analyze_text(path: str, data: bytes, runtime_modules: Sequence[str], light: bool = False) -> FileResult:
    decoded = decode(data)
    if isinstance(decoded, Unreadable):
        return FileResult(path, problem=decoded)
    tree = gate_tree(decoded.text, path)
    if isinstance(tree, Unreadable):
        return FileResult(path, problem=tree)
    from fusion_lint.facts.extract import extract  # only when a file is actually analysed

    name, is_package, _ = module_of(path)
    with deep_recursion():
        facts = extract(tree, path, name, is_package, runtime_modules, decoded.text, light)
    if not light:  # a file only read is never reported: its comments suppress nothing of this run
        comments = scan_comments(decoded.text)
        facts.suppressions, facts.string_lines = comments.suppressions, comments.string_lines
        facts.unknown_directives = comments.unknown
        facts.file_suppressions = file_suppressions(decoded.text)
    return FileResult(path, facts=facts)
