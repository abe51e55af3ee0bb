"""Reading and parsing one file: CPython's parser, behind a bound on nesting (DESIGN §11).

Every file is parsed once, by ``ast.parse``: what CPython rejects is FL000 with CPython's own
message; what it accepts is walked for its facts (``facts/``) in that same tree.
"""

from __future__ import annotations

import ast
import codecs
import io
import sys
import tokenize
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from fusion_lint.base.lines import split_lines
from fusion_lint.source.newer_syntax import NEWEST_KNOWN, needed_version


@dataclass(slots=True)
class Unreadable:
    """A per-file problem: ``code`` is FL000 (parse-error) or FL001 (file-unreadable)."""

    code: str
    message: str
    line: int = 1
    col: int = 0
    # A crash, a timeout or a bug of ours: it may not happen again, so it is never cached.
    transient: bool = False


@dataclass(slots=True)
class Decoded:
    text: str
    encoding: str
    bom: bool


def decode(data: bytes) -> Decoded | Unreadable:
    """Bytes to text honouring a BOM and a coding cookie, as the interpreter would."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        message = str(exc.msg if hasattr(exc, "msg") else exc)
        if message.startswith("invalid or missing encoding declaration"):
            # The first two lines are not UTF-8 and no coding cookie names another encoding.
            return _not_valid(data, "utf-8") or Unreadable("FL001", f"cannot decode: {message}")
        return Unreadable("FL001", f"cannot decode: {message}")
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig" if bom else encoding)
    except LookupError as exc:
        return Unreadable("FL001", f"cannot decode: {exc}")
    except UnicodeDecodeError:
        return _not_valid(data, encoding) or Unreadable("FL001", f"not valid {encoding}")
    return Decoded(text, "utf-8" if encoding == "utf-8-sig" else encoding, bom)


def _not_valid(data: bytes, encoding: str) -> Unreadable | None:
    """Where and why ``data`` is not ``encoding`` (None if it is)."""
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        # Reported at the top like every per-file problem; the message says where.
        return Unreadable("FL001", f"not valid {encoding} at byte {exc.start} (line {line}): {exc.reason}")
    return None


def gate(text: str, path: str) -> Unreadable | None:
    """CPython's verdict on the text; None when it parses."""
    verdict = gate_tree(text, path)
    return verdict if isinstance(verdict, Unreadable) else None


def gate_tree(text: str, path: str) -> ast.Module | Unreadable:
    """CPython's tree of the text, or why it rejects it (or why the analysis must not walk it)."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = max((exc.offset or 1) - 1, 0)
        return Unreadable("FL000", _syntax_error_message(text, exc), line, col)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        # NUL bytes (ValueError before 3.12), nesting beyond the interpreter's limits.
        message = str(exc) or type(exc).__name__
        return Unreadable("FL000", f"CPython cannot parse this file: {message}")
    deep = too_deep(tree, text)
    if deep is not None:
        why = f"the code on line {deep} nests deeper than {MAX_DEPTH} levels, more than fusion-lint parses safely"
        return Unreadable("FL000", why, deep)
    return tree


def _syntax_error_message(text: str, exc: SyntaxError) -> str:
    """CPython's message, or the Python version the file needs when a newer one would accept it."""
    running = sys.version_info[:2]
    if running < NEWEST_KNOWN and not str(exc.msg).startswith(("too many nested", "too many levels")):
        needed = needed_version(text, running)
        if needed is not None:
            return f"needs Python \u2265 {needed[0]}.{needed[1]} to parse (fusion-lint is running on {running[0]}.{running[1]})"
    return f"syntax error: {exc.msg}"


