"""FL114 error-contract-severity-unknown: ``severity`` is not a log level the runtime knows."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import UNRESOLVED_KINDS, ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label, kind_phrase
from mcp_fusion import SEVERITIES


@register
class ErrorContractSeverityUnknown(Rule):
    code, name, severity = "FL114", "error-contract-severity-unknown", "error"
    summary = f"`severity` is not one of {', '.join(SEVERITIES)}."
    why = "The severity is the log level of the failure record; the runtime rejects any other value."
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id.", severity="warning"),
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id.", severity="WARN"),  # error: FL114 "'WARN'"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("severity")
        if value is None or value.kind in ("none", *UNRESOLVED_KINDS):
            return
        if value.kind != "str" or value.value not in SEVERITIES:
            shown = repr(value.value) if value.kind == "str" else kind_phrase(value)
            yield Finding(
                value.span,
                f"{entry_label(entry)}: severity {shown} is not one of {', '.join(SEVERITIES)} (case-sensitive)",
                entry.path,
            )
