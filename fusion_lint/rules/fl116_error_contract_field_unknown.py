"""FL116 error-contract-field-unknown: an entry has a field ErrorContract does not know."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label
from mcp_fusion import CONTRACT_FIELDS


@register
class ErrorContractFieldUnknown(Rule):
    code, name, severity = "FL116", "error-contract-field-unknown", "error"
    summary = "An entry has a field ErrorContract does not know (a typo such as `recovry=`)."
    why = "An unknown field is rejected when the tool is defined, and the intended field stays unset."
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
                  recovry="Call list_invoices to find a valid invoice id."),  # error: FL116 "did you mean 'recovery'"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        for entry_field in entry.entry.fields:
            if entry_field.name not in CONTRACT_FIELDS:
                close = difflib.get_close_matches(entry_field.name, CONTRACT_FIELDS, n=1, cutoff=0.6)
                hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(CONTRACT_FIELDS)})"
                yield Finding(
                    entry_field.key_span, f"{entry_label(entry)}: unknown field '{entry_field.name}'{hint}", entry.path
                )
