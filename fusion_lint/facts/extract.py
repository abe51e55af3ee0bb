"""From one module's CPython tree to its ``FileFacts`` (DESIGN §2.1, §4).

Two passes over the module's statements: the first learns what each name means (``names``), the
second records the module-level bindings, the definitions and every function's facts. The tree is
the one the gate built (``source.gate_tree``): the file is parsed once. Spans are computed as they
are handed out (``positions``). The extractor records what the code is; the rules decide what it
means.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from fusion_lint.facts.bodies import FACTORY_FOR_CODE, FunctionWalker
from fusion_lint.facts.classes import class_facts
from fusion_lint.facts.definitions import LISTED_TOOL_CLASSES, Definitions
from fusion_lint.facts.helpers import template
from fusion_lint.facts.model import FileFacts, FileNames, FromImport, FunctionFacts, ImportedName
from fusion_lint.facts.names import Names, Scope
from fusion_lint.facts.positions import Cursor, SpanRegistry
from fusion_lint.facts.syntax import args_of, name_value
from fusion_lint.facts.values import Values

DRAFT_NAMES = ("contract", "ErrorContract", "JsonRpcErrorCode")  # what a drafted contract names
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class ModuleExtractor:
    """Builds ``FileFacts`` for one module; see ``extract``."""

    def __init__(
        self,
        path: str,
        module_name: str,
        is_package: bool,
        runtime_modules: Sequence[str],
        source: str,
        light: bool = False,
    ):
        self.facts = FileFacts(path=path, module=module_name)
        self.light = light  # skip the bodies that cannot add to the module's facts (``_inert``)
        self.spans = SpanRegistry(source)
        self.names = Names(self.facts, module_name, is_package, runtime_modules)
        self.names.is_suite = self.spans.is_suite
        self.values = Values(self.names, self.spans)
        self.definitions = Definitions(self.facts, self.names, self.values)
        self.needs_names = False  # a fix may add a name to this file (``FileNames``)

    def run(self, module: ast.Module) -> FileFacts:
        statements = list(self._flatten(module.body))
        for stmt, _ in statements:  # pass 1: what names mean
            self.names.declare(stmt)
        for stmt, at in statements:  # pass 2: bindings, definitions, functions
            if isinstance(stmt, _FUNCTIONS):
                self.function(stmt, prefix="", outer=None, at=at)  # type: ignore[arg-type]  # a def: isinstance(stmt, _FUNCTIONS) (FunctionDef, AsyncFunctionDef), walked alike
            elif type(stmt) is ast.ClassDef:
                self._class(stmt, at)
            else:
                self._module_statement(stmt, at)
        self.facts.runtime_names = self.names.runtime_exports()
        self.facts.imported_modules = tuple(sorted(self.names.imported))
        self.facts.imports_framework = self.names.imports_framework
        if any(d.server is not None and d.errors is None and d.contract_span is None for d in self.facts.definitions):
            self.needs_names = True  # FL208's fix may add ``@contract`` and its import
        return self.facts

    def _class(self, stmt: ast.ClassDef, at: Cursor) -> None:
        """A module-level class: its bases, the attributes it stores the context in, its
        attributes (``Class.NAME`` bindings: enum members, contracts) and its methods. Its body
        and its methods' decorators see the names it binds (Python's class scope)."""
        name = stmt.name
        body = list(self._flatten(stmt.body)) if not self.spans.is_suite(stmt.body) else []
        methods = [inner for inner, _ in body if isinstance(inner, _FUNCTIONS)]
        self.facts.classes[name] = class_facts(stmt, methods, self.names, self.facts.classes)  # type: ignore[arg-type]  # stmt is a ClassDef (type(stmt) is ast.ClassDef before the call); methods are defs of either kind
        scope = {
            target: f"{self.names.module_name}.{name}.{target}"
            for inner, _ in body
            for target in _assigned_names(inner)
        }
        self.values.scope = scope or None
        try:
            for inner, line in body:
                if isinstance(inner, _FUNCTIONS):
                    self.function(inner, prefix=name + ".", outer=None, at=line)  # type: ignore[arg-type]  # a def: isinstance(inner, _FUNCTIONS) (FunctionDef, AsyncFunctionDef), walked alike
                elif type(inner) not in _COMPOUND_TYPES:
                    targets = list(_assigned_names(inner))
                    binding = self.values.binding(inner.value, line) if targets else None  # type: ignore[attr-defined]  # a simple statement binding targets: an assignment (only they have targets)
                    for target in targets if binding is not None else ():
                        self.facts.bindings[f"{name}.{target}"] = binding  # type: ignore[assignment]  # not None: the loop runs only then
        finally:
            self.values.scope = None

    def _module_statement(self, stmt: ast.stmt, at: Cursor) -> None:
        kind = type(stmt)
        if kind in _COMPOUND_TYPES:
            self.definitions.scan_module_expression(stmt, at)
            return
        if kind is ast.Import or kind is ast.ImportFrom:
            return
        value = None
        if kind is ast.Assign:
            value = stmt.value  # type: ignore[attr-defined]  # kind is ast.Assign above; mypy does not narrow through kind = type(...)
            for target in stmt.targets:  # type: ignore[attr-defined]  # kind is ast.Assign above; mypy does not narrow through kind = type(...)
                if type(target) is ast.Name and target.id not in self.names.aliases:
                    binding = self.values.binding(value, at)
                    if binding is not None:
                        self.facts.bindings[target.id] = binding
        elif kind is ast.AnnAssign and stmt.value is not None:  # type: ignore[attr-defined]  # kind is ast.AnnAssign and stmt.value is not None; mypy does not narrow through kind = type(...)
            value = stmt.value  # type: ignore[attr-defined]  # kind is ast.AnnAssign and stmt.value is not None above; mypy does not narrow through kind = type(...)
            if type(stmt.target) is ast.Name:  # type: ignore[attr-defined]  # kind is ast.AnnAssign above; mypy does not narrow through kind = type(...)
                binding = self.values.binding(value, at)
                if binding is not None:
                    self.facts.bindings[stmt.target.id] = binding  # type: ignore[attr-defined]  # kind is ast.AnnAssign and its target an ast.Name, above
        elif kind is ast.Expr:
            value = stmt.value  # type: ignore[attr-defined]  # kind is ast.Expr above; mypy does not narrow through kind = type(...)
        if value is not None:
            self.definitions.scan_module_expression(value, at)

    def function(self, node: ast.FunctionDef, prefix: str, outer: FunctionWalker | None, at: Cursor) -> None:
        qualname = prefix + node.name
        here = self.spans.line_of(node)
        facts = FunctionFacts(qualname=qualname, span=self.spans.def_name(node, here))
        self.facts.functions[qualname] = facts
        self._decorators(node, qualname, outer)
        walker = FunctionWalker(self, node, facts, outer)  # (its signature: parameters, context)
        if self.light and self._inert(node):
            self.facts.light = True
            return
        class_scope, self.values.scope = self.values.scope, None  # a body does not see its class's names
        try:
            walker.block(node.body, here)
        finally:
            self.values.scope = class_scope

    def _decorators(self, node: ast.FunctionDef, qualname: str, outer: FunctionWalker | None) -> None:
        """The definitions a function's decorators make: the runtime's ``@tool(...)``, a framework's
        ``@server.tool(...)`` (with the ``@contract(...)`` among them, above or below it)."""
        scope = outer.scope if outer else None
        registrations = []
        helper_calls = []  # ``@helper(server, "x")``: maybe a registration helper (``facts.helpers``)
        contract = None
        if any(
            type(d) is ast.Call and self.names.qualify(d.func, scope) == "functools.wraps" for d in node.decorator_list
        ):
            self.definitions.wraps_kept.add(qualname)
        for index, expression in enumerate(node.decorator_list):
            decorated_at = self.spans.line_of(expression)  # the decorator's own line (``@`` is on it)
            registration = self.definitions.registration(expression, outer)
            if registration is not None and registration.server.ref is not None and _declares_errors(expression):
                registration = None  # ``api.tool("b", errors=[])``: the runtime's signature, re-exported
            if registration is not None:
                registration.extra["template"] = template(self.definitions, registration, None, qualname, outer)
                if registration.extra["template"] is None and registration.extra.get("param_only"):
                    registration = None
            kind, assumes = self.definitions.definer(expression, scope) if registration is None else (None, ())
            if kind is not None:
                self.definitions.record(kind, expression, decorated_at, qualname, None, assumes)  # type: ignore[arg-type]  # a decorator definer() recognised: a call
                continue
            if registration is not None:
                registrations.append((index, registration, decorated_at))
            elif self.definitions.contract_call(expression, scope) is not None:
                contract = (index, expression, decorated_at)
            elif type(expression) is ast.Call:
                helper_calls.append((index, expression, decorated_at))
            if outer is not None:
                outer.expression(expression, decorated_at)
            else:
                self.definitions.scan_module_expression(expression, decorated_at)
        if contract is not None and not registrations:
            self.definitions.contracted[qualname] = (contract[1], contract[2])  # type: ignore[assignment]  # the contract decorator is a call: contract_call() found it
        self._wrappers(node, qualname, scope, registrations[0][0] if registrations else -1)
        for index, registration, decorated_at in registrations:
            call = contract[1] if contract is not None else None
            self.definitions.record(
                registration.kind,
                registration.call,
                decorated_at,
                qualname,
                None,
                (),
                node=registration.node,
                name_node=registration.name_node,
                fallback_name=node.name,
                server=registration.server,
                dispatcher=registration.dispatcher,
                contract=call,  # type: ignore[arg-type]  # the contract decorator is a call: contract_call() found it
                contract_above=contract is not None and contract[0] < index,
                template=registration.extra["template"],
            )
        for index, expression, decorated_at in helper_calls if not registrations else ():
            self.definitions.helper_call(
                expression,
                None,
                decorated_at,
                scope,
                outer,
                handler=qualname,
                shown=node.name,
                contract=contract[1] if contract else None,  # type: ignore[arg-type]  # the contract decorator is a call: contract_call() found it
                contract_above=contract is not None and contract[0] < index,
            )

    def _wrappers(self, node: ast.FunctionDef, qualname: str, scope: Scope | None, registered_at: int) -> None:
        """The plain decorators (``@name``, ``@module.name``) below the registering one, or all of
        them when the function is registered elsewhere: what the framework calls wraps them."""
        facts = self.facts.functions[qualname]
        for decorator in node.decorator_list[registered_at + 1 :]:
            if type(decorator) is ast.Attribute or name_value(decorator) is not None:
                qname = self.names.qualify(decorator, scope)
                if qname is not None:
                    facts.decorated_by.append(qname)

    def _inert(self, node: ast.FunctionDef) -> bool:
        """Whether a function's body can add nothing to the module's facts, only to the function's
        own: its text spells nothing a definition, a registration helper, a listing or a mount is
        made of (``definitions.call_form`` and nested ``def``s are the only ways a body adds to the
        module; a call of a call is how every ``x(...)(fn)`` form is written). When unsure, walk."""
        if not node.body:
            return True
        first = node.body[0]
        start = self.spans.offset(first.lineno, first.col_offset)
        end = self.spans.offset(node.end_lineno or first.lineno, node.end_col_offset or 0)
        body = self.spans.text[start:end]
        if not body.isascii():  # NFKC: ``ｔｏｏｌ`` is ``tool``; spelling proves nothing here
            return False
        if any(needle in body for needle in _ACTIVE_NEEDLES) or _CALL_OF_CALL.search(body) is not None:
            return False
        listed = [local for local, qname in self.names.aliases.items() if qname in LISTED_TOOL_CLASSES]
        return not any(re.search(rf"(?<!\w){re.escape(local)}(?!\w)", body) for local in listed)

    def file_names(self, tree: ast.Module, text: str) -> FileNames | None:
        """``FileNames`` from CPython's tree, for a file a fix may add a name to: the factories its
        ``McpError(...)`` calls would become, and the names it imports from the runtime (how a fix
        would name the factory)."""
        if not self.needs_names:
            return None
        factories = {
            FACTORY_FOR_CODE[made.code] for facts in self.facts.functions.values() for made in facts.constructions
        }
        modules = {m for name in self.names.runtime_modules for m in (name, f"{name}.errors")}
        wanted = (
            factories
            | set(DRAFT_NAMES)
            | {
                local
                for local, qname in self.names.aliases.items()
                if qname in modules or (qname.rpartition(".")[2] in factories and self.names.is_runtime(qname))
            }
        )
        return file_names(tree, text, wanted)

    def _flatten(self, body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, Cursor]]:
        """Module-level statements with their lines, looking through ``if``/``try``/``with`` blocks
        (TYPE_CHECKING, import fallbacks, a ``with`` around registrations); a block written on its
        header's line is not looked into."""
        for stmt, line in zip(body, self.spans.statement_lines(body)):
            kind = type(stmt)
            if kind is ast.If or kind is ast.Try or kind is ast.With:
                blocks = [stmt.body]  # type: ignore[attr-defined]  # kind is ast.If or kind is ast.Try or kind is ast.With above; mypy does not narrow through kind = type(...)
                if kind is ast.Try:
                    blocks += [h.body for h in stmt.handlers]  # type: ignore[attr-defined]  # kind is ast.Try above; mypy does not narrow through kind = type(...)
                    blocks += [b for b in (stmt.orelse, stmt.finalbody) if b]  # type: ignore[attr-defined]  # kind is ast.Try above; mypy does not narrow through kind = type(...)
                elif kind is ast.If:
                    orelse = stmt.orelse  # type: ignore[attr-defined]  # kind is ast.If above; mypy does not narrow through kind = type(...)
                    while orelse:
                        if len(orelse) == 1 and type(orelse[0]) is ast.If and _is_elif(self.spans, orelse[0]):
                            blocks.append(orelse[0].body)
                            orelse = orelse[0].orelse
                        else:
                            blocks.append(orelse)
                            break
                for block in blocks:
                    if not self.spans.is_suite(block):
                        yield from self._flatten(block)
            else:
                yield stmt, line


