"""Fix builders (DESIGN §5 "fix"): each turns one finding into edits of its file's text.

A builder returns None whenever it cannot be sure its rewrite is right: a missing fix is a
nuisance, a wrong one costs the user code. Calls are rewritten through libcst (parse the call's
own text, change the node, print it back), so the comments and line breaks inside a call survive;
the edit is then trimmed to the part of the text that actually changed.

The rules call these with the ``DefinitionContext`` they were given; ``ctx.source(path)`` is the
decoded text the spans point into.
"""
from __future__ import annotations

import ast
import importlib
import re
import weakref
from collections import Counter
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from .diagnostics import Edit, Fix
from .model import Construction, Definition, Entry, FailSite, FileFacts, RaiseSite, Span, is_runtime

if TYPE_CHECKING:  # the rules import this module: no import cycle at run time
    from .project import Project
    from .rules import DefinitionContext


class _ImportedOnFirstUse:
    """A module that is imported the first time one of its attributes is read.

    Every rule module imports this one, but a fix is built only for a finding that has one: a run
    over a tree that never names the runtime must not pay libcst's ~0.1 s import for nothing.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Optional[ModuleType] = None

    def __getattr__(self, attribute: str) -> object:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


if TYPE_CHECKING:
    import libcst as cst
else:
    cst = _ImportedOnFirstUse("libcst")


# ----- text helpers ---------------------------------------------------------------------------


def newline_of(text: str) -> str:
    """The file's line ending, as libcst decides it: the first one in the text."""
    index = text.find("\n")
    if index > 0 and text[index - 1] == "\r":
        return "\r\n"
    if index == -1 and "\r" in text:
        return "\r"
    return "\n"


def python_string(value: str) -> str:
    """A double-quoted Python literal for ``value``."""
    body = repr(value)[1:-1]
    if repr(value).startswith("'"):
        body = body.replace("\\'", "'").replace('"', '\\"')
    return f'"{body}"'


def minimal_edit(start: int, old: str, new: str) -> Edit:
    """Replace ``old`` (at ``start``) by ``new``, as an edit of only the part that differs."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return Edit(start + prefix, start + len(old) - suffix, new[prefix : len(new) - suffix])


def _line_start(text: str, offset: int) -> int:
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def _valid_span(text: str, span: Optional[Span]) -> bool:
    return span is not None and 0 <= span.start < span.end <= len(text)


# ----- rewriting one call through libcst --------------------------------------------------------

CallRewrite = Callable[["cst.Call"], Optional["cst.Call"]]


def rewrite_call(text: str, span: Span, transform: CallRewrite) -> Optional[Edit]:
    """The edit that replaces the call at ``span`` by ``transform(call)``; None if it cannot."""
    if not _valid_span(text, span):
        return None
    old = text[span.start : span.end]
    newline = newline_of(text)
    try:
        node = cst.parse_expression(old, config=cst.PartialParserConfig(default_newline=newline))
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    printer = cst.Module(body=[], default_newline=newline)
    if not isinstance(node, cst.Call) or printer.code_for_node(node) != old:
        return None  # the span is not exactly one call: better no fix than a wrong one
    changed = transform(node)
    if changed is None:
        return None
    return minimal_edit(span.start, old, printer.code_for_node(changed))


def dotted_name(reference: str) -> "cst.BaseExpression":
    """``a.b.c`` as a libcst node, built directly: what ``parse_expression`` returns for it
    (a ``Name`` or nested ``Attribute``s, no whitespace), without a parse per fix."""
    parts = reference.split(".")
    if not all(part.isidentifier() for part in parts):
        return cst.parse_expression(reference)
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def _has_comment(whitespace: object) -> bool:
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return whitespace.first_line.comment is not None or any(
            line.comment is not None for line in whitespace.empty_lines
        )
    return False


def drop_argument(call: cst.Call, index: int) -> cst.Call:
    """``call`` without its ``index``-th argument, the commas and line breaks left well-formed:
    a trailing comma stays a trailing comma, a single-line call stays single-line."""
    args = list(call.args)
    removed = args.pop(index)
    if not args:
        keep = call.whitespace_before_args if _has_comment(call.whitespace_before_args) else cst.SimpleWhitespace("")
        return call.with_changes(args=[], whitespace_before_args=keep)
    if index == len(args):  # the last one went: the one before it now ends the list
        previous = args[-1]
        if isinstance(removed.comma, cst.Comma) and isinstance(previous.comma, cst.Comma):
            comma = previous.comma.with_changes(whitespace_after=removed.comma.whitespace_after)
            args[-1] = previous.with_changes(comma=comma, whitespace_after_arg=removed.whitespace_after_arg)
        else:
            args[-1] = previous.with_changes(
                comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=removed.whitespace_after_arg
            )
        return call.with_changes(args=args)
    if index == 0 and isinstance(removed.comma, cst.Comma):
        # A comment after the removed first argument (``McpError(\n  CODE,  # why\n  msg)``)
        # stays, moved to after the opening parenthesis.
        after = removed.comma.whitespace_after
        if _has_comment(after) and not _has_comment(call.whitespace_before_args):
            return call.with_changes(args=args, whitespace_before_args=after)
    return call.with_changes(args=args)


def prepend_argument(call: cst.Call, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``value`` as a new first positional argument, in the call's own layout."""
    if not call.args:
        return call.with_changes(args=[cst.Arg(value=value)])
    before = call.whitespace_before_args
    if isinstance(before, cst.ParenthesizedWhitespace):  # one argument per line: so is the new one
        after: cst.BaseParenthesizableWhitespace = before.with_changes(
            first_line=cst.TrailingWhitespace(), empty_lines=[]
        )
    else:
        after = cst.SimpleWhitespace(" ")
    first = cst.Arg(value=value, comma=cst.Comma(whitespace_after=after))
    return call.with_changes(args=[first, *call.args])


