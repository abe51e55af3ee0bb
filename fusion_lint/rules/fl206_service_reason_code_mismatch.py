"""FL206 service-reason-code-mismatch: a declared reason raised with another code."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, handler_checkable, raises


@register
class ServiceReasonCodeMismatch(Rule):
    code, name, severity = "FL206", "service-reason-code-mismatch", "warning"
    summary = "A raise carries a declared reason in its data, with a different code than the contract declares."
    why = "The recovery hint is filled by reason; a mismatched code tells the client one thing and the hint another."
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    lookup()

def lookup():
    raise not_found("gone", {"reason": "no_match"})
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    lookup()

def lookup():
    raise conflict("gone", data={"reason": "no_match"})  # error: FL206 "NOT_FOUND"
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if not handler_checkable(definition):
            return
        codes = {entry.reason: entry.code for entry in definition.contract.entries if entry.reason is not None}
        for site, path in raises(definition):
            declared = codes.get(site.data_reason) if site.data_reason in codes else None
            if declared and site.code and site.code != declared:
                yield Finding(
                    site.span,
                    f"raises reason '{site.data_reason}' as {site.code}, but the contract declares it as {declared}; "
                    f"raise it with code {declared} or fix the contract",
                    path,
                )
