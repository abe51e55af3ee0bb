"""FL102 error-contract-entry-type: an entry is neither ``ErrorContract(...)`` nor a dict literal."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE


@register
class ErrorContractEntryType(Rule):
    code, name, severity = "FL102", "error-contract-entry-type", "error"
    summary = "Each entry must be `ErrorContract(...)` or a dict literal."
    why = "Anything else is rejected when the tool is defined, or carries no reason and code at all."
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    {"reason": "no_match", "code": -32001, "when": "No invoice", "recovery": "Call list_invoices to find valid ids."},
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    "no_match",  # error: FL102 "is a string"
    42,  # error: FL102 "is a number"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        for item, path in definition.contract.bad_items:
            yield Finding(
                item.span,
                f"contract entry is {item.description}; write ErrorContract(reason=..., code=..., when=..., "
                "recovery=...) or a dict literal with those keys",
                path,
            )
