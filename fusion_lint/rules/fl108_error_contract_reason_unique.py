"""FL108 error-contract-reason-unique: a reason repeats within one contract."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE


@register
class ErrorContractReasonUnique(Rule):
    code, name, severity = "FL108", "error-contract-reason-unique", "error"
    summary = "A reason appears twice in one contract."
    why = "`ctx.fail(reason)` looks the entry up by reason: a repeat makes one of them unreachable and ambiguous to clients."
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="The invoice is locked",
                  recovery="Wait a minute, then call get_invoice again."),
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.CONFLICT,  # error: FL108 "more than once"
                  when="The invoice is locked", recovery="Wait a minute, then call get_invoice again."),
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        seen: set[str] = set()
        for entry in definition.contract.entries:
            value = entry.get("reason")
            if value is None or value.kind != "str":
                continue
            if value.value in seen:
                yield Finding(
                    value.span,
                    f"reason '{value.value}' is declared more than once; give each failure its own reason",
                    entry.path,
                )
            seen.add(str(value.value))
