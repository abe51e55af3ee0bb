"""FL111 error-contract-recovery-empty: ``recovery`` is blank."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label


@register
class ErrorContractRecoveryEmpty(Rule):
    code, name, severity = "FL111", "error-contract-recovery-empty", "error"
    summary = "`recovery` is blank."
    why = "A blank hint is no hint: the agent is left without a next step."
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
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="   "),  # error: FL111 "blank"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("recovery")
        if value is not None and value.kind == "str" and not str(value.value).strip():
            yield Finding(
                value.span, f"{entry_label(entry)}: recovery is blank; tell the agent what to do next", entry.path
            )
