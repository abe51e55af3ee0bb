"""From one libcst module to its ``FileFacts`` (DESIGN §4).

One pass over the statements that matter: imports and module-level bindings build our own alias
table (no ``QualifiedNameProvider``), decorators and ``tool(...)(fn)`` calls give the definitions,
and every function body is walked once for the handler facts. The walk skips whitespace and
punctuation fields entirely, which is what keeps it at a few percent of the parse.
"""
from __future__ import annotations

import ast
import dataclasses
import sys
from typing import Iterable, Iterator, Optional, Sequence, Union

import libcst as cst

from mcp_fusion import FACTORY_CODES

from .model import (
    Assumptions,
    BadExpr,
    BadItem,
    Binding,
    ConcatExpr,
    Construction,
    ContractExpr,
    Definition,
    Entry,
    EntryField,
    EntryItem,
    ExceptClause,
    FailSite,
    FileFacts,
    FunctionFacts,
    Item,
    ListExpr,
    RaiseSite,
    RefExpr,
    RefItem,
    Span,
    SpreadItem,
    Value,
    is_runtime,
)
from .positions import SpanRegistry

DEFINERS = ("tool", "resource", "prompt")
RUNTIME_API = frozenset(
    {*DEFINERS, "ErrorContract", "McpError", "JsonRpcErrorCode", "Context", "tool_error", *FACTORY_CODES}
)
BUILTIN_EXCEPTIONS = frozenset(
    {
        "Exception", "RuntimeError", "ValueError", "KeyError", "LookupError", "OSError", "IOError",
        "PermissionError", "FileNotFoundError", "TimeoutError", "ConnectionError",
    }
)  # fmt: skip
LEAKY_CALLS = {
    "json.dumps": "json.dumps(...)",
    "traceback.format_exc": "traceback.format_exc()",
    "traceback.format_exception": "traceback.format_exception(...)",
    "traceback.format_tb": "traceback.format_tb(...)",
}
CANCELLATION = {"asyncio.CancelledError": "CancelledError", "asyncio.exceptions.CancelledError": "CancelledError",
                "concurrent.futures.CancelledError": "CancelledError", "BaseException": "BaseException"}  # fmt: skip
SDK_PROTOCOL_ERRORS = frozenset({"mcp.MCPError", "mcp.shared.exceptions.MCPError"})
CONTEXT_NAMES = ("ctx", "context")

