"""FL104 error-contract-code-unknown: ``code`` is no code: an unknown member, int or string (DESIGN §3.1)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label
from mcp_fusion import CANONICAL_CODES, JsonRpcErrorCode, is_valid_code


@register
class ErrorContractCodeUnknown(Rule):
    code, name, severity = "FL104", "error-contract-code-unknown", "error"
    summary = (
        "`code` is `JsonRpcErrorCode.NOPE`, an int that is no member's value, or a string that is neither a "
        "canonical code nor `UPPER_SNAKE_CASE`."
    )
    why = (
        "An unknown member fails when the module is imported, and the runtime refuses an unknown int or a "
        "string that is no code when the tool is defined: the server does not start. A custom string code "
        '(`"INVOICE_LOCKED"`) is fine: it reaches the client by name.'
    )
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
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
    ErrorContract(reason="locked", code=JsonRpcErrorCode.NOPE, when="The invoice is locked",  # error: FL104 "NOPE"
                  recovery="Wait a minute, then call get_invoice again."),
    ErrorContract(reason="gone", code=-1, when="The invoice was deleted",  # error: FL104 "-1"
                  recovery="Call list_invoices to find a valid invoice id."),
    ErrorContract(reason="busy", code="server busy", when="Too many requests",  # error: FL104 "'server busy'"
                  recovery="Wait a few seconds, then call get_invoice again."),
    ErrorContract(reason="missing", code="not_found", when="No invoice",  # error: FL104 "did you mean 'NOT_FOUND'"
                  recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("code")
        if value is None:
            return
        if value.kind == "code" and value.value not in JsonRpcErrorCode.__members__:
            close = difflib.get_close_matches(str(value.value), JsonRpcErrorCode.__members__, n=1)
            hint = f"; did you mean JsonRpcErrorCode.{close[0]}?" if close else ""
            yield Finding(
                value.span, f"{entry_label(entry)}: JsonRpcErrorCode has no member {value.value}{hint}", entry.path
            )
        elif value.kind == "int" and not is_valid_code(value.value):
            yield Finding(
                value.span,
                f"{entry_label(entry)}: {value.value} is no JsonRpcErrorCode value; use a JsonRpcErrorCode member",
                entry.path,
            )
        elif value.kind == "str" and not is_valid_code(value.value):
            text = str(value.value)
            close = difflib.get_close_matches(text.upper().replace(" ", "_").replace("-", "_"), KNOWN_NAMES, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            yield Finding(
                value.span,
                f"{entry_label(entry)}: {text!r} is no error code: use a JsonRpcErrorCode member, a canonical code "
                f"or a custom UPPER_SNAKE_CASE string{hint}",
                entry.path,
            )


KNOWN_NAMES = sorted({*JsonRpcErrorCode.__members__, *CANONICAL_CODES})
