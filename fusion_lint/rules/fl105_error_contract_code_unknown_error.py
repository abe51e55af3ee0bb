"""FL105 error-contract-code-unknown-error: ``code`` is ``UNKNOWN_ERROR``."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label


@register
class ErrorContractCodeUnknownError(Rule):
    code, name, severity = "FL105", "error-contract-code-unknown-error", "warning"
    summary = "`code` is `UNKNOWN_ERROR` (the member, its int value or the string)."
    why = "UNKNOWN_ERROR tells the agent nothing about what went wrong; a specific code lets it react."
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
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.UNKNOWN_ERROR,  # error: FL105 "UNKNOWN_ERROR"
                  when="No invoice has that id", recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="odd", code="UNKNOWN_ERROR",  # error: FL105 "UNKNOWN_ERROR"
                  when="Something odd happened", recovery="Call get_invoice again with another invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("code")
        if value is not None and value.kind in ("code", "int", "str") and entry.code == "UNKNOWN_ERROR":
            yield Finding(
                value.span,
                f"{entry_label(entry)}: UNKNOWN_ERROR conveys nothing; pick the specific code this failure "
                "surfaces as (NOT_FOUND, CONFLICT, FORBIDDEN, ...)",
                entry.path,
            )
