"""FL306 error-returned-as-success: a tool returns a failure as a successful result."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._returned import built_from_caught, caught_through_local, failure
from fusion_lint.rules._shared import HANDLER_PRELUDE


@register
class ErrorReturnedAsSuccess(Rule):
    code, name, severity = "FL306", "error-returned-as-success", "warning"
    summary = (
        'A tool returns a failure (`"Error: ..."`, `{"error": ...}`, the caught exception) as a successful result.'
    )
    why = (
        "A returned value is a success on the wire: `is_error` is false, there is no code, no reason and no "
        'recovery. The model reads "Error: not found" as the tool\'s answer, and may carry on as if it had '
        "worked, or retry blindly. Raise a declared failure instead: `raise fail(<reason>)` under `@contract` "
        "(or `ctx.fail` in a FusionServer tool), or an error factory."
    )
    limits = (
        "The handler's own returns (resources and prompts included). A string counts when its first word is "
        "Error, Failed, Failure, Exception, Unable, Cannot or Could not (any case; not `Exception(`); a whole "
        'upper-case status word (`"FAILED"`) is data. A dict counts when its `error`/`errors` key holds a '
        "message (a string, `str(e)`, an object with a `message`), never `[]`, a number or a list of findings, "
        'and not next to `"status": "info"`. `CallToolResult(isError=True)` and fastmcp\'s `ToolResult` are '
        "proper failures. A failure returned by a helper the handler delegates to is not followed."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def validate_invoice(invoice_id: str) -> dict:
    errors = check(invoice_id)
    if not errors:
        return {"valid": True, "errors": []}
    return {"valid": False, "errors": errors, "error_count": len(errors)}


@mcp.tool()
def job_errors(job_id: str) -> dict:
    return {"status": "info", "error": "No error details found for this job"}


@mcp.tool()
def latest_invoice(customer_id: str) -> str:
    try:
        invoice = fetch_latest(customer_id)
    except KeyError as e:
        invoice = f"no invoice: {e}"
    if invoice.startswith("no invoice"):
        invoice = "None yet: the customer's first invoice is issued at the end of the month."
    return invoice  # not right after the try: what the except clause assigned is replaced
""",
    )
    INVALID = (
        Example("""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> str:
    try:
        return lookup(invoice_id)
    except KeyError as e:
        return f"Error: no invoice {e}"  # error: FL306 "a string starting 'Error:'"


@mcp.tool()
def void_invoice(invoice_id: str) -> dict:
    if not invoice_id:
        return {"error": "An invoice ID is required"}  # error: FL306 "'error' message"
    return {"voided": invoice_id}


@mcp.tool()
def pay_invoice(invoice_id: str) -> str:
    try:
        result = pay(invoice_id)
    except ConnectionError as e:
        result = f"Payment failed: {e}"
    return result  # error: FL306 "'result', built from the caught exception 'e'"
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.handler_of:
            return
        framework = any(d.definition.server is not None for d in function.handler_of)
        advice = "raise fail(<reason>) under @contract" if framework else "raise ctx.fail(<reason>)"
        for returned in function.function.returns:
            how = failure(returned.value)
            if how is None:
                caught = built_from_caught(returned)
                how = f"a value built from the caught exception {caught!r}" if caught else None
            if how is None and (through := caught_through_local(returned, function.function)) is not None:
                how = f"{through[1]!r}, built from the caught exception {through[0]!r} in its except clause"
            if how is not None:
                yield Finding(
                    returned.span,
                    f"returns a failure as a successful result ({how}): the model reads it as the tool's answer, "
                    f"with no error flag, code or recovery; {advice} or an error factory instead",
                    function.path,
                )
