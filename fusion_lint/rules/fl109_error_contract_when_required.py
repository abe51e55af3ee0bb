"""FL109 error-contract-when-required: ``when`` is missing, not a string, or empty."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label, text_required


@register
class ErrorContractWhenRequired(Rule):
    code, name, severity = "FL109", "error-contract-when-required", "error"
    summary = "`when` is missing, not a string, or empty."
    why = "`when` is the default message of `ctx.fail`: without it the model reads an empty failure."
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
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND,  # error: FL109 "has no when"
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when=" ",  # error: FL109 "empty"
                  recovery="Wait a minute, then call get_invoice again."),
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        yield from text_required(entry, "when", "what happened")
        value = entry.get("when")
        if value is not None and value.kind == "str" and not str(value.value).strip():
            yield Finding(value.span, f"{entry_label(entry)}: when is empty; say when it happens", entry.path)
