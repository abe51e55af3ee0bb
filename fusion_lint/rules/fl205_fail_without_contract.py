"""FL205 fail-without-contract: ``ctx.fail`` where the definition declares no contract."""
from __future__ import annotations

from typing import Iterable

from . import Example, Finding, Rule, register
from ._shared import HANDLER_PRELUDE, fail_sites


@register
class FailWithoutContract(Rule):
    code, name, severity = "FL205", "fail-without-contract", "error"
    summary = "`ctx.fail(...)` in a handler whose definition declares no contract."
    why = "With no contract, every `ctx.fail` reason is undeclared and becomes an INTERNAL_ERROR at runtime."
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
@tool("get_invoice")
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")  # error: FL205 "declares no contract"
'''),
    )

    def check_definition(self, definition, project) -> Iterable[Finding]:
        if definition.handler is None or definition.contract.declared:
            return
        for site, path in fail_sites(definition):
            if site.method == "fail":
                yield Finding(
                    site.span,
                    "ctx.fail() in a definition that declares no contract (at runtime an INTERNAL_ERROR); declare "
                    "errors=[ErrorContract(...)] on the definition",
                    path,
                )
