"""FL203 error-contract-reason-undeclared: ``ctx.fail`` names a reason the contract does not declare."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, handler_checkable, listing


@register
class ErrorContractReasonUndeclared(Rule):
    code, name, severity = "FL203", "error-contract-reason-undeclared", "error"
    summary = "`ctx.fail`/`ctx.recovery_for` names a reason the contract does not declare."
    why = "At runtime an undeclared reason becomes an INTERNAL_ERROR: the modeled failure is lost."
    limits = (
        "Also in code the handler calls (followed per `follow-calls`), checked against the contract of each "
        "tool that reaches it: a helper shared by several tools is reported once, naming the tools whose "
        "contract lacks the reason. A context the class stores (`self.ctx = ctx`) counts as the context."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_such_invoice")  # error: FL203 "'no_such_invoice'"
"""),
        # In a helper the handler calls, through the context its class stores.
        Example("""
class Lookup:
    def __init__(self, ctx: Context):
        self.ctx = ctx

    def find(self, invoice_id: str):
        raise self.ctx.fail("missing")  # error: FL203 "'missing'"

@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    return Lookup(ctx).find(invoice_id)
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        reaching = list({id(d): d for d, _ in function.reached_by if handler_checkable(d)}.values())
        if not reaching:
            return
        declared = {id(d): [e.reason for e in d.contract.entries if e.reason is not None] for d in reaching}
        for site in function.function.fail_sites:
            if site.reason is None:
                continue
            lacking = [d for d in reaching if site.reason not in declared[id(d)]]
            if not lacking:
                continue
            choices = {tuple(declared[id(d)]) for d in lacking}
            if len(choices) == 1:
                listed = ", ".join(f"'{r}'" for r in next(iter(choices))) or "none"
                advice = f"declare it or use one of: {listed}"
            else:
                advice = "declare it in each of their contracts or use a reason they declare"
            owner = "the contract does not" if len(lacking) == 1 else f"{listing([d.label for d in lacking])} do not"
            yield Finding(
                site.span,
                f"{site.written}('{site.reason}') names a reason {owner} declare (at runtime an INTERNAL_ERROR); "
                f"{advice}",
                function.path,
                subjects=lacking,
            )
