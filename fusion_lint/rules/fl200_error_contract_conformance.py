"""FL200 error-contract-conformance: an undeclared, non-baseline code is raised."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.facts.model import is_runtime
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import BASELINE, CODED_RAISES, HANDLER_PRELUDE, code_spelling, handler_checkable, raises
from mcp_fusion import FACTORY_CODES


@register
class ErrorContractConformance(Rule):
    code, name, severity = "FL200", "error-contract-conformance", "warning"
    summary = "The handler, or code it calls, raises a non-baseline code the contract does not declare."
    limits = (
        "Codes are compared by name, whatever their spelling (`JsonRpcErrorCode.NOT_FOUND`, `-32001`, "
        '`"NOT_FOUND"`); the baseline is the `JsonRpcErrorCode` members of `BASELINE_CODES` only, so a '
        'canonical string code such as `"SERVER_BUSY"` must be declared although it mirrors as '
        "SERVICE_UNAVAILABLE. A raise whose exception is computed (`raise TABLE[k](...)`) is not guessed at."
    )
    why = (
        "Clients and agents plan around the declared failure surface; an undeclared code is a failure "
        "nobody prepared for, with no reason and no recovery hint."
    )
    options = (
        "`follow-calls` (default 3): how deep calls from the handler are followed; the handler's direct "
        "callee is depth 1, so 1 follows the handler's own calls and no further, 0 only the handler."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")
""",
        # Baseline codes (SERVICE_UNAVAILABLE, TIMEOUT, ...) never need declaring.
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    from mcp_fusion import service_unavailable
    raise service_unavailable("Upstream down")
""",
        # What a computed exception raises is not guessed.
        """
FACTORIES = {"locked": conflict}

@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise FACTORIES[invoice_id]("Invoice is locked")
""",
        """
from mcp_fusion import not_found


def missing(invoice_id: str):
    return not_found(f"No invoice {invoice_id}")


@tool("get_invoice", errors=[ErrorContract(reason="no_invoice", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                                           recovery="Call list_invoices and retry with one of its IDs.")])
async def get_invoice(invoice_id: str, ctx: Context):
    raise missing(invoice_id)  # NOT_FOUND is declared
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise conflict("Invoice is locked")  # error: FL200 "CONFLICT"
"""),
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    helper()

def helper():
    raise McpError(JsonRpcErrorCode.FORBIDDEN, "no")  # error: FL200 "FORBIDDEN"
"""),
        # Both branches of a conditional raise count; a string code is the code of that name.
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise (not_found("gone") if invoice_id else conflict("locked"))  # error: FL200 "CONFLICT"
    raise McpError("SERVER_BUSY", "Too many calls")  # error: FL200 "SERVER_BUSY"
"""),
        Example("""
from mcp_fusion import not_found


def missing(invoice_id: str):
    return not_found(f"No invoice {invoice_id}")


@tool("get_invoice", errors=[ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="Locked",
                                           recovery="Wait a minute, then call get_invoice again.")])
async def get_invoice(invoice_id: str, ctx: Context):
    raise missing(invoice_id)  # error: FL200 "raises what missing() returns, not_found(...): NOT_FOUND"
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if not handler_checkable(definition):
            return
        codes = {entry.code for entry in definition.contract.entries if entry.reason is not None and entry.code}
        listed = ", ".join(sorted(codes)) or "none"
        made = _made_by_project_functions(definition, project)
        for site, path in raises(definition):
            if site.kind in CODED_RAISES and site.code and site.code not in BASELINE and site.code not in codes:
                yield Finding(
                    site.span,
                    f"raises {site.code}, which its contract does not declare (declared: {listed}); declare an "
                    f"ErrorContract with code={code_spelling(site.code)} or raise a declared failure",
                    path,
                )
            elif site.kind == "call" and site.exception in made:
                factory, code = made[site.exception]
                if code not in BASELINE and code not in codes:
                    yield Finding(
                        site.span,
                        f"raises what {site.exception.rpartition('.')[2]}() returns, {factory}(...): {code}, which "
                        f"its contract does not declare (declared: {listed}); declare an ErrorContract with "
                        f"code={code_spelling(code)} or raise a declared failure",
                        path,
                    )


def _made_by_project_functions(definition: ResolvedDefinition, project: ProjectView) -> dict[str, tuple[str, str]]:
    """``module.function`` -> (factory, code) for each function in reach that returns the runtime's
    error factory (``def make_error(x): return not_found(...)``; raised as ``raise make_error(x)``)."""
    made: dict[str, tuple[str, str]] = {}
    for reached in definition.reach:
        facts = project.files.get(reached.path)
        if facts is None or facts.module is None:
            continue
        for returned in reached.function.returns:
            callee = (returned.value.callee or "") if returned.value.kind == "call" else ""
            prefix, _, factory = callee.rpartition(".")
            if factory in FACTORY_CODES and is_runtime(prefix, project.runtime_modules):
                made[f"{facts.module}.{reached.function.qualname}"] = (factory, FACTORY_CODES[factory].name)
                break
    return made
