"""FL204 fail-not-raised: the error ``ctx.fail`` returns is discarded."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from fusion_lint.base.diagnostics import Edit, Fix
from fusion_lint.facts.model import FailSite
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import line_start, valid_span
from fusion_lint.rules._shared import HANDLER_PRELUDE, fail_sites, handler_checkable


@register
class FailNotRaised(Rule):
    code, name, severity = "FL204", "fail-not-raised", "error"
    summary = "The result of `ctx.fail(...)` is discarded: nothing is raised."
    why = "`ctx.fail` returns the error so the handler can `raise` it; called alone, the tool carries on as if nothing failed."
    fix = "Inserts `raise ` before the call."
    fix_safety = "safe"
    limits = "No fix where `raise` cannot go before the call (`await ctx.fail(...)`, a parenthesized call)."
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    error = ctx.fail("no_match")
    raise error
""",
    )
    INVALID = (
        Example(
            """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    ctx.fail("no_match")  # error: FL204 "raise ctx.fail"
""",
            fixed="""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")  # error: FL204 "raise ctx.fail"
""",
        ),
        Example(
            """
from mcp_fusion import fail


@tool("void_invoice", errors=ENTRIES)
async def void_invoice(invoice_id: str):
    fail("no_match")  # error: FL204 "write raise fail(...)"
""",
            fixed="""
from mcp_fusion import fail


@tool("void_invoice", errors=ENTRIES)
async def void_invoice(invoice_id: str):
    raise fail("no_match")  # error: FL204 "write raise fail(...)"
""",
        ),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if not handler_checkable(definition):
            return
        for site, path in fail_sites(definition):
            if site.method == "fail" and site.usage == "discarded":
                yield Finding(
                    site.span,
                    f"the error {site.written}() returns is discarded, so nothing fails; write raise {site.written}(...)",
                    path,
                    partial(insert_raise, site=site),
                )


def insert_raise(text: str, *, site: FailSite) -> Fix | None:
    """``raise `` before a ``ctx.fail(...)`` expression statement. Only where the call starts the
    statement (after an indent, ``;`` or a one-line ``if x:``)."""
    if not valid_span(text, site.span):
        return None
    before = text[line_start(text, site.span.start) : site.span.start].rstrip()
    if before and before[-1] not in ";:":
        return None
    return Fix("Raise the error", [Edit(site.span.start, site.span.start, "raise ")])
