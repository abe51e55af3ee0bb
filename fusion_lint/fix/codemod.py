"""Fixes applied as libcst codemods (DESIGN §13.2: read with ``ast``, write with libcst).

A rule describes its fix as text edits: what reports show, computed from the facts without a
parse. Applying them is this module's, and only this module imports libcst: a file is parsed with
it only when a fix is applied to it (``--fix``, ``--diff``, ``--add-noqa``, an editor code action),
and each edit becomes the rewrite of one syntax node:

* an edit inside an expression or a simple statement rewrites the smallest such node it falls in
  whose edited text parses as that kind of node again (``raise `` put before a call turns the
  call's expression statement into a raise statement; a rename inside a string rewrites the string);
* an edit among a function's or class's decorators, or just above its ``def``, rewrites its list of
  decorators, parsed again from the edited lines;
* an edit that adds an import (``Edit.adds_imports``) is placed the way libcst's
  ``AddImportsVisitor`` places one, kept to the leading import block: after a docstring and
  ``from __future__``, merged into a ``from module import ...`` already there — never after an
  import at the bottom of the module (``_with_imports`` says why it is not that visitor);
* anything else (an edit across statements or into a comment, a result that does not parse as the
  node it rewrites) is not applicable: ``NotApplicable`` says why, and nothing changes.

Everything outside the rewritten nodes — comments, blank lines, parentheses, line continuations,
line endings — is libcst's round trip of the original text, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import CodePosition, MetadataWrapper, PositionProvider

from fusion_lint.base.diagnostics import Edit, apply_edits
from fusion_lint.rules._edits import order_of

#: Rewrites of a target that does not parse move up to the node around it, at most this often.
MAX_WIDENINGS = 8
_LINE_END = re.compile(r"\r\n|\r|\n")


class NotApplicable(Exception):
    """The edits cannot be made as a rewrite of the file's syntax nodes; the message says why."""


