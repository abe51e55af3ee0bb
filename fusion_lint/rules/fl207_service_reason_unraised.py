"""FL207 service-reason-unraised: a ``thrown_by="service"`` reason nothing raises (opt-in)."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, handler_checkable, named_reasons


@register
class ServiceReasonUnraised(Rule):
    code, name, severity = "FL207", "service-reason-unraised", "warning"
    default_enabled = False
    summary = 'An entry marked `thrown_by="service"` that no reachable code raises (opt-in).'
    why = (
        '`thrown_by="service"` exempts a reason from FL202 on trust; this verifies the trust by following '
        "the handler's calls. Opt-in: it needs every service in view."
    )
    options = "Opt-in: `--extend-select FL207`. `follow-calls` (default 3) bounds how deep the services are searched."
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="Gone",
                  recovery="Call list_invoices to find a valid id.", thrown_by="service"),
])
async def get_invoice(invoice_id: str, ctx: Context):
    lookup()

def lookup():
    raise not_found("gone", {"reason": "gone"})
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="Gone",  # error: FL207 "'gone'"
                  recovery="Call list_invoices to find a valid id.", thrown_by="service"),
])
async def get_invoice(invoice_id: str, ctx: Context):
    lookup()

def lookup():
    return None
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if not handler_checkable(definition):
            return
        named = named_reasons(definition)
        for entry in definition.contract.entries:
            if entry.reason is not None and entry.thrown_by == "service" and entry.reason not in named:
                yield Finding(
                    entry.get("reason").span,  # type: ignore[union-attr]  # its reason is not None: the field is there
                    f"reason '{entry.reason}' is marked thrown_by=\"service\" but no code the handler reaches raises "
                    f"it; raise it with data={{'reason': '{entry.reason}'}} in the service, or drop the entry",
                    entry.path,
                )