def _positional_index(call: cst.Call, keyword: str) -> Optional[int]:
    """Index of the first positional argument or of ``keyword=``; None if a ``*args`` is in the way."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None and index == 0:
            return index
        if arg.keyword is not None and arg.keyword.value == keyword:
            return index
    return None


# ----- names a fix may introduce ----------------------------------------------------------------


@lru_cache(maxsize=16)
def _module_tree(text: str) -> Optional[ast.Module]:
    """The file's ``ast``, parsed once for all the fixes in it; None if CPython rejects it."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _binding_names(node: ast.AST) -> Sequence[str]:
    """The names ``node`` itself binds (not its children's)."""
    if isinstance(node, ast.Name):
        return () if isinstance(node.ctx, ast.Load) else (node.id,)
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (node.name,)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return node.names
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return (node.name,) if node.name else ()
    if isinstance(node, ast.MatchMapping):
        return (node.rest,) if node.rest else ()
    return ()


# Only these node types bind names: the walk skips the type test for every other node.
_BINDING_TYPES = frozenset({
    ast.Name, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
    ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
})  # fmt: skip


@lru_cache(maxsize=16)
def _binding_counts(text: str) -> Counter:
    """How often each name is bound anywhere in the file (every scope, every binding form)."""
    tree = _module_tree(text)
    bound: Counter = Counter()
    if tree is None:
        return bound
    for node in ast.walk(tree):
        if type(node) in _BINDING_TYPES:
            for name in _binding_names(node):
                bound[name] += 1
    return bound


def _bound_count(text: str, name: str) -> int:
    """How often ``name`` is bound in the file. Every binding is a token spelling the name, so in
    an ASCII text where the name never stands as a word the answer is 0 without parsing the file
    (the common case: the factory a fix would introduce). Elsewhere (non-ASCII identifiers are
    NFKC-normalized, so spelling proves nothing) the file is parsed and walked once."""
    if text.isascii() and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is None:
        return 0
    return _binding_counts(text)[name]


def _top_level_from_imports(text: str) -> tuple[ast.ImportFrom, ...]:
    """The file's top-level ``from M import ...`` statements (none if CPython rejects the file)."""
    tree = _module_tree(text)
    return tuple(node for node in tree.body if isinstance(node, ast.ImportFrom)) if tree is not None else ()


def _offset(text: str, line_starts: list[int], line: int, byte_col: int) -> int:
    """An ``ast`` position (1-based line, UTF-8 byte column) as an offset into ``text``."""
    start = line_starts[line - 1]
    end = text.find("\n", start)
    line_text = text[start : end if end != -1 else len(text)]
    return start + len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for match in re.finditer(r"\r\n|\r|\n", text):
        starts.append(match.end())
    return starts