# Fields that never hold an expression or a statement: the lean walk never looks at them.
_SKIPPED_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "leading_lines", "header", "footer", "semicolon", "equal", "colon",
        "dot", "lbracket", "rbracket", "lbrace", "rbrace", "operator", "star", "newline", "indent",
        "asynchronous", "trailing_whitespace", "first_line", "empty_lines", "lines_after_decorators",
        "whitespace_after_at", "prefix", "quote", "start", "end", "string",
    }
)  # fmt: skip
_LEAF_TYPES = (cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)
_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    names = _FIELD_CACHE.get(node_type)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELD_CACHE[node_type] = names
    return names


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The syntactic children of ``node`` (no whitespace, no punctuation)."""
    if isinstance(node, _LEAF_TYPES):
        return
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def string_value(node: cst.CSTNode) -> Union[str, None, bool]:
    """The joined value of a string literal; ``False`` for an f-string/bytes; ``None`` if no string."""
    if isinstance(node, cst.SimpleString):
        literal = node.value
        if "\\" not in literal and "\r" not in literal and literal[0] in "'\"":
            # No prefix, no escape, no line ending to normalise: the text between the quotes is the
            # value. ``evaluated_value`` compiles every literal (~10 us each, ~7% of a parse).
            return node.raw_value
        value = node.evaluated_value
        return value if isinstance(value, str) else False
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_value(node.left), string_value(node.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return False
    if isinstance(node, cst.FormattedString):
        return False
    return None


def _is_bytes(node: cst.CSTNode) -> bool:
    """A bytes literal, plain or implicitly concatenated (``b"a" b"b"``)."""
    while isinstance(node, cst.ConcatenatedString):
        node = node.left
    return isinstance(node, cst.SimpleString) and "b" in node.prefix.lower()


def describe(node: cst.CSTNode) -> str:
    """A short phrase for a value of the wrong kind, for messages."""
    if isinstance(node, cst.Dict):
        return "a dict"
    if isinstance(node, cst.Set):
        return "a set"
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "bytes" if _is_bytes(node) else "a string"
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return "a number"
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return node.value
    if isinstance(node, (cst.List, cst.Tuple)):
        return "a list"
    if isinstance(node, cst.Lambda):
        return "a lambda"
    if isinstance(node, cst.Call):
        return f"a call to {_dotted(node.func) or 'an expression'}()"
    if isinstance(node, (cst.Name, cst.Attribute)):
        return f"'{_dotted(node)}'"
    return "an expression"


def _dotted(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _arg(call: cst.Call, position: int, keyword: str) -> Optional[cst.Arg]:
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif not arg.star:
            if positional == position:
                return arg
            positional += 1
    return None


def _arg_value(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    arg = _arg(call, position, keyword)
    return arg.value if arg is not None else None


class Extractor:
    """Builds ``FileFacts`` for one module; see ``extract``."""

    def __init__(self, path: str, module_name: str, is_package: bool, runtime_modules: Sequence[str]):
        self.facts = FileFacts(path=path, module=module_name)
        self.module_name = module_name
        self.is_package = is_package
        self.runtime_modules = tuple(runtime_modules)
        self.spans = SpanRegistry()
        self.aliases: dict[str, str] = self.facts.imports
        self.local_names: set[str] = set()
        self.local_classes: set[str] = set()
        self.runtime_star = False
        # ``from myapp.api import *`` of project modules: a bare runtime API name may come from one.
        self.star_modules: list[str] = []
        self.stmt: Optional[cst.CSTNode] = None
        # What the positions pass renders to place a node (see ``SpanRegistry``): a module-level
        # statement, a top-level function's decorator or body statement; None: the whole module.
        self.unit: Optional[cst.CSTNode] = None

    # ----- names ---------------------------------------------------------------------------

    def span(self, node: cst.CSTNode) -> Span:
        return self.spans.span(node, self.stmt, self.unit)

    def absolute_module(self, node: cst.ImportFrom) -> Optional[str]:
        base = _dotted(node.module) if node.module is not None else None
        level = len(node.relative)
        if level == 0:
            return base
        parts = self.module_name.split(".")
        if not self.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        prefix = ".".join(parts)
        if base:
            return f"{prefix}.{base}" if prefix else base
        return prefix or None

    def bind_imports(self, node: Union[cst.Import, cst.ImportFrom], table: dict[str, str]) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                dotted = _dotted(alias.name)
                if dotted is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    table[alias.asname.name.value] = dotted
                else:
                    head = dotted.split(".")[0]
                    table[head] = head
            return
        module = self.absolute_module(node)
        if module is None:
            return
        if isinstance(node.names, cst.ImportStar):
            if self.is_runtime(module):
                self.runtime_star = True
            elif module.split(".")[0] not in sys.stdlib_module_names:
                self.star_modules.append(module)
            return
        for alias in node.names:
            name = _dotted(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            table[local] = f"{module}.{name}"

    def is_runtime(self, qname: str) -> bool:
        return is_runtime(qname, self.runtime_modules)

    def qualify(self, node: cst.CSTNode, scope: Optional[dict[str, str]] = None) -> Optional[str]:
        if isinstance(node, cst.Name):
            name = node.value
            if scope is not None and name in scope:
                return scope[name]
            if name in self.aliases:
                return self.aliases[name]
            if name in self.local_names:
                return f"{self.module_name}.{name}"
            if name in RUNTIME_API:
                if self.runtime_star:
                    return f"{self.runtime_modules[0]}.{name}"
                if self.star_modules:  # the last star import that may bind it wins, as at run time
                    return f"{self.star_modules[-1]}.{name}"
            return name
        if isinstance(node, cst.Attribute):
            base = self.qualify(node.value, scope)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def runtime_api(self, qname: Optional[str]) -> Optional[str]:
        """``tool``, ``not_found``, ... when ``qname`` names that runtime object, else None."""
        if qname is None or "." not in qname:
            return None
        prefix, _, last = qname.rpartition(".")
        if last in RUNTIME_API and self.is_runtime(prefix):
            return last
        return None

    def api_of(self, qname: Optional[str]) -> tuple[Optional[str], Assumptions]:
        """The runtime API ``qname`` names, and what that rests on: nothing for the runtime's own
        names; for a name imported from a project module (``myapp.api.tool``), the assumption
        that the module re-exports the runtime's object of that name, which the project view
        confirms (``model.Assumptions``). A fact built on it carries it."""
        api = self.runtime_api(qname)
        if api is not None:
            return api, ()
        if qname is None or "." not in qname:
            return None, ()
        prefix, _, last = qname.rpartition(".")
        if last in RUNTIME_API and self.may_reexport_runtime(prefix):
            return last, (qname,)
        return None, ()

    def may_reexport_runtime(self, prefix: str) -> bool:
        """Whether ``prefix`` (what a runtime API name was read from) may be another module of the
        project: not this module or anything in it, not the standard library."""
        if prefix == self.module_name or prefix.startswith(self.module_name + "."):
            return False
        return prefix.split(".")[0] not in sys.stdlib_module_names

    def code_member(self, qname: Optional[str]) -> Optional[str]:
        """``X`` for ``<runtime>...JsonRpcErrorCode.X``."""
        if qname is None:
            return None
        head, _, member = qname.rpartition(".")
        if self.runtime_api(head) == "JsonRpcErrorCode" and member:
            return member
        return None

    # ----- values and contracts ---------------------------------------------------------------

    def value(self, node: cst.BaseExpression) -> Value:
        span = self.span(node)
        text = string_value(node)
        if isinstance(text, str):
            return Value("str", text, span)
        if text is False:
            if _is_bytes(node):  # the runtime rejects bytes where it takes text
                return Value("bytes", "bytes", span)
            return Value("fstring", "an f-string", span)
        if isinstance(node, cst.Integer):
            return Value("int", node.evaluated_value, span)
        if isinstance(node, cst.Float):
            return Value("float", node.evaluated_value, span)
        if (
            isinstance(node, cst.UnaryOperation)
            and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, cst.Integer)
        ):
            return Value("int", -node.expression.evaluated_value, span)
        if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
            if node.value == "None":
                return Value("none", None, span)
            return Value("bool", node.value == "True", span)
        if isinstance(node, (cst.Name, cst.Attribute)):
            qname = self.qualify(node)
            member = self.code_member(qname)
            if member is not None:
                return Value("code", member, span)
            if qname is not None:
                return Value("ref", qname, span)
        if isinstance(node, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
            return Value("collection", describe(node), span)
        return Value("expr", describe(node), span)

    def entry_from_call(self, call: cst.Call, assumes: Assumptions = ()) -> Entry:
        entry = Entry("call", self.span(call), [], assumes=assumes)
        for arg in call.args:
            if arg.star or arg.keyword is None:
                entry.opaque.append(f"{arg.star}{_dotted(arg.value) or '...'}" if arg.star else "a positional argument")
                entry.opaque_span = entry.opaque_span or self.span(arg)
            else:
                entry.fields.append(EntryField(arg.keyword.value, self.value(arg.value), self.span(arg.keyword)))
        return entry

    def entry_from_dict(self, node: cst.Dict) -> Entry:
        entry = Entry("dict", self.span(node), [])
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):
                entry.opaque.append(f"**{_dotted(element.value) or '...'}")
                entry.opaque_span = entry.opaque_span or self.span(element)
                continue
            key = string_value(element.key)
            if not isinstance(key, str):
                entry.opaque.append("a non-literal key")
                entry.opaque_span = entry.opaque_span or self.span(element.key)
                continue
            entry.fields.append(EntryField(key, self.value(element.value), self.span(element.key)))
        return entry

    def is_contract_call(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and self.runtime_api(self.qualify(node.func)) == "ErrorContract"

    def contract_call_assumptions(self, node: cst.CSTNode) -> Optional[Assumptions]:
        """Like ``is_contract_call``, also through a re-export: None when ``node`` is no
        ``ErrorContract(...)``, else what recognising it assumed."""
        if not isinstance(node, cst.Call):
            return None
        api, assumes = self.api_of(self.qualify(node.func))
        return assumes if api == "ErrorContract" else None

    def contract_item(self, node: cst.BaseElement) -> Item:
        value = node.value
        if isinstance(node, cst.StarredElement):
            return SpreadItem(self.contract_expr(value), self.span(node))
        assumes = self.contract_call_assumptions(value)
        if assumes is not None:
            return EntryItem(self.entry_from_call(value, assumes))  # type: ignore[arg-type]
        if isinstance(value, cst.Dict):
            return EntryItem(self.entry_from_dict(value))
        if isinstance(value, (cst.Name, cst.Attribute)) and describe(value) not in ("None", "True", "False"):
            qname = self.qualify(value)
            if qname is not None:
                return RefItem(qname, self.span(value))
        invalid = not isinstance(value, (cst.Call, cst.Subscript, cst.Attribute, cst.Name, cst.IfExp))
        if isinstance(value, cst.Call):
            # A runtime object that is not ErrorContract (say ``tool_error(...)``) is surely wrong.
            invalid = self.runtime_api(self.qualify(value.func)) is not None
        return BadItem(describe(value), self.span(value), invalid)

    def contract_expr(self, node: cst.BaseExpression) -> ContractExpr:
        if isinstance(node, (cst.List, cst.Tuple)):
            return ListExpr([self.contract_item(e) for e in node.elements], self.span(node))
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            return ConcatExpr([self.contract_expr(node.left), self.contract_expr(node.right)], self.span(node))
        if isinstance(node, cst.Call) and _dotted(node.func) in ("list", "tuple") and len(node.args) == 1:
            return self.contract_expr(node.args[0].value)
        if isinstance(node, (cst.Name, cst.Attribute)) and describe(node) not in ("None", "True", "False"):
            qname = self.qualify(node)
            if qname is not None:
                return RefExpr(qname, self.span(node))
        if self.is_contract_call(node):
            return BadExpr("a single ErrorContract (wrap it in a list)", self.span(node), True)
        invalid = isinstance(
            node,
            (cst.Dict, cst.Set, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
             cst.Integer, cst.Float, cst.Name, cst.DictComp, cst.SetComp, cst.Lambda),
        )  # fmt: skip
        return BadExpr(describe(node), self.span(node), invalid)

    def binding(self, node: cst.BaseExpression) -> Optional[Binding]:
        """What a module-level ``NAME = <node>`` contributes for other definitions to resolve."""
        if isinstance(node, (cst.List, cst.Tuple, cst.BinaryOperation)):
            if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.Add):
                return None
            return self.contract_expr(node)
        assumes = self.contract_call_assumptions(node)
        if assumes is not None:
            return self.entry_from_call(node, assumes)  # type: ignore[arg-type]
        if isinstance(node, cst.Dict):
            return self.entry_from_dict(node)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.UnaryOperation)):
            return self.value(node)
        if isinstance(node, (cst.Name, cst.Attribute)):
            qname = self.qualify(node)
            if qname is not None and self.code_member(qname) is None:
                return RefExpr(qname, self.span(node))
            return self.value(node)
        return None

    # ----- definitions -------------------------------------------------------------------------

    def definer(self, node: cst.CSTNode, scope: Optional[dict[str, str]] = None) -> tuple[Optional[str], Assumptions]:
        """``tool``/``resource``/``prompt`` when ``node`` is a call to one, and what that assumed."""
        if isinstance(node, cst.Call):
            api, assumes = self.api_of(self.qualify(node.func, scope))
            if api in DEFINERS:
                return api, assumes
        return None, ()

    def definition(
        self, kind: str, call: cst.Call, handler: Optional[str], handler_ref: Optional[str], assumes: Assumptions
    ) -> None:
        name_node = _arg_value(call, 0, "uri_template" if kind == "resource" else "name")
        name = string_value(name_node) if name_node is not None else None
        name_ref = None
        if not isinstance(name, str) and isinstance(name_node, (cst.Name, cst.Attribute)):
            name_ref = self.qualify(name_node)  # ``@tool(NAME)``: resolved with the project's constants
        errors_arg = _arg(call, 99, "errors")
        self.facts.definitions.append(
            Definition(
                kind=kind,  # type: ignore[arg-type]
                name=name if isinstance(name, str) else None,
                span=self.span(call),
                name_span=self.span(name_node if name_node is not None else call),
                errors=self.contract_expr(errors_arg.value) if errors_arg is not None else None,
                errors_arg_span=self.span(errors_arg) if errors_arg is not None else None,
                handler=handler,
                handler_ref=handler_ref,
                name_ref=name_ref,
                assumes=assumes,
            )
        )

    def call_form_definition(self, node: cst.Call, scope: Optional[dict[str, str]]) -> bool:
        """``tool("x", ...)(handler)``: record it; True when ``node`` was one."""
        kind, assumes = self.definer(node.func, scope)
        if kind is None or not node.args:
            return False
        target = node.args[0].value
        handler = handler_ref = None
        if isinstance(target, cst.Name) and target.value in self.facts.functions:
            handler = target.value
        elif isinstance(target, (cst.Name, cst.Attribute)):
            qname = self.qualify(target, scope)
            if qname is not None and qname.startswith(self.module_name + "."):
                handler = qname[len(self.module_name) + 1 :]
            else:
                handler_ref = qname
        self.definition(kind, node.func, handler, handler_ref, assumes)  # type: ignore[arg-type]
        return True

    def scan_module_expression(self, node: cst.CSTNode) -> None:
        """Module-level code outside functions: only registering calls matter here."""
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call) and self.call_form_definition(current, None):
                stack.extend(reversed(current.args[1:]))
                continue
            if isinstance(current, (cst.FunctionDef, cst.Lambda)):
                continue
            stack.extend(reversed(list(children(current))))

    # ----- the module ----------------------------------------------------------------------------

    def run(self, module: cst.Module) -> FileFacts:
        statements = list(self._flatten(module.body))
        for stmt in statements:  # pass 1: what names mean
            self._declare(stmt)
        top_level = {id(stmt) for stmt in module.body}
        for stmt in statements:  # pass 2: bindings, definitions, functions
            self.stmt = stmt
            self.unit = stmt if id(stmt) in top_level else None  # inside a module-level if/try: None
            if isinstance(stmt, cst.FunctionDef):
                self._function(stmt, prefix="", outer=None, top=id(stmt) in top_level)
            elif isinstance(stmt, cst.ClassDef):
                for inner in self._flatten(stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()):
                    if isinstance(inner, cst.FunctionDef):
                        self.stmt = inner
                        self._function(inner, prefix=stmt.name.value + ".", outer=None)
            else:
                self._module_statement(stmt)
        self.facts.runtime_names = self._runtime_names()
        return self.facts

    def _runtime_names(self) -> dict[str, str]:
        """What this module re-exports of the runtime (``FileFacts.runtime_names``)."""
        names = {local: qname for local, qname in self.aliases.items() if self.is_runtime(qname)}
        if self.runtime_star:
            for api in sorted(RUNTIME_API):
                if api not in self.aliases and api not in self.local_names:
                    names[api] = f"{self.runtime_modules[0]}.{api}"
        return names

    def _flatten(self, body: Iterable[cst.CSTNode]) -> Iterator[cst.CSTNode]:
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
                        yield from self._flatten(block.body)
            else:
                yield stmt

    def _declare(self, stmt: cst.CSTNode) -> None:
        """Record what each module-level name means; a later binding replaces an earlier one."""
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self._bind_local(stmt.name.value)
            if isinstance(stmt, cst.ClassDef):
                self.local_classes.add(stmt.name.value)
            return
        if not isinstance(stmt, cst.SimpleStatementLine):
            return
        for small in stmt.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                self.bind_imports(small, self.aliases)
                self.local_names.difference_update(self.aliases)
            elif isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        self._bind_assigned(target.target.value, small.value)
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                self._bind_local(small.target.value)

    def _bind_local(self, name: str) -> None:
        self.local_names.add(name)
        self.aliases.pop(name, None)  # ``def tool(...)`` after ``from mcp_fusion import tool`` shadows it

    def instance_class(self, value: cst.CSTNode, scope: Optional[dict[str, str]] = None) -> Optional[str]:
        """The qualified class name when ``value`` instantiates a class (``NcbiClient(...)``): a
        class of this module, or an imported CapWords name that is not the runtime's."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
            return None
        qname = self.qualify(value.func, scope)
        if qname is None or self.runtime_api(qname) is not None or self.is_runtime(qname):
            return None
        if isinstance(value.func, cst.Name) and value.func.value in self.local_classes:
            return qname
        last = qname.rpartition(".")[2]
        if "." in qname and last[:1].isupper() and not last.isupper():
            return qname
        return None

    def _bind_assigned(self, name: str, value: cst.BaseExpression) -> None:
        # ``ncbi = NcbiClient()``: calls ``ncbi.fetch(...)`` are followed into ``NcbiClient.fetch``
        # (the instance names its class, as an import names a module).
        cls = self.instance_class(value)
        if cls is not None:
            self.aliases[name] = cls
            self.local_names.discard(name)
            return
        # ``t = tool``, ``define = mf.tool``: a rebinding of an imported name keeps its meaning.
        source = _dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if source is not None and source != name:
            qname = self.qualify(value)
            head = source.split(".")[0]
            if qname is not None and (head in self.aliases or self.runtime_api(qname) is not None):
                self.aliases[name] = qname
                self.local_names.discard(name)
                return
        self._bind_local(name)

    def _module_statement(self, stmt: cst.CSTNode) -> None:
        if not isinstance(stmt, cst.SimpleStatementLine):
            if not isinstance(stmt, (cst.Import, cst.ImportFrom)):
                self.scan_module_expression(stmt)
            return
        for small in stmt.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                continue
            value = None
            if isinstance(small, cst.Assign):
                value = small.value
                for target in small.targets:
                    if isinstance(target.target, cst.Name) and target.target.value not in self.aliases:
                        binding = self.binding(value)
                        if binding is not None:
                            self.facts.bindings[target.target.value] = binding
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                value = small.value
                if isinstance(small.target, cst.Name):
                    binding = self.binding(value)
                    if binding is not None:
                        self.facts.bindings[small.target.value] = binding
            elif isinstance(small, cst.Expr):
                value = small.value
            if value is not None:
                self.scan_module_expression(value)

    # ----- functions ----------------------------------------------------------------------------

    def _function(
        self, node: cst.FunctionDef, prefix: str, outer: Optional["_FunctionWalker"], top: bool = False
    ) -> None:
        """``top``: a function of the module body itself, whose decorators and body statements
        the positions pass renders one by one (its name is placed from CPython's tree)."""
        qualname = prefix + node.name.value
        if top:
            self.unit = node
        facts = FunctionFacts(qualname=qualname, span=self.span(node.name))
        self.facts.functions[qualname] = facts
        for decorator in node.decorators:
            self.stmt = decorator
            if top:
                self.unit = decorator
            kind, assumes = self.definer(decorator.decorator, outer.scope if outer else None)
            if kind is not None:
                self.definition(kind, decorator.decorator, qualname, None, assumes)  # type: ignore[arg-type]
            elif outer is not None:
                outer.expression(decorator.decorator)
            else:
                self.scan_module_expression(decorator.decorator)
        if top:
            self.unit = node
        walker = _FunctionWalker(self, node, facts, outer)
        if top and isinstance(node.body, cst.IndentedBlock):
            for stmt in node.body.body:
                self.unit = stmt
                walker.statement(stmt)
        else:
            walker.block(node.body)


