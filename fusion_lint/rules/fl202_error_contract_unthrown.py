"""FL202 error-contract-unthrown: a declared reason that nothing raises."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, fail_sites, handler_checkable, named_reasons


@register
class ErrorContractUnthrown(Rule):
    code, name, severity = "FL202", "error-contract-unthrown", "warning"
    summary = "A declared reason that nothing in the handler's reach raises or names."
    why = (
        "A contract that advertises failures the code never produces misleads clients and hides the "
        'failures it does produce. Mark reasons raised by a service layer with `thrown_by="service"`.'
    )
    limits = (
        "Runs only when the handler has at least one literal `ctx.fail`; a reason that is not a literal makes "
        "the definition report FL190 instead of guessing."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES + [
    ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="Locked",
                  recovery="Wait a minute then call get_invoice again."),
])
async def get_invoice(invoice_id: str, ctx: Context):
    if invoice_id:
        raise ctx.fail("no_match")
    lookup()

def lookup():
    raise conflict("locked", {"reason": "locked"})
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES + [
    ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="Locked",  # error: FL202 "'locked'"
                  recovery="Wait a minute then call get_invoice again."),
])
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if not handler_checkable(definition):
            return
        sites = [site for site, _ in fail_sites(definition) if site.method == "fail"]
        if not any(site.reason is not None for site in sites):
            return  # no literal ctx.fail: nothing to compare against
        if any(site.reason is None for site, _ in fail_sites(definition)):
            return  # a dynamic reason: FL190 says so instead of guessing
        named = named_reasons(definition)
        spelled = "fail" if definition.definition.server is not None else "ctx.fail"
        for entry in definition.contract.entries:
            if entry.reason is None or entry.thrown_by == "service" or entry.reason in named:
                continue
            yield Finding(
                entry.get("reason").span,  # type: ignore[union-attr]  # its reason is not None: the field is there
                f"reason '{entry.reason}' is declared but nothing raises it; raise {spelled}('{entry.reason}') where "
                'it happens, mark it thrown_by="service" if a service layer raises it, or remove it',
                entry.path,
            )