# What a body that adds to its module's facts must spell (``ModuleExtractor._inert``): a nested
# ``def``/``class``/``lambda`` or decorator, an import statement, a registering method or keyword (``.tool``, ``add_tool``,
# ``on_call_tool``, ``.prompt``, ``.resource``, ``from_function``, ``.mount``), the ``Tool`` a
# low-level server lists, or a call of a call (``x(...)(fn)``, comments and continuations between).
# Substrings, not words: a false alarm only costs the walk.
_ACTIVE_NEEDLES = (
    "def",
    "class",
    "lambda",
    "@",
    "tool",
    "Tool",
    "prompt",
    "resource",
    "from_function",
    "mount",
    "import",
)  # (a body's import is the module's too: ``Names.imported``, ``imports_framework``)
_CALL_OF_CALL = re.compile(r"\)[\s\\]*(?:#[^\r\n]*[\s\\]*)*\(")


_TRY_TYPES = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_COMPOUND_TYPES = frozenset(
    {
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.If,
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.With,
        ast.AsyncWith,
        *_TRY_TYPES,
        ast.Match,
    }
)


def _is_elif(spans: SpanRegistry, node: ast.If) -> bool:
    """Whether an ``if`` alone in an else block is an ``elif`` (its keyword starts with ``el``)."""
    return spans.text.startswith("elif", spans.offset(node.lineno, node.col_offset))


