"""FL110 error-contract-recovery-required: ``recovery`` is missing or not a string."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, text_required


@register
class ErrorContractRecoveryRequired(Rule):
    code, name, severity = "FL110", "error-contract-recovery-required", "error"
    summary = "`recovery` is missing or not a string."
    why = "The recovery hint is the agent's next move; without it the model guesses, retries blindly or gives up."
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
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND,  # error: FL110 "has no recovery"
                  when="No invoice has that id"),
    ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="The invoice is locked",
                  recovery=None),  # error: FL110 "must be a string"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        return text_required(entry, "recovery", "the agent's next step")