def _import_order_key(style: str) -> Callable[[str], object]:
    if style == "isort":  # isort's and ruff's default: CONSTANTS, Classes, then functions
        return lambda name: (0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2, name.lower())
    if style == "lower":
        return str.lower
    return lambda name: name


def add_import_name(text: str, statement: ast.ImportFrom, name: str) -> Optional[Edit]:
    """Add ``name`` to an existing ``from M import ...``: in sorted position when the names are
    sorted (isort's order, or plain), else last; one name per line when the statement is written so."""
    names = [alias.name for alias in statement.names]
    if "*" in names or any(getattr(alias, "lineno", None) is None for alias in statement.names):
        return None
    starts = _line_starts(text)
    spans = [
        (_offset(text, starts, a.lineno, a.col_offset), _offset(text, starts, a.end_lineno or a.lineno, a.end_col_offset or 0))
        for a in statement.names
    ]
    position = len(names)
    for style in ("isort", "plain", "lower"):
        key = _import_order_key(style)
        keys = [key(n) for n in names]
        if keys == sorted(keys):
            position = sum(1 for k in keys if k < key(name))  # type: ignore[operator]
            break
    newline = newline_of(text)

    def vertical(start: int) -> bool:  # the alias is the first thing on its line
        return not text[_line_start(text, start) : start].strip()

    def indent_of(start: int) -> str:
        return text[_line_start(text, start) : start]

    if position < len(names):
        start = spans[position][0]
        if vertical(start) and len(names) > 1 and statement.lineno != statement.names[position].lineno:
            return Edit(start, start, f"{name},{newline}{indent_of(start)}")
        return Edit(start, start, f"{name}, ")
    start, end = spans[-1]
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    one_per_line = vertical(start) and statement.names[-1].lineno != statement.lineno
    if after < len(text) and text[after] == ",":  # a trailing comma
        if one_per_line:
            return Edit(after + 1, after + 1, f"{newline}{indent_of(start)}{name},")
        return Edit(end, end, f", {name}")
    if one_per_line:
        return Edit(end, end, f",{newline}{indent_of(start)}{name}")
    return Edit(end, end, f", {name}")


# ----- FL301: McpError(JsonRpcErrorCode.X, ...) -> the factory ------------------------------------


def factory_fix(
    facts: Optional[FileFacts],
    made: Construction,
    factory: str,
    runtime_modules: Sequence[str],
    text: Optional[str] = None,
) -> Optional[Fix]:
    """FL301: ``McpError(JsonRpcErrorCode.X, msg, ...)`` → ``x(msg, ...)``.

    The factory is named the way the file already names the runtime: ``mf.McpError`` becomes
    ``mf.not_found``; a bare ``McpError`` becomes an imported ``not_found`` (added to the file's
    ``from mcp_fusion import ...`` when missing). A name the file binds to something else (a
    parameter called ``timeout``, say) is never introduced: then there is no fix. The factories
    take ``(message, data=None, *, cause=None)``, exactly McpError's arguments after the code, so
    dropping the code argument keeps every other argument's meaning.
    """
    if facts is None or text is None or made.code_span is None or not _valid_span(text, made.func_span):
        return None
    func_text = text[made.func_span.start : made.func_span.end]
    edits: list[Edit] = []
    if "." in func_text:
        reference = func_text.rpartition(".")[0] + "." + factory  # the module McpError came from
    else:
        reference = _imported_factory(facts, factory, runtime_modules, text)
        if reference is None:
            if _bound_count(text, factory):
                return None  # the bare name means something else in this file
            reference = factory
            imports = _top_level_from_imports(text)
            if not _star_imports_runtime(imports, runtime_modules):
                statement = _runtime_import_for(func_text, imports, runtime_modules)
                edit = add_import_name(text, statement, factory) if statement is not None else None
                if edit is None:
                    return None
                edits.append(edit)

    def to_factory(call: cst.Call) -> Optional[cst.Call]:
        index = _positional_index(call, "code")
        if index != 0 or call.args[0].keyword is not None:
            return None
        return drop_argument(call, 0).with_changes(func=dotted_name(reference))

    rewrite = rewrite_call(text, made.span, to_factory)
    if rewrite is None:
        return None
    return Fix(f"Use {factory}(...)", [*edits, rewrite], "safe")