def _assigned_names(small: ast.stmt) -> Iterator[str]:
    """The plain names a small statement assigns a value to (``A = ...``, ``A: T = ...``)."""
    if type(small) is ast.Assign:
        for target in small.targets:
            if type(target) is ast.Name:
                yield target.id
    elif type(small) is ast.AnnAssign and small.value is not None and type(small.target) is ast.Name:
        yield small.target.id


# ----- the names a fix may add ---------------------------------------------------------------------

# Only these node types bind names: the walk skips the type test for every other node.
_BINDING_TYPES = (
    ast.Name,
    ast.arg,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    ast.MatchMapping,
)


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


def file_names(tree: ast.Module, source: str, wanted: set[str] | None = None) -> FileNames:
    """How often each of the ``wanted`` names (all, when None) is bound anywhere in the file, and its
    top-level ``from`` imports with the offsets of their names (CPython's tree, already built by the
    gate: no second parse). Every binding is a token spelling the name, so in an ASCII text where no
    wanted name stands as a word the counts are all 0 without walking the tree; elsewhere
    (non-ASCII identifiers are NFKC-normalized, so spelling proves nothing) the tree is walked."""
    bound: Counter[str] = Counter()
    if (
        wanted is None
        or not source.isascii()
        or any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", source) for n in wanted)
    ):
        for node in ast.walk(tree):
            if isinstance(node, _BINDING_TYPES):
                for name in _binding_names(node):
                    if wanted is None or name in wanted:
                        bound[name] += 1
    starts = _line_starts(source)
    imports = []
    import_end = 0
    leading = True  # still in the leading import block (a late import is no place for a new one)
    for index, node in enumerate(tree.body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        leading = leading and (docstring or isinstance(node, (ast.Import, ast.ImportFrom)))
        if leading:
            last = node.end_lineno or node.lineno
            import_end = starts[last] if last < len(starts) else len(source)
        if not isinstance(node, ast.ImportFrom):
            continue
        star = node.names[0].name == "*"
        names: list[ImportedName] = []
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
    tree: ast.Module,
    path: str,
    module_name: str,
    is_package: bool,
    runtime_modules: Sequence[str],
    source: str,
    light: bool = False,
) -> FileFacts:
    """Facts of one module from CPython's tree of it, with the spans of everything that may be reported.

    ``light``: for a file a partial run only reads (never reports or fixes): the bodies that cannot
    add to the module's facts are not walked, and the names a fix would need are not gathered."""
    extractor = ModuleExtractor(path, module_name, is_package, runtime_modules, source, light)
    facts = extractor.run(tree)
    if not light:
        facts.names = extractor.file_names(tree, source)
    return facts


def _declares_errors(expression: ast.expr) -> bool:
    """Whether a decorator passes ``errors=``: the runtime's definers take it, no framework's ``tool`` does."""
    return type(expression) is ast.Call and any(arg.keyword == "errors" for arg in args_of(expression))
