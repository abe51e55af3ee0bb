"""FL106 error-contract-reason-required: ``reason`` is missing, not a string, or empty."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import UNRESOLVED_KINDS, ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label, kind_phrase


@register
class ErrorContractReasonRequired(Rule):
    code, name, severity = "FL106", "error-contract-reason-required", "error"
    summary = "`reason` is missing, not a string, or empty."
    why = "The reason is the stable identifier clients and agents switch on; without it a failure cannot be told apart."
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
    ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",  # error: FL106 "has no reason"
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="", code=JsonRpcErrorCode.CONFLICT, when="Locked",  # error: FL106 "empty"
                  recovery="Wait a minute, then call get_invoice again."),
    ErrorContract(reason=42, code=JsonRpcErrorCode.FORBIDDEN, when="Not yours",  # error: FL106 "a string"
                  recovery="Call list_invoices to see the invoices you may read."),
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("reason")
        if value is None:
            if not entry.entry.opaque:
                yield Finding(
                    entry.entry.span, f'{entry_label(entry)} has no reason; add reason="snake_case_id"', entry.path
                )
        elif value.kind == "str" and not str(value.value).strip():
            yield Finding(value.span, f"{entry_label(entry)}: reason is empty; name the failure", entry.path)
        elif value.kind not in ("str", *UNRESOLVED_KINDS):
            yield Finding(
                value.span,
                f"{entry_label(entry)}: reason must be a string literal, got {kind_phrase(value)}",
                entry.path,
            )
