"""FL301 prefer-error-factory: ``McpError(JsonRpcErrorCode.X, ...)`` where a factory for X exists."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial

from fusion_lint.base.diagnostics import Edit, Fix
from fusion_lint.facts.model import Construction, FileFacts, FromImport, is_runtime
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import CallText, add_import_name
from fusion_lint.rules._shared import FACTORY_FOR_CODE, HANDLER_PRELUDE


@register
class PreferErrorFactory(Rule):
    code, name, severity = "FL301", "prefer-error-factory", "warning"
    summary = (
        "`McpError(JsonRpcErrorCode.X, ...)` where a factory for X exists, whatever spells the code (its int "
        "value, its name as a string, `JsonRpcErrorCode(<int>)`)."
    )
    why = "The factory says the same in fewer words, and keeps the code and its meaning in one place."
    fix = "Rewrites the call to the factory, adding its import in the file's own style."
    fix_safety = "safe"
    limits = "No fix when the factory's name already means something else in the file (a parameter called `timeout`)."
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise not_found("No such invoice")
""",
    )
    INVALID = (
        Example(
            """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise McpError(JsonRpcErrorCode.NOT_FOUND, "No such invoice")  # error: FL301 "not_found("
""",
            fixed="""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise not_found("No such invoice")  # error: FL301 "not_found("
""",
        ),
        Example(
            """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise McpError(-32002, "Invoice is locked")  # error: FL301 "conflict("
""",
            fixed="""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise conflict("Invoice is locked")  # error: FL301 "conflict("
""",
        ),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for made in function.function.constructions:
            factory = FACTORY_FOR_CODE[made.code]
            fix = partial(
                factory_fix,
                facts=project.files.get(function.path),
                made=made,
                factory=factory,
                runtime_modules=project.runtime_modules,
            )
            yield Finding(
                made.call.span,
                f"McpError(JsonRpcErrorCode.{made.code}, ...) is {factory}(...); use the factory",
                function.path,
                fix,
            )


def factory_fix(
    text: str, *, facts: FileFacts | None, made: Construction, factory: str, runtime_modules: Sequence[str]
) -> Fix | None:
    """``McpError(JsonRpcErrorCode.X, msg, ...)`` → ``x(msg, ...)``.

    The factory is named the way the file already names the runtime: ``mf.McpError`` becomes
    ``mf.not_found``; a bare ``McpError`` becomes an imported ``not_found`` (added to the file's
    ``from mcp_fusion import ...`` when missing). A name the file binds to something else is never
    introduced: then there is no fix. The factories take ``(message, data=None, *, cause=None)``,
    exactly McpError's arguments after the code, so dropping the code keeps every other argument."""
    call = CallText.of(text, made.call)
    if facts is None or facts.names is None or call is None or made.code_by_keyword:
        return None
    names = facts.names
    func_text = call.text[made.call.func_span.start : made.call.func_span.end]
    edits: list[Edit] = []
    if "." in func_text:
        reference = func_text.rpartition(".")[0] + "." + factory  # the module McpError came from
    else:
        found = _imported_factory(facts, factory, runtime_modules)
        if found is None:
            if names.bound.get(factory, 0):
                return None  # the bare name means something else in this file
            found = factory
            if not _star_imports_runtime(names.from_imports, runtime_modules):
                statement = _runtime_import_for(func_text, names.from_imports, runtime_modules)
                edit = add_import_name(call.text, statement, factory) if statement is not None else None
                if edit is None:
                    return None
                edits.append(edit)
        reference = found
    if call.positional_index("code") != 0:
        return None
    rewrite = call.drop_argument(0).replace_func(reference).edit()
    if rewrite is None:
        return None
    return Fix(f"Use {factory}(...)", [*edits, rewrite], "safe")


def _runtime_modules_and_errors(runtime_modules: Sequence[str]) -> set[str]:
    return {*runtime_modules, *(f"{m}.errors" for m in runtime_modules)}


def _imported_factory(facts: FileFacts, factory: str, runtime_modules: Sequence[str]) -> str | None:
    """How the file already reaches the factory: its imported name (never rebound), or ``alias.factory``."""
    assert facts.names is not None
    bound = facts.names.bound
    for local, qname in sorted(facts.imports.items()):
        if qname.rpartition(".")[2] == factory and is_runtime(qname, runtime_modules) and bound.get(local, 0) == 1:
            return local
    modules = _runtime_modules_and_errors(runtime_modules)
    for local, qname in sorted(facts.imports.items()):
        if qname in modules and bound.get(local, 0) == 1:
            return f"{local}.{factory}"
    return None


def _star_imports_runtime(imports: Sequence[FromImport], runtime_modules: Sequence[str]) -> bool:
    """``from mcp_fusion import *`` brings every factory already."""
    modules = _runtime_modules_and_errors(runtime_modules)
    return any(s.level == 0 and s.module in modules and s.star for s in imports)


def _runtime_import_for(
    func_text: str, imports: Sequence[FromImport], runtime_modules: Sequence[str]
) -> FromImport | None:
    """The top-level ``from <runtime> import ...`` a new factory name joins: the one that imports
    McpError, else the first one from the runtime package or its ``errors`` module."""
    modules = _runtime_modules_and_errors(runtime_modules)
    candidates = [s for s in imports if s.level == 0 and s.module in modules and not s.star]
    for statement in candidates:
        if any((alias.asname or alias.name) == func_text for alias in statement.names):
            return statement
    return candidates[0] if candidates else None