class _FunctionWalker:
    """Handler facts of one function; nested functions and lambdas are part of it (DESIGN §4)."""

    def __init__(self, ex: Extractor, node: cst.FunctionDef, facts: FunctionFacts, outer: Optional["_FunctionWalker"]):
        self.ex = ex
        self.facts_stack = [facts] + (outer.facts_stack if outer else [])
        self.scope: dict[str, str] = dict(outer.scope) if outer else {}
        self.ctx_names: set[str] = set(outer.ctx_names) if outer else set()
        self.fail_aliases: dict[str, str] = dict(outer.fail_aliases) if outer else {}
        self.bound_errors: dict[str, tuple[cst.Call, RaiseSite]] = {}
        self.except_names: list[str] = []
        self.qualprefix = facts.qualname + "."
        self.seen_calls: set[str] = set()
        if outer is None and "." in facts.qualname:
            self._bind_receiver(node, facts.qualname.rpartition(".")[0])
        self._find_context(node.params, facts)

    def _bind_receiver(self, node: cst.FunctionDef, class_name: str) -> None:
        """In a method, ``self.helper()``/``cls.helper()`` is ``Class.helper``: follow it there."""
        if any(_dotted(d.decorator) == "staticmethod" for d in node.decorators):
            return
        positional = [*node.params.posonly_params, *node.params.params]
        if positional:
            self.scope[positional[0].name.value] = f"{self.ex.module_name}.{class_name}"

    def _find_context(self, params: cst.Parameters, facts: FunctionFacts) -> None:
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        facts.params = [param.name.value for param in all_params]
        found = None
        for param in all_params:
            annotation = param.annotation.annotation if param.annotation is not None else None
            if annotation is not None and any(
                qname == "Context" or self.ex.api_of(qname)[0] == "Context"
                for qname in self._annotation_qnames(annotation)
            ):
                found = param.name.value
                break
        if found is None:
            # By name only when nothing says otherwise: ``ctx: dict`` is an ordinary argument.
            for param in all_params:
                if param.name.value in CONTEXT_NAMES and (
                    param.annotation is None
                    or any("context" in q.rpartition(".")[2].lower()
                           for q in self._annotation_qnames(param.annotation.annotation))
                ):
                    found = param.name.value
                    break
        if found is not None:
            self.ctx_names.add(found)
            facts.context_param = found
        # A parameter that shadows an outer context name is no longer the context.
        for param in all_params:
            if param.name.value != found:
                self.ctx_names.discard(param.name.value)

    def _annotation_qnames(self, annotation: cst.BaseExpression) -> Iterator[str]:
        """Qualified names an annotation may stand for: ``Context``, ``"Context"``,
        ``Optional[Context]``, ``Context | None``, ``Annotated[Context, ...]``."""
        text = string_value(annotation)
        if isinstance(text, str):
            yield text
        elif isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            yield from self._annotation_qnames(annotation.left)
            yield from self._annotation_qnames(annotation.right)
        elif isinstance(annotation, cst.Subscript):
            for element in annotation.slice:
                if isinstance(element.slice, cst.Index):
                    yield from self._annotation_qnames(element.slice.value)
        else:
            qname = self.ex.qualify(annotation, self.scope)
            if qname is not None:
                yield qname

    # recording: a fact belongs to this function and every enclosing one
    def _record(self, attribute: str, fact: object) -> None:
        for facts in self.facts_stack:
            getattr(facts, attribute).append(fact)

    # ----- statements -------------------------------------------------------------------------

    def block(self, body: cst.CSTNode) -> None:
        statements = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
        for stmt in statements:
            self.statement(stmt)

    def statement(self, stmt: cst.CSTNode) -> None:
        ex = self.ex
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                ex.stmt = stmt
                self.small_statement(small)
            return
        if isinstance(stmt, (cst.BaseSmallStatement,)):
            self.small_statement(stmt)
            return
        ex.stmt = stmt
        if isinstance(stmt, cst.FunctionDef):
            ex._function(stmt, prefix=self.qualprefix, outer=self)
            ex.stmt = stmt
            return
        if isinstance(stmt, cst.ClassDef):
            for inner in stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ():
                self.statement(inner)
            return
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            self.block(stmt.body)
            for handler in stmt.handlers:
                self.except_handler(handler)
            for tail in (stmt.orelse, stmt.finalbody):
                if tail is not None:
                    self.block(tail.body)
            return
        # Any other compound statement: its header expressions, then its blocks.
        for child in children(stmt):
            if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                self.block(child)
            elif isinstance(child, (cst.Else, cst.If, cst.MatchCase, cst.Finally)):
                self.statement(child) if isinstance(child, cst.If) else self._clause(child)
            else:
                ex.stmt = stmt
                self.expression(child)

    def _clause(self, node: cst.CSTNode) -> None:
        for child in children(node):
            if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                self.block(child)
            elif isinstance(child, cst.MatchPattern):
                continue  # ``case JsonRpcErrorCode.NOT_FOUND:`` is a comparison, never a raise
            else:
                self.expression(child)

    def except_handler(self, handler: Union[cst.ExceptHandler, cst.ExceptStarHandler]) -> None:
        ex = self.ex
        ex.stmt = handler
        caught = ""
        if handler.type is None:
            caught = "bare except"
        else:
            types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
            for element in types:
                node = element.value if isinstance(element, cst.Element) else element
                qname = ex.qualify(node, self.scope) or ""
                caught = CANCELLATION.get(qname) or ("CancelledError" if qname == "CancelledError" else "")
                if caught:
                    break
            self.expression(handler.type)
        name = handler.name.name.value if handler.name is not None and isinstance(handler.name.name, cst.Name) else ""
        if caught:
            type_span = ex.span(handler.type) if handler.type is not None else None
            self._record("excepts", ExceptClause(ex.span(handler), type_span, caught, _contains_raise(handler.body)))
        self.except_names.append(name)
        self.block(handler.body)
        self.except_names.pop()

    def small_statement(self, small: cst.CSTNode) -> None:
        ex = self.ex
        if isinstance(small, cst.Raise):
            self.raise_statement(small)
            return
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            ex.bind_imports(small, self.scope)
            return
        if isinstance(small, cst.Expr):
            value = small.value
            inner = value.expression if isinstance(value, cst.Await) else value
            if isinstance(inner, cst.Call):
                self.call(inner, usage="discarded")
                return
            self.expression(value)
            return
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            value = small.value
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            names = [t.value for t in targets if isinstance(t, cst.Name)]
            if value is not None and names:
                method = self._fail_method(value)
                if method is not None:  # ``fail = ctx.fail``
                    for name in names:
                        self.fail_aliases[name] = method
                    return
                if isinstance(value, cst.Call):
                    site = self.classify_call(value)
                    if site is not None and site.kind != "other":
                        for name in names:
                            self.bound_errors[name] = (value, site)
                    else:
                        cls = ex.instance_class(value, self.scope)
                        for name in names:  # ``svc = InvoiceService()``: ``svc.pay()`` is followed
                            if cls is not None:
                                self.scope[name] = cls
                            else:
                                self.scope.pop(name, None)
            for target in targets:
                if not isinstance(target, cst.Name):
                    self.expression(target)
            if value is not None:
                self.expression(value)
            return
        self.expression(small)

    def raise_statement(self, node: cst.Raise) -> None:
        ex = self.ex
        in_except = self.except_names[-1] if self.except_names else None
        exc = node.exc
        site: Optional[RaiseSite] = None
        if exc is None:
            site = RaiseSite(ex.span(node), "reraise", in_except=in_except)
        elif isinstance(exc, cst.Call):
            site = self.classify_call(exc, usage="raised")
            if site is not None:
                site.call_span = ex.span(exc)
            self.call(exc, usage="raised", classified=True)
        elif isinstance(exc, cst.Name) and exc.value in self.bound_errors:
            call, bound = self.bound_errors[exc.value]
            site = dataclasses.replace(bound, leaks=list(bound.leaks))
        elif isinstance(exc, cst.Name) and in_except is not None and exc.value in self.except_names:
            site = RaiseSite(ex.span(node), "reraise", in_except=in_except)
        elif isinstance(exc, (cst.Name, cst.Attribute)):
            qname = ex.qualify(exc, self.scope)
            if qname in BUILTIN_EXCEPTIONS:
                site = RaiseSite(ex.span(node), "builtin", exc_name=qname)
            elif qname in SDK_PROTOCOL_ERRORS:
                site = RaiseSite(ex.span(node), "protocol")
            else:
                self.expression(exc)
        else:
            self.expression(exc)
        if node.cause is not None:
            self.expression(node.cause.item)
        if site is None:
            site = RaiseSite(ex.span(node), "other")
        site.span = ex.span(node)
        site.in_except = in_except
        site.has_cause = site.has_cause or node.cause is not None
        self._record("raises", site)

    # ----- expressions ---------------------------------------------------------------------------

    def expression(self, node: cst.CSTNode) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call):
                self.call(current, usage="other")
                continue
            if isinstance(current, _LEAF_TYPES):
                continue
            stack.extend(reversed(list(children(current))))

    def _fail_method(self, func: cst.CSTNode) -> Optional[str]:
        """``fail``/``recovery_for`` when ``func`` is ``ctx.fail``, ``ctx.recovery_for`` or an alias."""
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            if func.value.value in self.ctx_names and func.attr.value in ("fail", "recovery_for"):
                return func.attr.value
        if isinstance(func, cst.Name) and func.value in self.fail_aliases:
            return self.fail_aliases[func.value]
        return None

    def classify_call(self, call: cst.Call, usage: str = "other") -> Optional[RaiseSite]:
        """What raising this call would raise (kind, code, data reason, cause, leaks)."""
        ex = self.ex
        func = call.func
        method = self._fail_method(func)
        if method == "fail":
            site = RaiseSite(Span(), "fail", has_cause=_arg(call, 99, "cause") is not None)
            self._message(site, _arg_value(call, 1, "message"))
            return site
        root = call
        while isinstance(root.func, cst.Attribute) and isinstance(root.func.value, cst.Call):
            root = root.func.value  # ``tool_error(...).suggest(...)`` chains
        qname = ex.qualify(root.func, self.scope)
        api, assumes = ex.api_of(qname)
        cause = _arg(call, 99, "cause") is not None
        if api == "McpError":
            code, code_assumes = self.code_of(_arg_value(call, 0, "code"))
            site = RaiseSite(Span(), "mcp_error", code=code, has_cause=cause, assumes=assumes + code_assumes)
            site.data_reason = self.data_reason(_arg_value(call, 2, "data"))
            self._message(site, _arg_value(call, 1, "message"))
            return site
        if api in FACTORY_CODES:
            site = RaiseSite(Span(), "factory", code=FACTORY_CODES[api].name, factory=api, has_cause=cause,
                             assumes=assumes)  # fmt: skip
            site.data_reason = self.data_reason(_arg_value(call, 1, "data"))
            self._message(site, _arg_value(call, 0, "message"))
            return site
        if api == "tool_error":
            code, code_assumes = self.code_of(_arg_value(root, 0, "code"))
            return RaiseSite(Span(), "tool_error", code=code, assumes=assumes + code_assumes)
        if qname in SDK_PROTOCOL_ERRORS:
            return RaiseSite(Span(), "protocol")
        if qname in BUILTIN_EXCEPTIONS:
            return RaiseSite(Span(), "builtin", exc_name=qname)
        return RaiseSite(Span(), "other")

    def _message(self, site: RaiseSite, node: Optional[cst.BaseExpression]) -> None:
        if node is not None:
            site.message_span = self.ex.span(node)
            site.leaks = self.leaks(node)

    def code_of(self, node: Optional[cst.CSTNode]) -> tuple[Optional[str], Assumptions]:
        """The member name of the code ``node`` gives, and what recognising it assumed."""
        if node is None:
            return None, ()
        if isinstance(node, (cst.Name, cst.Attribute)):
            qname = self.ex.qualify(node, self.scope)
            if qname is None:
                return None, ()
            owner, _, member = qname.rpartition(".")
            api, assumes = self.ex.api_of(owner)
            return (member, assumes) if api == "JsonRpcErrorCode" and member else (None, ())
        if isinstance(node, cst.Integer) or isinstance(node, cst.UnaryOperation):
            value = self.ex.value(node)
            if value.kind == "int":
                from mcp_fusion import JsonRpcErrorCode

                try:
                    return JsonRpcErrorCode(value.value).name, ()
                except ValueError:
                    return None, ()
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):  # the envelope's string codes: a member's name
            from mcp_fusion import JsonRpcErrorCode

            text = string_value(node)
            return (text, ()) if isinstance(text, str) and text in JsonRpcErrorCode.__members__ else (None, ())
        return None, ()

    def data_reason(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        if isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement) and string_value(element.key) == "reason":
                    text = string_value(element.value)
                    return text if isinstance(text, str) else None
        if isinstance(node, cst.Call) and _dotted(node.func) == "dict":
            value = _arg_value(node, 99, "reason")
            text = string_value(value) if value is not None else None
            return text if isinstance(text, str) else None
        return None

    def leaks(self, node: Optional[cst.CSTNode]) -> list[str]:
        """FL303: what of the message is built from internals."""
        if node is None:
            return []
        found: list[str] = []
        caught = {name for name in self.except_names if name}
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call):
                qname = self.ex.qualify(current.func, self.scope)
                if qname in LEAKY_CALLS:
                    found.append(LEAKY_CALLS[qname])
                elif qname == "repr" and current.args and _dotted(current.args[0].value) in caught:
                    found.append(f"repr({_dotted(current.args[0].value)})")
            elif isinstance(current, cst.FormattedStringExpression) and current.conversion == "r":
                if _dotted(current.expression) in caught:
                    found.append(f"{{{_dotted(current.expression)}!r}}")
            if not isinstance(current, _LEAF_TYPES):
                stack.extend(children(current))
        return found

    def call(self, node: cst.Call, usage: str, classified: bool = False) -> None:
        ex = self.ex
        method = self._fail_method(node.func)
        if method is not None:
            reason_node = _arg_value(node, 0, "reason")
            reason = string_value(reason_node) if reason_node is not None else None
            message_node = _arg_value(node, 1, "message")
            site = FailSite(
                method=method,  # type: ignore[arg-type]
                reason=reason if isinstance(reason, str) else None,
                span=ex.span(node),
                reason_span=ex.span(reason_node) if reason_node is not None else None,
                usage=usage,  # type: ignore[arg-type]
            )
            self._record("fail_sites", site)
        elif ex.call_form_definition(node, self.scope):
            pass
        else:
            qname = ex.qualify(node.func, self.scope)
            api, assumes = ex.api_of(qname)
            if api == "McpError":
                code_node = _arg_value(node, 0, "code")
                code, code_assumes = self.code_of(code_node) if isinstance(code_node, cst.Attribute) else (None, ())
                if code is not None and code in FACTORY_CODES_BY_CODE:
                    positional = node.args[0].keyword is None and not node.args[0].star
                    following = node.args[1].value if positional and len(node.args) > 1 else None
                    construction = Construction(
                        span=ex.span(node),
                        code=code,
                        func_span=ex.span(node.func),
                        code_span=ex.span(code_node) if positional else None,
                        next_arg_span=ex.span(following) if following is not None else None,
                        assumes=assumes + code_assumes,
                    )
                    self._record("constructions", construction)
            # A call through a re-export is also an ordinary call, in case the project view finds
            # that the name is the project's own function after all.
            if (api is None or assumes) and qname is not None and qname not in self.seen_calls:
                self.seen_calls.add(qname)
                for facts in self.facts_stack:
                    if qname not in facts.calls:
                        facts.calls.append(qname)
        # Arguments, and the callee expression itself, may hold further calls and lambdas.
        for arg in node.args:
            self.expression(arg.value)
        if not isinstance(node.func, (cst.Name,)):
            inner = node.func.value if isinstance(node.func, cst.Attribute) else node.func
            if not isinstance(inner, cst.Name):
                self.expression(inner)


FACTORY_CODES_BY_CODE = {code.name: name for name, code in FACTORY_CODES.items()}


def _contains_raise(body: cst.CSTNode) -> bool:
    stack = [body]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Raise):
            return True
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(children(current))
    return False


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
    extractor = Extractor(path, module_name, is_package, runtime_modules)
    facts = extractor.run(module)
    text = extractor.spans.resolve(module, source, tree)
    return facts, text
