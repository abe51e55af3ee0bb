"""FL201 error-contract-prefer-fail: a declared code raised directly instead of ``ctx.fail``."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from fusion_lint.base.diagnostics import Fix
from fusion_lint.facts.model import Raise
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import CallText, python_string
from fusion_lint.rules._shared import BASELINE, HANDLER_PRELUDE, handler_checkable, raises


@register
class ErrorContractPreferFail(Rule):
    code, name, severity = "FL201", "error-contract-prefer-fail", "warning"
    summary = "The handler raises a declared code directly instead of `raise ctx.fail(<reason>)`."
    why = (
        "`ctx.fail` stamps the reason, the declared message and `retryable`, and the boundary adds the "
        "recovery hint; a bare factory carries none of that, so the agent gets a code without a next step."
    )
    fix = 'Rewrites the raise to `raise ctx.fail("<reason>", <message>)` when exactly one reason matches (unsafe: it changes `data`).'
    fix_safety = "unsafe"
    limits = (
        "Only the handler's own body (a service raising a factory with the reason in `data` is the documented pattern)."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match", "No such invoice")
""",
    )
    INVALID = (
        Example(
            """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise not_found("No such invoice")  # error: FL201 "'no_match'"
""",
            fixed="""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match", "No such invoice")  # error: FL201 "'no_match'"
""",
        ),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if not handler_checkable(definition):
            return
        declared = [entry for entry in definition.contract.entries if entry.reason is not None]
        context = definition.handler.function.context_param if definition.handler is not None else None
        for site, path in raises(definition, depth=0):
            if site.kind not in ("mcp_error", "factory") or not site.code or site.code in BASELINE:
                continue
            matching = [entry.reason for entry in declared if entry.code == site.code]
            if not matching:
                continue
            quoted = ", ".join(f"'{reason}'" for reason in matching)
            fix = None
            if len(matching) == 1 and context:
                fix = partial(prefer_fail, site=site, reason=str(matching[0]), context=context)
            yield Finding(
                site.span,
                f"raises {site.code} directly; raise ctx.fail({quoted if len(matching) == 1 else '<reason>'}) "
                f"instead so the reason and recovery reach the agent (declared with this code: {quoted})",
                path,
                fix,
            )


def prefer_fail(text: str, *, site: Raise, reason: str, context: str) -> Fix | None:
    """``raise not_found(msg, data, cause=e)`` → ``raise ctx.fail("r", msg, data, cause=e)``.

    ``ctx.fail(reason, message=None, data=None, *, cause=None)`` takes a factory's arguments after
    the reason, and McpError's after its code, so every argument keeps its meaning. Unsafe: the
    raised error's data now carries the reason and the contract's ``retryable``."""
    call = CallText.of(text, site.call)
    if call is None:
        return None
    literal = python_string(reason)
    call.replace_func(f"{context}.fail")
    if site.kind == "factory":
        call.prepend_argument(literal)
    else:
        index = call.positional_index("code")
        if index is None:
            return None
        call.replace_argument(index, literal, keyword="reason")
    edit = call.edit()
    return Fix(f'Raise {context}.fail("{reason}")', [edit], "unsafe") if edit is not None else None
