"""FL400 recovery-names-internal: the recovery names code the model cannot reach."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._recovery_text import KIND_LABELS, scan_recovery
from fusion_lint.rules._shared import RECOVERY_PRELUDE, entry_label, listing, recovery


@register
class RecoveryNamesInternal(Rule):
    code, name, severity = "FL400", "recovery-names-internal", "warning"
    summary = (
        "The recovery names code the model cannot reach: a call such as `reset_cache()`, a private `_name`, "
        "a dotted module path, a file name, an environment variable, or a config flag, setting or constant."
    )
    why = (
        "The agent reading the hint can only call this server's tools. A function, a module path, a file "
        "or a flag in the hint is a step it cannot take: at best it gives up, at worst it invents a tool "
        "call with that name. Name the tool to call next, and its arguments, in plain words. Ordinary prose "
        "stays silent: abbreviations (e.g., i.e.), version numbers, URLs and domains, error code names (the "
        "members, the canonical codes and the codes the project's contracts declare), a registered tool "
        "written as a call (`list_invoices()`), and a dotted path that starts with one of the tools' "
        "arguments (`filters.date_from`)."
    )
    prelude = RECOVERY_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices with the customer_id to find a valid invoice id, then retry."),
    ErrorContract(reason="ledger_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="The ledger is down",
                  recovery="Wait a few minutes, then try again; see https://status.example.com for outages."),
    ErrorContract(reason="busy", code="SERVER_BUSY", when="Too many calls",
                  recovery="On SERVER_BUSY wait 30 seconds (e.g. after v2.1 upgrades), then call list_invoices()."),
])
async def get_invoice(invoice_id: str, ctx: Context) -> dict:
    raise ctx.fail("no_match")
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Run billing.cache.reset() and then retry get_invoice."),  # error: FL400 "'billing.cache.reset()' (a function call)"
    ErrorContract(
        reason="locked", code=JsonRpcErrorCode.CONFLICT, when="The invoice is locked",
        recovery="Set MAX_RETRIES in settings.py or pass --force, then call _reload_index first.",  # error: FL400 "'MAX_RETRIES' (a config constant), 'settings.py' (a file), '--force' (a command-line flag) and '_reload_index' (a private name)"
    ),
    ErrorContract(reason="no_token", code=JsonRpcErrorCode.UNAUTHORIZED, when="No ledger token",
                  recovery="Set the LEDGER_TOKEN environment variable or $HOME/.netrc, then retry."),  # error: FL400 "'LEDGER_TOKEN' (an environment variable)"

])
async def get_invoice(invoice_id: str, ctx: Context) -> dict:
    raise ctx.fail("no_match")
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = recovery(entry)
        if value is None:
            return
        internal = scan_recovery(str(value.value), project.vocabulary).internal
        if internal:
            named = listing([f"'{token}' ({KIND_LABELS[kind]})" for token, kind in internal])
            yield Finding(
                value.span,
                f"{entry_label(entry)}: recovery names code the model cannot reach: {named}; the agent can only "
                "call tools, so name the tool to call next instead",
                entry.path,
            )
