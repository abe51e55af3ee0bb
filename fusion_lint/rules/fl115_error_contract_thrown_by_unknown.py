"""FL115 error-contract-thrown-by-unknown: ``thrown_by`` is not ``"service"``."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import UNRESOLVED_KINDS, ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label, kind_phrase
from mcp_fusion import THROWN_BY_VALUES


@register
class ErrorContractThrownByUnknown(Rule):
    code, name, severity = "FL115", "error-contract-thrown-by-unknown", "error"
    summary = '`thrown_by` is present but not `"service"`.'
    why = "`thrown_by` is a lint-only marker with one meaning; any other value is a typo the runtime rejects."
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="The ledger is down",
                  recovery="Wait a minute, then call get_invoice again.", thrown_by="service"),
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
                  thrown_by="services"),  # error: FL115 "'service'"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("thrown_by")
        if value is None or value.kind in ("none", *UNRESOLVED_KINDS):
            return
        if value.kind != "str" or value.value not in THROWN_BY_VALUES:
            shown = repr(value.value) if value.kind == "str" else kind_phrase(value)
            yield Finding(value.span, f"{entry_label(entry)}: thrown_by must be 'service', got {shown}", entry.path)
