"""FL100 error-contract-type: ``errors=`` is not a list or tuple."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE


@register
class ErrorContractType(Rule):
    code, name, severity = "FL100", "error-contract-type", "error"
    summary = "`errors=` must be a list or tuple of contract entries."
    why = (
        "The runtime iterates `errors=` to advertise the failure surface and to map each `ctx.fail` "
        "reason to its code; a dict, a string or `None` is no list of modeled failures."
    )
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors={"reason": "no_match"})  # error: FL100 "must be a list"
async def get_invoice(invoice_id: str):
    return {}
"""),
        Example("""
@tool("get_invoice", errors=None)  # error: FL100 "got None"
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if definition.contract.wrong_type is not None:
            bad, path = definition.contract.wrong_type
            yield Finding(
                bad.span,
                f"errors= must be a list of ErrorContract entries, got {bad.description}; wrap the entries in [...]",
                path,
            )
