"""FL104 error-contract-code-unknown: ``code`` names no ``JsonRpcErrorCode`` member."""
from __future__ import annotations

import difflib
from typing import Iterable

from mcp_fusion import JsonRpcErrorCode

from ..project.view import CODE_NAMES
from . import Example, Finding, Rule, register
from ._shared import SHAPE_PRELUDE, entry_label


@register
class ErrorContractCodeUnknown(Rule):
    code, name, severity = "FL104", "error-contract-code-unknown", "error"
    summary = "`code` names no `JsonRpcErrorCode` member."
    why = "An unknown member fails when the module is imported; an unknown int surfaces as nothing a client knows."
    prelude = SHAPE_PRELUDE
    VALID = (
        '''
@tool("get_invoice", errors=[
    ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="The invoice is locked",
                  recovery="Wait a minute, then call get_invoice again."),
])
async def get_invoice(invoice_id: str):
    return {}
''',
    )
    INVALID = (
        Example('''
@tool("get_invoice", errors=[
    ErrorContract(reason="locked", code=JsonRpcErrorCode.NOPE, when="The invoice is locked",  # error: FL104 "NOPE"
                  recovery="Wait a minute, then call get_invoice again."),
    ErrorContract(reason="gone", code=-1, when="The invoice was deleted",  # error: FL104 "-1"
                  recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
'''),
    )

    def check_entry(self, entry, project) -> Iterable[Finding]:
        value = entry.get("code")
        if value is None:
            return
        if value.kind == "code" and value.value not in JsonRpcErrorCode.__members__:
            close = difflib.get_close_matches(str(value.value), JsonRpcErrorCode.__members__, n=1)
            hint = f"; did you mean JsonRpcErrorCode.{close[0]}?" if close else ""
            yield Finding(value.span, f"{entry_label(entry)}: JsonRpcErrorCode has no member {value.value}{hint}",
                          entry.path)  # fmt: skip
        elif value.kind == "int" and value.value not in CODE_NAMES:
            yield Finding(
                value.span,
                f"{entry_label(entry)}: {value.value} is no JsonRpcErrorCode value; use a JsonRpcErrorCode member",
                entry.path,
            )
