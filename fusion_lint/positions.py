"""Positions for the nodes that may be reported, and no others (DESIGN §4 cost model).

libcst's ``PositionProvider`` records a range for every node of a module, which costs more than the
parse itself. We run libcst's code generator once with a state that records ranges only for the
nodes the extractor registered, and keeps every per-token and per-node hook in C: libcst calls
``add_token`` about once per token and ``before_codegen``/``after_codegen`` twice per node, so a
Python body there would cost more than the rest of this module together. Measured on the dense
benchmark corpus (bench/): below the cost of a plain ``module.code``.
"""
from __future__ import annotations

import ast
import io
from bisect import bisect_right
from contextlib import nullcontext
from typing import NamedTuple, Optional, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState  # the documented hook PositionProvider uses

from .diagnostics import Span

# What ``record_syntactic_position`` returns for the (vast majority of) nodes nobody asked about.
_NOT_RECORDED = nullcontext()


class _TargetedPositionState(CodegenState):
    def __init__(self, targets: set[int], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.targets = targets  # ids of nodes whose range we need
        self.ranges: dict[int, tuple[int, int]] = {}
        # Instance attributes shadow the class's Python methods with C callables: tokens go
        # straight into a text buffer whose ``tell`` is the offset in code points, and ``id`` is a
        # one-argument function without effect for the node hooks (the base class's are empty
        # Python methods; PositionProvider needs them, we do not).
        self.buffer = io.StringIO()
        self.add_token = self.buffer.write  # type: ignore[method-assign,assignment]
        self.offset = self.buffer.tell  # type: ignore[method-assign]
        self.before_codegen = self.after_codegen = id  # type: ignore[method-assign,assignment]
        self.trailing_newline_dropped = False
        # ``Module`` adds a newline when ``tokens`` is empty, to render a file that is only a
        # newline; the tokens are in the buffer, so ``text`` takes care of that case itself.
        self.tokens.append("")

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.buffer.write(token)

    def pop_trailing_newline(self) -> None:
        # Called once, at the very end, for a file without a final newline: ``text`` drops it.
        self.trailing_newline_dropped = True

    @property
    def text(self) -> str:
        text = self.buffer.getvalue()
        if self.trailing_newline_dropped and text:
            # The last token is always a newline (every statement and empty line ends with one).
            text = text[: -2 if text.endswith("\r\n") else -1]
        return text

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> "_Recorder | nullcontext[None]":
        if id(node) not in self.targets:
            return _NOT_RECORDED
        # A range hoisted from a child: make sure that child is measured too.
        if start_node is not None:
            self.targets.add(id(start_node))
        if end_node is not None:
            self.targets.add(id(end_node))
        return _Recorder(self, node, start_node, end_node)


class _CompleteState(_TargetedPositionState):
    """Also records the whitespace-inclusive range of any target that has no syntactic one, as
    ``PositionProvider`` falls back to. It costs a Python call per node: only used when needed."""

    def __init__(self, targets: set[int], **kwargs: object) -> None:
        super().__init__(targets, **kwargs)
        del self.before_codegen, self.after_codegen  # the class's methods below, not the C no-ops
        self._starts: dict[int, int] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:  # type: ignore[override]
        if id(node) in self.targets:
            self._starts[id(node)] = self.offset()

    def after_codegen(self, node: cst.CSTNode) -> None:  # type: ignore[override]
        key = id(node)
        if key in self._starts and key not in self.ranges:
            self.ranges[key] = (self._starts[key], self.offset())


class _Recorder:
    """The range of one registered node: the offsets before and after its code is emitted."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self,
        state: _TargetedPositionState,
        node: cst.CSTNode,
        start_node: Optional[cst.CSTNode],
        end_node: Optional[cst.CSTNode],
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.start = 0

    def __enter__(self) -> None:
        self.start = self.state.offset()

    def __exit__(self, *exc_info: object) -> None:
        ranges = self.state.ranges
        start, end = self.start, self.state.offset()
        # A hoisted child that records no syntactic range itself (a ``RightParen``, an
        # ``IndentedBlock``) is always the first/last thing emitted inside this block, so the
        # offsets already taken are its bounds: the same answer ``PositionProvider`` gives.
        if self.start_node is not None and id(self.start_node) in ranges:
            start = ranges[id(self.start_node)][0]
        if self.end_node is not None and id(self.end_node) in ranges:
            end = ranges[id(self.end_node)][1]
        ranges[id(self.node)] = (start, end)


class Cursor(NamedTuple):
    """Where the extractor is: what a span it hands out belongs to.

    ``stmt`` is the innermost statement (a suppression may sit on its first line); ``unit`` is the
    piece of the module whose rendering contains the node — a module-level statement, or a
    top-level function's decorator or body statement — or None when only the whole module will do.
    """

    stmt: Optional[cst.CSTNode] = None
    unit: Optional[cst.CSTNode] = None

    def inside(self, stmt: cst.CSTNode) -> "Cursor":
        return Cursor(stmt, self.unit)


class SpanRegistry:
    """Hands out ``Span`` placeholders during extraction and fills them in one codegen pass."""

    def __init__(self) -> None:
        self._pending: list[tuple[Span, cst.CSTNode, Optional[cst.CSTNode]]] = []
        self._units: list[Optional[cst.CSTNode]] = []

    def span(
        self, node: cst.CSTNode, stmt: Optional[cst.CSTNode] = None, unit: Optional[cst.CSTNode] = None
    ) -> Span:
        """A placeholder for ``node``'s range. ``unit`` is the piece of the module whose rendering
        contains the node (a statement, a decorator), or None when only the whole module will do."""
        placeholder = Span()
        self._pending.append((placeholder, node, stmt))
        self._units.append(unit)
        return placeholder

    def at(self, node: cst.CSTNode, cursor: Cursor) -> Span:
        """``span`` of ``node`` where ``cursor`` is."""
        return self.span(node, cursor.stmt, cursor.unit)

    def resolve(self, module: cst.Module, source: Optional[str] = None, tree: Optional[ast.Module] = None) -> str:
        """Fill every placeholder; return the module's text (identical to the source).

        With the source and CPython's tree of it, only the units holding registered nodes are
        rendered, each from where CPython says it starts, and each checked against the source;
        anything unexpected falls back to rendering the whole module."""
        if source is not None and tree is not None and self._pending:
            ranges = _ranges_by_unit(module, source, tree, self._pending, self._units)
            if ranges is not None:
                self._fill(source, ranges)
                return source
        targets: set[int] = set()
        for _, node, stmt in self._pending:
            targets.add(id(node))
            if stmt is not None:
                targets.add(id(stmt))
        state = _TargetedPositionState(
            targets, default_indent=module.default_indent, default_newline=module.default_newline
        )
        module._codegen(state)
        if any(id(node) not in state.ranges for _, node, _ in self._pending):
            # A node type that records no syntactic range of its own (none the extractor
            # registers today): a second pass that also watches every node's whole extent.
            state = _CompleteState(targets, default_indent=module.default_indent, default_newline=module.default_newline)
            module._codegen(state)
        text = state.text or (module.default_newline if module.has_trailing_newline else "")
        if self._pending:
            self._fill(text, state.ranges)
        return text

    def _fill(self, text: str, ranges: dict[int, tuple[int, int]]) -> None:
        line_starts = _line_starts(text)

        def line_col(offset: int) -> tuple[int, int]:
            line = bisect_right(line_starts, offset)
            return line, offset - line_starts[line - 1]

        size = len(text)  # a file without a final newline: codegen counted one, then dropped it
        for placeholder, node, stmt in self._pending:
            start, end = ranges.get(id(node), (0, 0))
            start, end = min(start, size), min(end, size)
            placeholder.start, placeholder.end = start, end
            placeholder.line, placeholder.col = line_col(start)
            placeholder.end_line, placeholder.end_col = line_col(end)
            if stmt is not None and id(stmt) in ranges:
                placeholder.stmt_line = line_col(ranges[id(stmt)][0])[0]
            else:
                placeholder.stmt_line = placeholder.line
        self._pending.clear()
        self._units.clear()


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    index = find("\n")
    while index != -1:
        starts.append(index + 1)
        index = find("\n", index + 1)
    return starts


def _first_line(stmt: cst.CSTNode, node: ast.stmt) -> int:
    """The line a libcst statement's rendering starts on: CPython's first line of the statement
    (its first decorator's), less the comment and blank lines libcst renders before it."""
    lines = len(getattr(stmt, "leading_lines", ()))
    decorators = getattr(stmt, "decorators", ())
    if decorators:
        return node.decorator_list[0].lineno - len(decorators[0].leading_lines) - lines  # type: ignore[attr-defined]
    return node.lineno - lines


def _pair(block: Sequence[cst.CSTNode], nodes: Sequence[ast.stmt]) -> Optional[list[tuple[cst.CSTNode, ast.stmt]]]:
    """libcst statements with CPython's (first) statement of each: ``a; b`` is one line in libcst."""
    pairs, index = [], 0
    for stmt in block:
        if index >= len(nodes):
            return None
        pairs.append((stmt, nodes[index]))
        index += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    return pairs if index == len(nodes) else None


def _ranges_by_unit(
    module: cst.Module,
    source: str,
    tree: ast.Module,
    pending: Sequence[tuple[Span, cst.CSTNode, Optional[cst.CSTNode]]],
    units: Sequence[Optional[cst.CSTNode]],
) -> Optional[dict[int, tuple[int, int]]]:
    """Ranges of the registered nodes from rendering only the units that hold them; None when
    that cannot be trusted (a unit unknown, a rendering that does not match the source)."""
    if any(unit is None for unit in units):
        return None
    top = _pair(module.body, tree.body)
    if top is None:
        return None
    line_starts = _line_starts(source)
    starts: dict[int, tuple[int, str]] = {}  # id(unit) -> (line it starts on, indentation)
    names: dict[int, tuple[cst.FunctionDef, ast.stmt]] = {}  # id(def's name) -> where to find it
    for stmt, node in top:
        starts[id(stmt)] = (_first_line(stmt, node), "")
        if isinstance(stmt, cst.FunctionDef) and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[id(stmt.name)] = (stmt, node)
            for decorator, expression in zip(stmt.decorators, node.decorator_list):
                starts[id(decorator)] = (expression.lineno - len(decorator.leading_lines), "")
            if isinstance(stmt.body, cst.IndentedBlock):
                indent = stmt.body.indent if stmt.body.indent is not None else module.default_indent
                inner = _pair(stmt.body.body, node.body)
                if inner is None:
                    return None
                for child, child_node in inner:
                    starts[id(child)] = (_first_line(child, child_node), indent)
    by_unit: dict[int, tuple[cst.CSTNode, set[int]]] = {}
    wanted_names: dict[int, tuple[cst.FunctionDef, ast.stmt]] = {}
    ranges: dict[int, tuple[int, int]] = {}
    statements = _statements_of(module, tree) if any(isinstance(p[1], _PLACED_BY_CPYTHON) for p in pending) else {}
    for (_, node, stmt), unit in zip(pending, units):
        assert unit is not None
        if id(node) in names and unit is names[id(node)][0]:
            wanted_names[id(node)] = names[id(node)]  # placed from CPython's tree, not rendered
            continue
        placed = statements.get(id(node))
        if placed is not None and (stmt is None or id(stmt) in statements):
            # A whole statement (``raise``, ``return``): CPython says where it is, nothing is rendered.
            ranges[id(node)] = _ast_range(source, line_starts, placed)
            if stmt is not None:
                ranges[id(stmt)] = _ast_range(source, line_starts, statements[id(stmt)])
            continue
        if id(unit) not in starts:
            return None
        targets = by_unit.setdefault(id(unit), (unit, set()))[1]
        targets.add(id(node))
        if stmt is not None:
            targets.add(id(stmt))
    for key, (unit, targets) in by_unit.items():
        line, indent = starts[key]
        if not 1 <= line <= len(line_starts):
            return None
        base = line_starts[line - 1]
        state = _TargetedPositionState(targets, default_indent=module.default_indent, default_newline=module.default_newline)
        if indent:
            state.indent_tokens = [indent]
        unit._codegen(state)
        rendered = state.buffer.getvalue()
        if source[base : base + len(rendered)] != rendered or any(t not in state.ranges for t in targets):
            return None
        for target, (start, end) in state.ranges.items():
            ranges[target] = (base + start, base + end)
    for key, (definition, node) in wanted_names.items():
        found = _name_range(source, line_starts, definition, node)
        if found is None:
            return None
        ranges[key] = found
    return ranges


# Statements CPython places exactly as libcst's rendering would (from their first token to their
# last, comments and line ends excluded): their ranges come from its tree, without rendering.
_PLACED_BY_CPYTHON = (cst.Raise, cst.Return)


class _Mismatch(Exception):
    """libcst's statements and CPython's do not correspond: place everything by rendering."""


def _statements_of(module: cst.Module, tree: ast.Module) -> dict[int, ast.stmt]:
    """Every libcst statement at any depth with CPython's statement for it (a line of several small
    statements: its first one); empty when the two trees do not correspond."""
    found: dict[int, ast.stmt] = {}
    try:
        _pair_block(module.body, tree.body, found)
    except (_Mismatch, IndexError, AttributeError):
        return {}
    return found


def _pair_block(statements: Sequence[cst.CSTNode], nodes: Sequence[ast.stmt], found: dict[int, ast.stmt]) -> None:
    index = 0
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine):
            found[id(stmt)] = nodes[index]
            for small in stmt.body:
                found[id(small)] = nodes[index]
                index += 1
        elif isinstance(stmt, cst.BaseSmallStatement):  # the body of a one-line ``if x: ...``
            found[id(stmt)] = nodes[index]
            index += 1
        else:
            found[id(stmt)] = nodes[index]
            _pair_compound(stmt, nodes[index], found)
            index += 1
    if index != len(nodes):
        raise _Mismatch


def _body(block: cst.CSTNode) -> Sequence[cst.CSTNode]:
    return block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()


def _pair_compound(stmt: cst.CSTNode, node: ast.stmt, found: dict[int, ast.stmt]) -> None:
    if isinstance(stmt, cst.If) and isinstance(node, ast.If):
        _pair_block(_body(stmt.body), node.body, found)
        if isinstance(stmt.orelse, cst.If):  # ``elif``: CPython's else holds that one ``If``
            if len(node.orelse) != 1:
                raise _Mismatch
            found[id(stmt.orelse)] = node.orelse[0]
            _pair_compound(stmt.orelse, node.orelse[0], found)
        elif isinstance(stmt.orelse, cst.Else):
            _pair_block(_body(stmt.orelse.body), node.orelse, found)
    elif isinstance(stmt, (cst.For, cst.While)) and isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        _pair_block(_body(stmt.body), node.body, found)
        if stmt.orelse is not None:
            _pair_block(_body(stmt.orelse.body), node.orelse, found)
    elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef, cst.With)) and isinstance(
        node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)
    ):
        _pair_block(_body(stmt.body), node.body, found)
    elif isinstance(stmt, (cst.Try, cst.TryStar)) and type(node).__name__ in ("Try", "TryStar"):
        _pair_block(_body(stmt.body), node.body, found)  # type: ignore[attr-defined]
        handlers = node.handlers  # type: ignore[attr-defined]
        if len(stmt.handlers) != len(handlers):
            raise _Mismatch
        for handler, handler_node in zip(stmt.handlers, handlers):
            _pair_block(_body(handler.body), handler_node.body, found)
        if stmt.orelse is not None:
            _pair_block(_body(stmt.orelse.body), node.orelse, found)  # type: ignore[attr-defined]
        if stmt.finalbody is not None:
            _pair_block(_body(stmt.finalbody.body), node.finalbody, found)  # type: ignore[attr-defined]
    elif isinstance(stmt, cst.Match) and type(node).__name__ == "Match":
        cases = node.cases  # type: ignore[attr-defined]
        if len(stmt.cases) != len(cases):
            raise _Mismatch
        for case, case_node in zip(stmt.cases, cases):
            _pair_block(_body(case.body), case_node.body, found)
    else:
        raise _Mismatch


