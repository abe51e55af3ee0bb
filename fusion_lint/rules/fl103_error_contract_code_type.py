"""FL103 error-contract-code-type: ``code`` is missing or of the wrong kind."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import UNRESOLVED_KINDS, ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label, kind_phrase
from mcp_fusion.errors import CODE_EXPECTATION


@register
class ErrorContractCodeType(Rule):
    code, name, severity = "FL103", "error-contract-code-type", "error"
    summary = "`code` is missing, or not a `JsonRpcErrorCode` member, an int or a string code."
    why = (
        "The code is what the failure surfaces as on the wire; without a real one clients cannot branch. "
        "Codes are closed-then-open: a `JsonRpcErrorCode` member (or its int value), one of MCP Fusion's "
        'canonical string codes (`"SERVER_BUSY"`, `"DEPRECATED"`, ...) or a custom `UPPER_SNAKE_CASE` '
        "string; whether a string or an int is a code at all is FL104's question."
    )
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=-32001, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="busy", code="SERVER_BUSY", when="Too many requests in flight",
                  recovery="Wait a few seconds, then call get_invoice again."),
    ErrorContract(reason="locked", code="INVOICE_LOCKED", when="The invoice is locked",
                  recovery="Wait a minute, then call get_invoice again."),
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", when="No invoice has that id",  # error: FL103 "has no code"
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="locked", code=409.5, when="The invoice is locked",  # error: FL103 "got a float"
                  recovery="Wait a minute, then call get_invoice again."),
    ErrorContract(reason="gone", code=None, when="The invoice was deleted",  # error: FL103 "got None"
                  recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("code")
        if entry.entry.opaque and value is None:
            return
        if value is None:
            yield Finding(
                entry.entry.span, f"{entry_label(entry)} has no code; add code=JsonRpcErrorCode.<NAME>", entry.path
            )
        elif value.kind not in ("code", "int", "str", *UNRESOLVED_KINDS):
            yield Finding(
                value.span,
                f"{entry_label(entry)}: code must be {CODE_EXPECTATION}, got {kind_phrase(value)}",
                entry.path,
            )
