"""FL103 error-contract-code-type: ``code`` is missing or of the wrong kind."""
from __future__ import annotations

from typing import Iterable

from ..project.view import UNRESOLVED_KINDS
from . import Example, Finding, Rule, register
from ._shared import SHAPE_PRELUDE, entry_label, kind_phrase


@register
class ErrorContractCodeType(Rule):
    code, name, severity = "FL103", "error-contract-code-type", "error"
    summary = "`code` is missing, or not a `JsonRpcErrorCode` member or int."
    why = "The code is what the failure surfaces as on the wire; without a real one clients cannot branch."
    prelude = SHAPE_PRELUDE
    VALID = (
        '''
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=-32001, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
''',
    )
    INVALID = (
        Example('''
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", when="No invoice has that id",  # error: FL103 "has no code"
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="locked", code="CONFLICT", when="The invoice is locked",  # error: FL103 "JsonRpcErrorCode"
                  recovery="Wait a minute, then call get_invoice again."),
])
async def get_invoice(invoice_id: str):
    return {}
'''),
    )

    def check_entry(self, entry, project) -> Iterable[Finding]:
        value = entry.get("code")
        if entry.entry.opaque and value is None:
            return
        if value is None:
            yield Finding(entry.entry.span, f"{entry_label(entry)} has no code; add code=JsonRpcErrorCode.<NAME>",
                          entry.path)  # fmt: skip
        elif value.kind not in ("code", "int", *UNRESOLVED_KINDS):
            yield Finding(
                value.span,
                f"{entry_label(entry)}: code must be a JsonRpcErrorCode member such as JsonRpcErrorCode.NOT_FOUND, "
                f"got {kind_phrase(value)}",
                entry.path,
            )