def _ast_range(source: str, line_starts: list[int], node: ast.stmt) -> tuple[int, int]:
    """A CPython node's range as offsets into ``source`` (its columns count UTF-8 bytes)."""
    return (_offset(source, line_starts, node.lineno, node.col_offset),
            _offset(source, line_starts, node.end_lineno or node.lineno, node.end_col_offset or 0))  # fmt: skip


def _offset(source: str, line_starts: list[int], line: int, byte_col: int) -> int:
    start = line_starts[line - 1]
    prefix = source[start : start + byte_col]
    if prefix.isascii():
        return start + byte_col
    return start + len(source[start:].encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _name_range(source: str, line_starts: list[int], definition: cst.FunctionDef, node: ast.stmt) -> Optional[tuple[int, int]]:
    """A def's name, found after ``def`` on the line CPython puts the keyword on."""
    if node.lineno > len(line_starts):
        return None
    start = line_starts[node.lineno - 1]
    end = line_starts[node.lineno] if node.lineno < len(line_starts) else len(source)
    name = definition.name.value
    keyword = source.find("def", start, end)
    if keyword == -1:
        return None
    offset = source.find(name, keyword + 3, end)
    if offset == -1 or source[keyword + 3 : offset].strip():
        return None
    return offset, offset + len(name)
