"""FL203 error-contract-reason-undeclared: ``ctx.fail`` names a reason the contract does not declare."""
from __future__ import annotations

from typing import Iterable

from . import Example, Finding, Rule, register
from ._shared import HANDLER_PRELUDE, fail_sites, handler_checkable


@register
class ErrorContractReasonUndeclared(Rule):
    code, name, severity = "FL203", "error-contract-reason-undeclared", "error"
    summary = "`ctx.fail`/`ctx.recovery_for` names a reason the contract does not declare."
    why = "At runtime an undeclared reason becomes an INTERNAL_ERROR: the modeled failure is lost."
    prelude = HANDLER_PRELUDE
    VALID = (
        '''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")
''',
    )
    INVALID = (
        Example('''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_such_invoice")  # error: FL203 "'no_such_invoice'"
'''),
    )

    def check_definition(self, definition, project) -> Iterable[Finding]:
        if not handler_checkable(definition):
            return
        reasons = [entry.reason for entry in definition.contract.entries if entry.reason is not None]
        for site, path in fail_sites(definition):
            if site.reason is not None and site.reason not in reasons:
                listed = ", ".join(f"'{r}'" for r in reasons) or "none"
                yield Finding(
                    site.span,
                    f"{site.written}('{site.reason}') names a reason the contract does not declare (at runtime "
                    f"an INTERNAL_ERROR); declare it or use one of: {listed}",
                    path,
                )
