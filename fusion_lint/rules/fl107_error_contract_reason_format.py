"""FL107 error-contract-reason-format: ``reason`` is not snake_case."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from fusion_lint.base.diagnostics import Edit, Fix, Span
from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import string_like, valid_span
from fusion_lint.rules._shared import REASON_FORMAT, SHAPE_PRELUDE, snake_case


@register
class ErrorContractReasonFormat(Rule):
    code, name, severity = "FL107", "error-contract-reason-format", "warning"
    summary = "`reason` is not snake_case."
    why = "Reasons are identifiers clients switch on; one consistent format avoids near-duplicates like `NoMatch`/`no-match`."
    fix = "Renames the reason to its snake_case form, with every `ctx.fail`/`ctx.recovery_for` of it in the handler (unsafe)."
    fix_safety = "unsafe"
    limits = (
        "No fix when a use of the reason would be left behind: one in another file (a fix edits one file), a "
        'service raising it by `data={"reason": ...}`, or a contract that already declares the new name.'
    )
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="invoice_not_found_2", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example(
            """
@tool("get_invoice", errors=[
    ErrorContract(reason="NoMatch", code=JsonRpcErrorCode.NOT_FOUND,  # error: FL107 "'no_match'"
                  when="No invoice has that id", recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str, ctx):
    raise ctx.fail("NoMatch")
""",
            fixed="""
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND,  # error: FL107 "'no_match'"
                  when="No invoice has that id", recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str, ctx):
    raise ctx.fail("no_match")
""",
        ),
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="no-match", code=JsonRpcErrorCode.NOT_FOUND,  # error: FL107 "snake_case"
                  when="No invoice has that id", recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("reason")
        if value is not None and value.kind == "str" and str(value.value).strip():
            if not REASON_FORMAT.match(str(value.value)):
                new = snake_case(str(value.value))
                yield Finding(
                    value.span,
                    f"reason '{value.value}' is not snake_case; rename it to '{new}'",
                    entry.path,
                    partial(rename_reason, entry, new),
                )


def rename_reason(entry: ResolvedEntry, new: str, text: str) -> Fix | None:
    """Rename a reason literal, and every literal ``ctx.fail``/``ctx.recovery_for`` of it in the
    reach of every handler whose contract holds this entry (a shared contract constant serves
    several tools). No fix when that would leave a use behind: a use in another file (a fix edits
    one file), a service raising it by ``data={"reason": ...}``, or a contract already declaring
    the new name. Unsafe: clients may switch on the old reason."""
    raw = entry.entry.get("reason")
    if raw is None or raw.value.kind != "str":
        return None  # a reference to a constant: renaming the constant is the user's call
    old = str(raw.value.value)
    path = entry.path
    if not valid_span(text, raw.value.span):
        return None
    spans: dict[int, Span] = {raw.value.span.start: raw.value.span}
    for holder in entry.holders:
        if any(other.reason == new for other in holder.contract.entries):
            return None
        for reached in holder.reach:
            for fail_site in reached.function.fail_sites:
                if fail_site.reason != old:
                    continue
                if reached.path != path or not valid_span(text, fail_site.reason_span):
                    return None
                assert fail_site.reason_span is not None
                spans[fail_site.reason_span.start] = fail_site.reason_span
            if any(raised.data_reason == old for raised in reached.function.raises):
                return None
    edits = [Edit(s.start, s.end, string_like(text[s.start : s.end], new)) for _, s in sorted(spans.items())]
    uses = len(edits) - 1
    also = f" and {uses} use{'s' if uses != 1 else ''}" if uses else ""
    return Fix(f"Rename reason '{old}' to '{new}'{also}", edits, "unsafe")
