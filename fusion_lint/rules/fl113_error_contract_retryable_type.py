"""FL113 error-contract-retryable-type: ``retryable`` is not a bool."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import UNRESOLVED_KINDS, ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label, kind_phrase


@register
class ErrorContractRetryableType(Rule):
    code, name, severity = "FL113", "error-contract-retryable-type", "warning"
    summary = "`retryable` is present but not a bool."
    why = "`retryable` becomes `data.retryable` of every failure; clients read it as a bool."
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="The ledger is down",
                  recovery="Wait a minute, then call get_invoice again.", retryable=True),
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id.", retryable=None),
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="The ledger is down",
                  recovery="Wait a minute, then call get_invoice again.",
                  retryable="yes"),  # error: FL113 "True or False"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("retryable")
        if value is not None and value.kind not in ("bool", "none", *UNRESOLVED_KINDS):
            yield Finding(
                value.span,
                f"{entry_label(entry)}: retryable must be True or False, got {kind_phrase(value)}",
                entry.path,
            )
