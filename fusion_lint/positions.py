"""Positions for the nodes that may be reported, and no others (DESIGN §4 cost model).

libcst's ``PositionProvider`` records a range for every node of a module, which costs more than the
parse itself. We run libcst's code generator once with a state that records ranges only for the
nodes the extractor registered, and keeps every per-token and per-node hook in C: libcst calls
``add_token`` about once per token and ``before_codegen``/``after_codegen`` twice per node, so a
Python body there would cost more than the rest of this module together. Measured on the dense
benchmark corpus (bench/): below the cost of a plain ``module.code``.
"""
from __future__ import annotations

import io
from bisect import bisect_right
from contextlib import nullcontext
from typing import Optional

import libcst as cst
from libcst._nodes.internal import CodegenState  # the documented hook PositionProvider uses

from .model import Span

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


class SpanRegistry:
    """Hands out ``Span`` placeholders during extraction and fills them in one codegen pass."""

    def __init__(self) -> None:
        self._pending: list[tuple[Span, cst.CSTNode, Optional[cst.CSTNode]]] = []

    def span(self, node: cst.CSTNode, stmt: Optional[cst.CSTNode] = None) -> Span:
        placeholder = Span()
        self._pending.append((placeholder, node, stmt))
        return placeholder

    def resolve(self, module: cst.Module) -> str:
        """Fill every placeholder; return the module's text (identical to the source)."""
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
        if not self._pending:
            return text
        line_starts = [0]
        find = text.find
        index = find("\n")
        while index != -1:
            line_starts.append(index + 1)
            index = find("\n", index + 1)

        def line_col(offset: int) -> tuple[int, int]:
            line = bisect_right(line_starts, offset)
            return line, offset - line_starts[line - 1]

        size = len(text)  # a file without a final newline: codegen counted one, then dropped it
        for placeholder, node, stmt in self._pending:
            start, end = state.ranges.get(id(node), (0, 0))
            start, end = min(start, size), min(end, size)
            placeholder.start, placeholder.end = start, end
            placeholder.line, placeholder.col = line_col(start)
            placeholder.end_line, placeholder.end_col = line_col(end)
            if stmt is not None and id(stmt) in state.ranges:
                placeholder.stmt_line = line_col(state.ranges[id(stmt)][0])[0]
            else:
                placeholder.stmt_line = placeholder.line
        self._pending.clear()
        return text
