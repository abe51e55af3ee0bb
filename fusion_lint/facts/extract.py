"""From one libcst module to its ``FileFacts`` (DESIGN §2.1, §4).

Two passes over the module's statements: the first learns what each name means (``names``), the
second records the module-level bindings, the definitions and every function's facts. Spans are
handed out as placeholders and placed in one pass at the end (``positions``), only for what was
registered. The extractor records what the code is; the rules decide what it means.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Iterable, Iterator, Optional, Sequence

import libcst as cst

from ..positions import Cursor, SpanRegistry
from .bodies import FACTORY_FOR_CODE, FunctionWalker
from .classes import class_facts
from .definitions import Definitions
from .helpers import template
from .model import FileFacts, FileNames, FromImport, FunctionFacts, ImportedName
from .names import Names
from .values import Values

DRAFT_NAMES = ("contract", "ErrorContract", "JsonRpcErrorCode")  # what a drafted contract names


class ModuleExtractor:
    """Builds ``FileFacts`` for one module; see ``extract``."""

    def __init__(self, path: str, module_name: str, is_package: bool, runtime_modules: Sequence[str]):
        self.facts = FileFacts(path=path, module=module_name)
        self.spans = SpanRegistry()
        self.names = Names(self.facts, module_name, is_package, runtime_modules)
        self.values = Values(self.names, self.spans)
        self.definitions = Definitions(self.facts, self.names, self.values)
        self.needs_names = False  # a fix may add a name to this file (``FileNames``)

    def run(self, module: cst.Module) -> FileFacts:
        statements = list(_flatten(module.body))
        for stmt in statements:  # pass 1: what names mean
            self.names.declare(stmt)
        top_level = {id(stmt) for stmt in module.body}
        for stmt in statements:  # pass 2: bindings, definitions, functions
            # A statement inside a module-level if/try is placed by rendering the whole module.
            at = Cursor(stmt, stmt if id(stmt) in top_level else None)
            if isinstance(stmt, cst.FunctionDef):
                self.function(stmt, prefix="", outer=None, at=at, top=id(stmt) in top_level)
            elif isinstance(stmt, cst.ClassDef):
                self._class(stmt, at)
            else:
                self._module_statement(stmt, at)
        self.facts.runtime_names = self.names.runtime_exports()
        self.facts.imports_framework = self.names.imports_framework
        if any(d.server is not None and d.errors is None and d.contract_span is None for d in self.facts.definitions):
            self.needs_names = True  # FL208's fix may add ``@contract`` and its import
        return self.facts

    def _class(self, stmt: cst.ClassDef, at: Cursor) -> None:
        """A module-level class: its bases, the attributes it stores the context in, its
        attributes (``Class.NAME`` bindings: enum members, contracts) and its methods. Its body
        and its methods' decorators see the names it binds (Python's class scope)."""
        name = stmt.name.value
        body = list(_flatten(stmt.body.body)) if isinstance(stmt.body, cst.IndentedBlock) else []
        methods = [inner for inner in body if isinstance(inner, cst.FunctionDef)]
        self.facts.classes[name] = class_facts(stmt, methods, self.names, self.facts.classes)
        scope = {target: f"{self.names.module_name}.{name}.{target}"
                 for inner in body if isinstance(inner, cst.SimpleStatementLine)
                 for small in inner.body for target in _assigned_names(small)}  # fmt: skip
        self.values.scope = scope or None
        try:
            for inner in body:
                if isinstance(inner, cst.FunctionDef):
                    self.function(inner, prefix=name + ".", outer=None, at=at.inside(inner))
                elif isinstance(inner, cst.SimpleStatementLine):
                    for small in inner.body:
                        targets = list(_assigned_names(small))
                        binding = self.values.binding(small.value, at.inside(inner)) if targets else None  # type: ignore[attr-defined]
                        for target in targets if binding is not None else ():
                            self.facts.bindings[f"{name}.{target}"] = binding
        finally:
            self.values.scope = None

    def _module_statement(self, stmt: cst.CSTNode, at: Cursor) -> None:
        if not isinstance(stmt, cst.SimpleStatementLine):
            if not isinstance(stmt, (cst.Import, cst.ImportFrom)):
                self.definitions.scan_module_expression(stmt, at)
            return
        for small in stmt.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                continue
            value = None
            if isinstance(small, cst.Assign):
                value = small.value
                for target in small.targets:
                    if isinstance(target.target, cst.Name) and target.target.value not in self.names.aliases:
                        binding = self.values.binding(value, at)
                        if binding is not None:
                            self.facts.bindings[target.target.value] = binding
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                value = small.value
                if isinstance(small.target, cst.Name):
                    binding = self.values.binding(value, at)
                    if binding is not None:
                        self.facts.bindings[small.target.value] = binding
            elif isinstance(small, cst.Expr):
                value = small.value
            if value is not None:
                self.definitions.scan_module_expression(value, at)

    def function(
        self, node: cst.FunctionDef, prefix: str, outer: Optional[FunctionWalker], at: Cursor, top: bool = False
    ) -> None:
        """``top``: a function of the module body itself, whose decorators and body statements the
        positions pass renders one by one (its name is placed from CPython's tree)."""
        qualname = prefix + node.name.value
        here = Cursor(at.stmt, node) if top else at
        facts = FunctionFacts(qualname=qualname, span=self.spans.at(node.name, here))
        self.facts.functions[qualname] = facts
        self._decorators(node, qualname, outer, here, top)
        walker = FunctionWalker(self, node, facts, outer)
        class_scope, self.values.scope = self.values.scope, None  # a body does not see its class's names
        try:
            if top and isinstance(node.body, cst.IndentedBlock):
                for stmt in node.body.body:
                    walker.statement(stmt, Cursor(here.stmt, stmt))
            else:
                walker.block(node.body, here)
        finally:
            self.values.scope = class_scope

    def _decorators(self, node: cst.FunctionDef, qualname: str, outer: Optional[FunctionWalker], here: Cursor,
                    top: bool) -> None:  # fmt: skip
        """The definitions a function's decorators make: the runtime's ``@tool(...)``, a framework's
        ``@server.tool(...)`` (with the ``@contract(...)`` among them, above or below it)."""
        scope = outer.scope if outer else None
        registrations = []
        helper_calls = []  # ``@helper(server, "x")``: maybe a registration helper (``facts.helpers``)
        contract = None
        if any(isinstance(d.decorator, cst.Call) and self.names.qualify(d.decorator.func, scope) == "functools.wraps"
               for d in node.decorators):  # fmt: skip
            self.definitions.wraps_kept.add(qualname)
        for index, decorator in enumerate(node.decorators):
            expression = decorator.decorator
            decorated_at = Cursor(decorator, decorator if top else here.unit)
            registration = self.definitions.registration(expression, outer)
            if registration is not None and registration.server.ref is not None and _declares_errors(expression):
                registration = None  # ``api.tool("b", errors=[])``: the runtime's signature, re-exported
            if registration is not None:
                registration.extra["template"] = template(self.definitions, registration, None, qualname, outer)
                if registration.extra["template"] is None and registration.extra.get("param_only"):
                    registration = None
            kind, assumes = self.definitions.definer(expression, scope) if registration is None else (None, ())
            if kind is not None:
                assert isinstance(expression, cst.Call)
                self.definitions.record(kind, expression, decorated_at, qualname, None, assumes)
                continue
            if registration is not None:
                registrations.append((index, registration, decorated_at))
            elif self.definitions.contract_call(expression, scope) is not None:
                contract = (index, expression, decorated_at)
            elif isinstance(expression, cst.Call):
                helper_calls.append((index, expression, decorated_at))
            if outer is not None:
                outer.expression(expression, decorated_at)
            else:
                self.definitions.scan_module_expression(expression, decorated_at)
        if contract is not None and not registrations:
            self.definitions.contracted[qualname] = (contract[1], contract[2])
        self._wrappers(node, qualname, scope, registrations[0][0] if registrations else -1)
        for index, registration, decorated_at in registrations:
            call = contract[1] if contract is not None else None
            self.definitions.record(registration.kind, registration.call, decorated_at, qualname, None, (),
                                    node=registration.node, name_node=registration.name_node,
                                    fallback_name=node.name.value, server=registration.server,
                                    dispatcher=registration.dispatcher, contract=call,
                                    contract_above=contract is not None and contract[0] < index,
                                    template=registration.extra["template"])  # fmt: skip
        for index, expression, decorated_at in helper_calls if not registrations else ():
            self.definitions.helper_call(expression, None, decorated_at, scope, outer, handler=qualname,
                                         shown=node.name.value, contract=contract[1] if contract else None,
                                         contract_above=contract is not None and contract[0] < index)  # fmt: skip

    def _wrappers(self, node: cst.FunctionDef, qualname: str, scope, registered_at: int) -> None:
        """The plain decorators (``@name``, ``@module.name``) below the registering one, or all of
        them when the function is registered elsewhere: what the framework calls wraps them."""
        facts = self.facts.functions[qualname]
        for decorator in node.decorators[registered_at + 1:]:
            if isinstance(decorator.decorator, (cst.Name, cst.Attribute)):
                qname = self.names.qualify(decorator.decorator, scope)
                if qname is not None:
                    facts.decorated_by.append(qname)

    def file_names(self, tree: Optional[ast.Module], text: str) -> Optional[FileNames]:
        """``FileNames`` from CPython's tree (the gate's, when given), for a file a fix may add a name
        to: the factories its ``McpError(...)`` calls would become, and the names it imports from
        the runtime (how a fix would name the factory)."""
        if not self.needs_names:
            return None
        factories = {FACTORY_FOR_CODE[made.code] for facts in self.facts.functions.values() for made in facts.constructions}
        modules = {m for name in self.names.runtime_modules for m in (name, f"{name}.errors")}
        wanted = factories | set(DRAFT_NAMES) | {
            local for local, qname in self.names.aliases.items()
            if qname in modules or (qname.rpartition(".")[2] in factories and self.names.is_runtime(qname))
        }  # fmt: skip
        return file_names(tree if tree is not None else ast.parse(text), text, wanted)


def _assigned_names(small: cst.CSTNode) -> Iterator[str]:
    """The plain names a small statement assigns a value to (``A = ...``, ``A: T = ...``)."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                yield target.target.value
    elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
        yield small.target.value


def _flatten(body: Iterable[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """Module-level statements, looking through ``if``/``try``/``with`` blocks (TYPE_CHECKING,
    import fallbacks, a ``with`` around registrations)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            blocks: list[cst.CSTNode] = [stmt.body]
            if isinstance(stmt, cst.Try):
                blocks += [h.body for h in stmt.handlers]
                blocks += [b.body for b in (stmt.orelse, stmt.finalbody) if b is not None]
            elif isinstance(stmt, cst.If):
                orelse = stmt.orelse
                while orelse is not None:
                    blocks.append(orelse.body)
                    orelse = orelse.orelse if isinstance(orelse, cst.If) else None
            for block in blocks:
                if isinstance(block, cst.IndentedBlock):
                    yield from _flatten(block.body)
        else:
            yield stmt


# ----- the names a fix may add ---------------------------------------------------------------------

# Only these node types bind names: the walk skips the type test for every other node.
_BINDING_TYPES = (
    ast.Name, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
    ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
)  # fmt: skip


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


def file_names(tree: ast.Module, source: str, wanted: Optional[set[str]] = None) -> FileNames:
    """How often each of the ``wanted`` names (all, when None) is bound anywhere in the file, and its
    top-level ``from`` imports with the offsets of their names (CPython's tree, already built by the
    gate: no second parse). Every binding is a token spelling the name, so in an ASCII text where no
    wanted name stands as a word the counts are all 0 without walking the tree; elsewhere
    (non-ASCII identifiers are NFKC-normalized, so spelling proves nothing) the tree is walked."""
    bound: Counter = Counter()
    if wanted is None or not source.isascii() or any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", source) for n in wanted):
        for node in ast.walk(tree):
            if isinstance(node, _BINDING_TYPES):
                for name in _binding_names(node):
                    if wanted is None or name in wanted:
                        bound[name] += 1
    starts = _line_starts(source)
    imports = []
    import_end = 0
    for index, node in enumerate(tree.body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if docstring or isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node.end_lineno or node.lineno
            import_end = starts[last] if last < len(starts) else len(source)
        if not isinstance(node, ast.ImportFrom):
            continue
        star = node.names[0].name == "*"
        names = []
        for alias in node.names:
            if getattr(alias, "lineno", None) is None:  # CPython before 3.10 gave aliases no position
                names = []
                break
            start = _offset(source, starts, alias.lineno, alias.col_offset)
            end = _offset(source, starts, alias.end_lineno or alias.lineno, alias.end_col_offset or 0)
            names.append(ImportedName(alias.name, alias.asname, start, end, alias.lineno))
        imports.append(FromImport(node.module, node.level, tuple(names), node.lineno, star))
    return FileNames(tuple(imports), dict(bound), import_end)


def _line_starts(text: str) -> list[int]:
    """Where each line starts, as CPython counts lines (``\n``, ``\r\n`` and ``\r``)."""
    return [0, *(match.end() for match in re.finditer(r"\r\n|\r|\n", text))]


def _offset(text: str, line_starts: list[int], line: int, byte_col: int) -> int:
    """An ``ast`` position (1-based line, UTF-8 byte column) as an offset into ``text``."""
    start = line_starts[line - 1]
    end = line_starts[line] if line < len(line_starts) else len(text)
    line_text = text[start:end]
    return start + len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def extract(
    module: cst.Module,
    path: str,
    module_name: str,
    is_package: bool,
    runtime_modules: Sequence[str],
    source: Optional[str] = None,
    tree: Optional[ast.Module] = None,
) -> tuple[FileFacts, str]:
    """Facts of one parsed module, with the spans of everything that may be reported filled in."""
    extractor = ModuleExtractor(path, module_name, is_package, runtime_modules)
    facts = extractor.run(module)
    text = extractor.spans.resolve(module, source, tree)
    facts.names = extractor.file_names(tree, text)
    return facts, text


def _declares_errors(expression: cst.BaseExpression) -> bool:
    """Whether a decorator passes ``errors=``: the runtime's definers take it, no framework's ``tool`` does."""
    return isinstance(expression, cst.Call) and any(
        arg.keyword is not None and arg.keyword.value == "errors" for arg in expression.args
    )