def rewrite(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with ``edits`` applied as node rewrites (see the module's docstring)."""
    try:
        module = cst.parse_module(text)
    except Exception as exc:  # libcst's parser rejects some code CPython admits
        raise NotApplicable(f"libcst cannot parse the file ({type(exc).__name__})") from exc
    splices = [edit for edit in edits if not edit.adds_imports]
    imports = sorted({pair for edit in edits for pair in edit.adds_imports})
    if splices:
        module = _rewrite_nodes(text, module, splices)
        if module.code != apply_edits(text, splices):  # libcst rendered the new nodes otherwise
            raise NotApplicable("the rewritten nodes do not render as the edits' text")
    if imports:
        module = _with_imports(module, imports)
    return module.code


def _with_imports(module: cst.Module, imports: Sequence[tuple[str, str]]) -> cst.Module:
    """``module`` importing ``from M import N`` for each pair, where ruff's isort and libcst's
    ``AddImportsVisitor`` would, but kept to the leading import block: libcst's own visitor adds
    after the *last* top-level import and merges into any ``from M import``, so an import at the
    bottom of a module would take the new name and a decorator above it would raise ``NameError``
    at import time. A name the module already imports from M at the top level is not added again;
    new names join a ``from M import ...`` of the leading block, else a new statement ends it. Only
    the module's top-level statements are read (libcst's visitor walks the whole tree, twice)."""
    body = list(module.body)
    leading_end = 0
    present: set[tuple[str, str]] = set()
    starred: set[str] = set()
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                source = get_full_name_for_node(small.module) or ""
                if isinstance(small.names, cst.ImportStar):
                    starred.add(source)
                else:
                    present.update((source, alias.evaluated_alias or alias.evaluated_name) for alias in small.names)
    for index, statement in enumerate(body):
        if index == 0 and _is_docstring(statement):
            leading_end = 1
        elif isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        ):
            leading_end = index + 1
        else:
            break
    wanted: dict[str, list[str]] = {}
    for source, name in imports:
        if (source, name) not in present and source not in starred and name not in wanted.get(source, []):
            wanted.setdefault(source, []).append(name)
    for index in range(leading_end):
        statement = body[index]
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if not isinstance(small, cst.ImportFrom) or small.relative or isinstance(small.names, cst.ImportStar):
            continue
        from_module = get_full_name_for_node(small.module) if small.module is not None else None
        if from_module in wanted:
            added = [cst.ImportAlias(name=cst.Name(name)) for name in wanted.pop(from_module)]
            body[index] = statement.with_changes(
                body=[small.with_changes(names=_merged_names(list(small.names), added, small.lpar))]
            )
    new = [
        cst.parse_statement(f"from {source} import {', '.join(names)}", config=module.config_for_parsing)
        for source, names in wanted.items()
    ]
    return module.with_changes(body=[*body[:leading_end], *new, *body[leading_end:]])


def _merged_names(
    names: list[cst.ImportAlias], added: list[cst.ImportAlias], lpar: cst.LeftParen | None = None
) -> list[cst.ImportAlias]:
    """``names`` with ``added`` in sorted place when ``names`` are sorted (else at the end), each
    separated the way the statement already separates its names (one per line stays one per line)."""
    if not names:
        return added
    merged = names + added
    order = order_of([alias.evaluated_name for alias in names])
    if order is not None:
        merged.sort(key=lambda alias: order(alias.evaluated_name))  # type: ignore[arg-type,return-value]  # names of a from-import are plain names (str), as order_of reads them
    between = [alias.comma for alias in names[:-1] if isinstance(alias.comma, cst.Comma)]
    if between:
        separator = between[0]
    elif lpar is not None and isinstance(lpar.whitespace_after, cst.ParenthesizedWhitespace):
        separator = cst.Comma(whitespace_after=lpar.whitespace_after)  # one name per line after the "("
    else:
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last_comma = names[-1].comma  # a trailing comma stays a trailing comma, or no comma stays none
    return [
        alias.with_changes(comma=last_comma if index == len(merged) - 1 else separator)
        for index, alias in enumerate(merged)
    ]


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


# ----- where each edit lands ----------------------------------------------------------------------


@dataclass
class _Target:
    """A node an edit may rewrite: its range in the text and how its edited text is parsed."""

    node: cst.CSTNode
    start: int
    end: int
    kind: str  # "expression", "statement" (a simple one) or "decorators" (of a def or class)
    indent: str = ""  # the indentation of the block the node is in (its edited text is parsed there)
    edits: list[Edit] = field(default_factory=list)

    @property
    def size(self) -> int:
        return self.end - self.start

    def holds(self, start: int, end: int) -> bool:
        return self.start <= start and end <= self.end

    def encloses(self, other: _Target) -> bool:
        return (
            other is not self and self.holds(other.start, other.end) and (self.size, id(self)) > (other.size, id(other))
        )


class _Collect(cst.CSTVisitor):
    """Every node an edit may rewrite, with its range and the indentation of the block it is in."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, text: str, module: cst.Module, base: int):
        super().__init__()
        self.default_indent = module.default_indent
        # ``text`` is one top-level statement's, which starts at ``base`` in the file's.
        self.starts = [base, *(base + match.end() for match in _LINE_END.finditer(text))]
        self.indents = [""]  # the absolute indentation of each block entered
        self.targets: list[_Target] = []

    def offset(self, position: CodePosition) -> int:
        return self.starts[position.line - 1] + position.column

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.indents.append(self.indents[-1] + (self.default_indent if node.indent is None else node.indent))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.indents.pop()

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = (
            "expression"
            if isinstance(node, cst.BaseExpression)
            else "statement"
            if isinstance(node, cst.BaseSmallStatement)
            else None
        )
        if kind is not None:
            where = self.get_metadata(PositionProvider, node)
            self.targets.append(_Target(node, self.offset(where.start), self.offset(where.end), kind, self.indents[-1]))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            def_line = self.starts[self.get_metadata(PositionProvider, node.name).start.line - 1]
            first = (
                self.starts[self.get_metadata(PositionProvider, node.decorators[0]).start.line - 1]
                if node.decorators
                else def_line
            )
            self.targets.append(_Target(node, first, def_line, "decorators", self.indents[-1]))
        return super().on_visit(node)


def _statements(module: cst.Module) -> list[tuple[int, int]]:
    """Where each top-level statement's code is in the module's (blank lines and comments above
    it included): a codegen of each, which costs a fraction of the positions of the whole tree."""
    at = sum(len(module.code_for_node(line)) for line in module.header)  # comments above the first statement
    ranges = []
    for statement in module.body:
        end = at + len(module.code_for_node(statement))
        ranges.append((at, end))
        at = end
    # A file without a final newline: the last statement's code has one the text lacks. Any other
    # difference shows in the rewrite's check against the edits' text.
    return ranges


def _targets(text: str, module: cst.Module, statements: list[int], ranges: list[tuple[int, int]]) -> list[_Target]:
    """The nodes an edit may rewrite in the top-level statements ``statements``, smallest first.
    Positions are computed for those statements only, each as a module of its own."""
    targets: list[_Target] = []
    for index in statements:
        start, end = ranges[index]
        alone = module.with_changes(header=(), body=(module.body[index],), footer=())
        collect = _Collect(text[start:end], module, start)
        MetadataWrapper(alone, unsafe_skip_copy=True).visit(collect)
        targets.extend(collect.targets)
    return sorted(targets, key=lambda target: target.size)


def _rewrite_nodes(text: str, module: cst.Module, edits: Sequence[Edit]) -> cst.Module:
    ranges = _statements(module)
    if not ranges:
        raise NotApplicable("the file has no statement to rewrite")
    touched = sorted({i for e in edits for i, (start, end) in enumerate(ranges) if start <= e.end and e.start <= end})
    targets = _targets(text, module, touched, ranges)
    chosen: list[_Target] = []
    for edit in edits:
        target = next((t for t in targets if t.holds(edit.start, edit.end)), None)
        if target is None:
            raise NotApplicable(
                f"the edit at offset {edit.start} is not inside one expression, statement or decorator list"
            )
        if target not in chosen:
            chosen.append(target)
        target.edits.append(edit)
    for _ in range(MAX_WIDENINGS * len(chosen)):
        chosen = _merged(chosen)
        rewritten = {target.node: _parsed(text, target, module.default_newline) for target in chosen}
        failed = next((t for t in chosen if rewritten[t.node] is None), None)
        if failed is None:
            replace = _Replace(rewritten)  # type: ignore[arg-type]  # every value is a node here
            body = list(module.body)
            for index in touched:
                body[index] = body[index].visit(replace)  # type: ignore[assignment]  # a statement visits to one
            return module.with_changes(body=body)
        wider = next((t for t in targets if t.encloses(failed)), None)
        if wider is None:
            break
        wider.edits.extend(failed.edits)
        failed.edits = []
        chosen = [wider if t is failed else t for t in chosen]
    raise NotApplicable("the edited code does not parse as the node it rewrites")


def _merged(chosen: list[_Target]) -> list[_Target]:
    """The targets with every one inside another folded into it (its edits rewritten there)."""
    kept = []
    for target in chosen:
        outer = next((o for o in chosen if o.encloses(target)), None)
        if outer is None:
            kept.append(target)
        else:
            outer.edits.extend(e for e in target.edits if e not in outer.edits)
            target.edits = []
    return kept


def _spliced(text: str, target: _Target) -> str:
    """``target``'s text with its edits made."""
    shift = target.start
    return apply_edits(
        text[shift : target.end], [Edit(e.start - shift, e.end - shift, e.content) for e in target.edits]
    )


class _NotThisKind(Exception):
    pass


def _parsed(text: str, target: _Target, newline: str) -> cst.CSTNode | None:
    """``target``'s edited text parsed as its kind of node, or None when it is not one. It is
    parsed where it stands: in a block of its indentation, so the whitespace of its continuation
    lines means what it meant (libcst keeps it relative to the block)."""
    code = _spliced(text, target)
    try:
        if target.kind == "decorators":
            return _decorated(code, target.indent, newline)
        statement = _in_block(f"({code})" if target.kind == "expression" else code, target.indent, newline)
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or statement.leading_lines:
            return None
        if statement.trailing_whitespace.comment is not None:
            return None  # a comment the edit put after the node would be lost with the stand-in's line
        new = statement.body[0]
        if target.kind == "expression":
            if not isinstance(new, cst.Expr):
                return None
            value = new.value  # the stand-in's parentheses are its outermost pair; the node's own are outside its range
            old = target.node
            if isinstance(value, cst.Tuple) and len(value.lpar) == 1 and not isinstance(old, cst.Tuple):
                return None  # ``"reason", message`` is two arguments of the call around it, not a tuple
            return value.with_changes(lpar=[*old.lpar, *value.lpar[1:]], rpar=[*value.rpar[:-1], *old.rpar])  # type: ignore[attr-defined]  # the replaced node is an expression: it has parentheses
        semicolon = getattr(target.node, "semicolon", None)
        return new.with_changes(semicolon=semicolon) if semicolon is not None else new
    except (cst.ParserSyntaxError, _NotThisKind):
        return None


def _in_block(code: str, indent: str, newline: str) -> cst.BaseStatement:
    """``code`` parsed as the one statement of a block indented by ``indent``."""
    if not indent:
        parsed = cst.parse_module(f"{code}{newline}")
        if len(parsed.body) != 1:
            raise _NotThisKind
        return parsed.body[0]
    parsed = cst.parse_module(f"if 1:{newline}{indent}{code}{newline}")
    block = parsed.body[0]
    if len(parsed.body) != 1 or not isinstance(block, cst.If) or len(block.body.body) != 1:
        raise _NotThisKind
    return block.body.body[0]  # type: ignore[return-value]  # an indented block's body holds statements


def _decorated(code: str, indent: str, newline: str) -> cst.FunctionDef:
    """The decorator lines ``code`` parsed as the decorators of a stand-in ``def`` at their indentation."""
    statement = _in_block(f"{code.removeprefix(indent)}{indent}def _():{newline}{indent}    pass", indent, newline)
    if not isinstance(statement, cst.FunctionDef):
        raise _NotThisKind
    return statement


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]):
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]  # libcst's visitor protocol
        new = self.replacements.get(original_node)
        if new is None:
            return updated_node
        if isinstance(new, cst.FunctionDef):  # a decorator list: the rest of the (updated) definition stays
            return updated_node.with_changes(
                decorators=new.decorators, lines_after_decorators=new.lines_after_decorators
            )
        return new