#: The deepest syntax tree (in ``ast`` levels) the gate lets through. CPython 3.11 and 3.12 refuse
#: ~3,000 levels themselves (three per unit of the default recursion limit), 3.10 none (a
#: 20,000-link attribute chain parses) and 3.13 ~20,000; libcst's parse time grows with the square
#: of a chain's length (0.9 s for 1,000 subscripts, 9 s for 2,900) and the analysis follows ~740
#: levels in a worker on 3.12. The deepest real module seen (generated code, among the stdlib,
#: site-packages and the corpus: 15,000 files) nests 569 levels.
MAX_DEPTH = 1_000
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def too_deep(tree: ast.Module, text: str) -> int | None:
    """The line of the first statement nesting deeper than ``MAX_DEPTH``, or None.

    Walking every node costs ~15% of ``ast.parse``; walking statements costs a tenth of that. An
    expression needs at least one character per level (give or take its leaf), so only a statement
    whose header spans more characters than the depth left for it is walked node by node.
    """
    budget = MAX_DEPTH - 3
    if len(text) < budget - 250:  # block nesting adds at most ~2 levels per indentation level (100)
        return None
    lines = split_lines(text)
    longest = max(map(len, lines))
    pending: list[tuple[Sequence[ast.AST], int]] = [(tree.body, 2)]
    while pending:
        statements, depth = pending.pop()
        for statement in statements:
            first, last, compound = _header_lines(statement)
            if depth + (last - first + 1) * longest > budget:
                size = sum(len(lines[number - 1]) for number in range(first, min(last, len(lines)) + 1))
                if depth + size > budget and _header_depth(statement, depth) > MAX_DEPTH:
                    return first
            if compound:
                for name in _BODIES:
                    children = getattr(statement, name, None)
                    if children:
                        pending.append((children, depth + 1))
    return None


def _header_lines(node: ast.AST) -> tuple[int, int, bool]:
    """The lines of a statement outside its bodies (decorators included; up to the first line of
    its first body, which is as far as its header can reach), and whether it has bodies."""
    body, cases = getattr(node, "body", None), getattr(node, "cases", None)
    if isinstance(node, ast.match_case):
        first = node.pattern.lineno
    else:
        decorators = getattr(node, "decorator_list", None)
        first = min(node.lineno, *(d.lineno for d in decorators)) if decorators else node.lineno  # type: ignore[attr-defined]  # a statement with decorators: placed, as they are
    if isinstance(body, list) and body:
        return first, body[0].lineno, True
    if cases:
        return first, cases[0].pattern.lineno, True
    return first, getattr(node, "end_lineno", None) or first, False


def _header_depth(statement: ast.AST, depth: int) -> int:
    """The depth of the deepest node of ``statement`` outside its bodies (iteratively: the walk
    must not recurse as deep as what it measures)."""
    deepest = depth
    pending = [(value, depth + 1) for name, value in ast.iter_fields(statement) if name not in _BODIES]
    while pending:
        value, level = pending.pop()
        if isinstance(value, list):
            pending.extend((item, level) for item in value)
        elif isinstance(value, ast.AST):
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for child in (getattr(value, field, None) for field in value._fields))
    return deepest


#: When set (worker processes set it, see workers.py), the walks over a file's tree may recurse
#: this deep. Never the gate: CPython bounds nesting by the recursion limit (in 3.11, three levels
#: per unit), and with a raised limit it would admit trees deeper than ``MAX_DEPTH``.
analysis_recursion_limit: int | None = None
DEFAULT_RECURSION_LIMIT = sys.getrecursionlimit()


@contextmanager
def deep_recursion() -> Iterator[None]:
    """The raised recursion limit of a worker, for the span of one file's analysis."""
    limit = sys.getrecursionlimit()
    if analysis_recursion_limit is None or analysis_recursion_limit <= limit:
        yield
        return
    sys.setrecursionlimit(analysis_recursion_limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


@contextmanager
def shallow_recursion() -> Iterator[None]:
    """The interpreter's own limit again, inside ``deep_recursion`` or in a worker."""
    limit = sys.getrecursionlimit()
    if limit <= DEFAULT_RECURSION_LIMIT:
        yield
        return
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