def _imported_factory(facts: FileFacts, factory: str, runtime_modules: Sequence[str], text: str) -> Optional[str]:
    """How the file already reaches the factory: its imported name (never rebound), or
    ``alias.factory``."""
    for local, qname in sorted(facts.imports.items()):
        if qname.rpartition(".")[2] == factory and is_runtime(qname, runtime_modules) and _bound_count(text, local) == 1:
            return local
    modules = {*runtime_modules, *(f"{m}.errors" for m in runtime_modules)}
    for local, qname in sorted(facts.imports.items()):
        if qname in modules and _bound_count(text, local) == 1:
            return f"{local}.{factory}"
    return None


def _star_imports_runtime(imports: Sequence[ast.ImportFrom], runtime_modules: Sequence[str]) -> bool:
    """``from mcp_fusion import *`` brings every factory already."""
    modules = {*runtime_modules, *(f"{m}.errors" for m in runtime_modules)}
    return any(s.level == 0 and s.module in modules and s.names[0].name == "*" for s in imports)


def _runtime_import_for(
    func_text: str, imports: Sequence[ast.ImportFrom], runtime_modules: Sequence[str]
) -> Optional[ast.ImportFrom]:
    """The top-level ``from <runtime> import ...`` a new factory name joins: the one that imports
    McpError, else the first one from the runtime package or its ``errors`` module."""
    modules = {*runtime_modules, *(f"{m}.errors" for m in runtime_modules)}
    candidates = [s for s in imports if s.level == 0 and s.module in modules and s.names[0].name != "*"]
    for statement in candidates:
        if any((alias.asname or alias.name) == func_text for alias in statement.names):
            return statement
    return candidates[0] if candidates else None


# ----- FL201: a direct raise of a declared code -> raise ctx.fail("<reason>", ...) ---------------


def prefer_fail_fix(text: Optional[str], site: RaiseSite, reason: str, ctx_name: str) -> Optional[Fix]:
    """FL201: ``raise not_found(msg, data, cause=e)`` → ``raise ctx.fail("r", msg, data, cause=e)``.

    ``ctx.fail(reason, message=None, data=None, *, cause=None)`` takes a factory's arguments after
    the reason, and McpError's after its code, so every argument keeps its meaning. Unsafe: the
    raised error's data now carries the reason and the contract's ``retryable``.
    """
    if text is None or site.call_span is None or site.kind not in ("factory", "mcp_error"):
        return None
    literal = cst.SimpleString(python_string(reason))
    fail = dotted_name(f"{ctx_name}.fail")

    def to_fail(call: cst.Call) -> Optional[cst.Call]:
        if site.kind == "factory":
            return prepend_argument(call, literal).with_changes(func=fail)
        index = _positional_index(call, "code")
        if index is None:
            return None
        args = list(call.args)
        code_arg = args[index]
        if code_arg.keyword is not None:
            args[index] = code_arg.with_changes(keyword=cst.Name("reason"), value=literal)
        else:
            args[index] = code_arg.with_changes(value=literal)
        return call.with_changes(func=fail, args=args)

    edit = rewrite_call(text, site.call_span, to_fail)
    if edit is None:
        return None
    return Fix(f'Raise {ctx_name}.fail("{reason}")', [edit], "unsafe")


# ----- FL204: ctx.fail(...) whose result is dropped -> raise ctx.fail(...) -----------------------


def raise_fail_fix(text: Optional[str], site: FailSite) -> Optional[Fix]:
    """FL204: insert ``raise `` before a ``ctx.fail(...)`` expression statement. Only where the
    call starts the statement (after an indent, ``;`` or a one-line ``if x:``): ``await
    ctx.fail()`` or a parenthesized call would not become valid code."""
    if text is None or not _valid_span(text, site.span):
        return None
    before = text[_line_start(text, site.span.start) : site.span.start].rstrip()
    if before and before[-1] not in ";:":
        return None
    return Fix("Raise the error", [Edit(site.span.start, site.span.start, "raise ")])


# ----- FL302: raise inside ``except ... as e`` without a cause -> ``from e`` ---------------------


def add_cause_fix(text: Optional[str], site: RaiseSite) -> Optional[Fix]:
    """FL302: append `` from <caught>`` to the raise statement."""
    if text is None or not site.in_except or not _valid_span(text, site.span):
        return None
    if not text.startswith("raise", site.span.start):
        return None
    return Fix(f"Add 'from {site.in_except}'", [Edit(site.span.end, site.span.end, f" from {site.in_except}")])


# ----- FL101: errors=[] -> no errors argument ----------------------------------------------------


def drop_empty_errors_fix(ctx: "DefinitionContext") -> Optional[Fix]:
    """FL101: drop the ``errors=[]`` argument with its comma, leaving the call well-formatted."""
    definition = ctx.definition
    if definition.errors_arg_span is None:
        return None
    text = ctx.source(ctx.path)
    if text is None:
        return None

    def without_errors(call: cst.Call) -> Optional[cst.Call]:
        for index, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == "errors":
                empty = isinstance(arg.value, (cst.List, cst.Tuple)) and not arg.value.elements
                return drop_argument(call, index) if empty else None
        return None

    edit = rewrite_call(text, definition.span, without_errors)
    return Fix("Drop the empty errors=[]", [edit]) if edit is not None else None


# ----- FL107: a reason that is not snake_case -> its snake_case form -----------------------------


def string_like(old_literal: str, value: str) -> str:
    """``value`` as a literal written like ``old_literal`` (same prefix and quotes) when it is
    one simple string, else double-quoted."""
    try:
        node = cst.parse_expression(old_literal)
    except cst.ParserSyntaxError:
        return python_string(value)
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower() and value.isidentifier():
        return f"{node.prefix}{node.quote}{value}{node.quote}"
    return python_string(value)


# project -> id(entry) -> the definitions whose contract holds that entry, in the project's order.
# Weak: the index lives as long as the run's project (whose cached contracts keep the ids valid).
_HOLDERS: "weakref.WeakKeyDictionary[Project, dict[int, list[tuple[Definition, str]]]]" = weakref.WeakKeyDictionary()


def _entry_holders(project: "Project") -> dict[int, list[tuple[Definition, str]]]:
    """Which definitions declare each contract entry: built once per project, so that renaming a
    reason costs the definitions that share it, not a scan of every definition per finding."""
    holders = _HOLDERS.get(project)
    if holders is None:
        holders = {}
        for definition, path in project.all_definitions():
            held: set[int] = set()
            for entry, _ in project.contract(definition, path).entries:
                if id(entry) not in held:  # an entry spread twice into one contract: one holder
                    held.add(id(entry))
                    holders.setdefault(id(entry), []).append((definition, path))
        _HOLDERS[project] = holders
    return holders


def rename_reason_fix(ctx: "DefinitionContext", entry: Entry, path: str, new: str) -> Optional[Fix]:
    """FL107: rename a reason literal, and every literal ``ctx.fail``/``ctx.recovery_for`` of it in
    the reach of every handler whose contract holds this entry (a shared contract constant serves
    several tools). No fix when that would leave a use behind: a use in another file (a fix edits
    one file), a service raising it by ``data={"reason": ...}``, or a contract already declaring
    the new name. Unsafe: clients may switch on the old reason."""
    raw = entry.get("reason")
    if raw is None or raw.value.kind != "str":
        return None  # a reference to a constant: renaming the constant is the user's call
    old = str(raw.value.value)
    text = ctx.source(path)
    if text is None or not _valid_span(text, raw.value.span):
        return None
    spans: dict[int, Span] = {raw.value.span.start: raw.value.span}
    project = ctx.project
    for definition, definition_path in _entry_holders(project).get(id(entry), ()):
        contract = project.contract(definition, definition_path)
        if not any(candidate is entry for candidate, _ in contract.entries):
            continue
        for other, _ in contract.entries:
            other_reason = other.get("reason")
            if other_reason is not None and other_reason.value.value == new:
                return None
        handler = project.handler(definition, definition_path)
        if handler is None:
            continue
        for reached in project.reach(*handler):
            for fail_site in reached.function.fail_sites:
                if fail_site.reason != old:
                    continue
                if reached.path != path or not _valid_span(text, fail_site.reason_span):
                    return None
                spans[fail_site.reason_span.start] = fail_site.reason_span  # type: ignore[union-attr]
            if any(raised.data_reason == old for raised in reached.function.raises):
                return None
    edits = [Edit(s.start, s.end, string_like(text[s.start : s.end], new)) for _, s in sorted(spans.items())]
    uses = len(edits) - 1
    also = f" and {uses} use{'s' if uses != 1 else ''}" if uses else ""
    return Fix(f"Rename reason '{old}' to '{new}'{also}", edits, "unsafe")
