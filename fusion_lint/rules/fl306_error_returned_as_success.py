"""FL306 error-returned-as-success: a tool returns a failure as a successful result."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from fusion_lint.facts.model import Return
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._returned import (
    built_from_caught,
    caught_through_local,
    failure,
    informational,
    is_error_result,
)
from fusion_lint.rules._shared import HANDLER_PRELUDE

#: A project class named as an error response (``ErrorResponse``, ``ToolErrorResult``, ``ApiErrorOutput``).
_ERROR_MODEL = re.compile(r"Error(Response|Result|Output|Reply)$")


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
        "proper failures. A failure returned by a helper of the project that the handler returns "
        '(`return failed("fetch", e)`, `return await fetch(url)`) is reported at a tool\'s return, naming '
        "the helper and the line where it fails, when the helper's value alone says so (an error text, an "
        "`error` message, its own parameter as one, an `...ErrorResponse(...)`); a helper's value built from "
        "an exception it caught is not followed (a project may turn its status into an error result itself), "
        "nor are deeper helpers."
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


def render(invoice: dict) -> str:
    return f"Invoice {invoice['id']}: {invoice['total']}"


@mcp.tool()
def show_invoice(invoice_id: str) -> str:
    return render(lookup(invoice_id))  # the helper returns data on every path
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
        Example("""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


def error_response(message: str) -> dict:
    return {"error": message, "success": False}


def fetch_invoice(invoice_id: str) -> str:
    try:
        return lookup(invoice_id)
    except KeyError:
        return "Error: no such invoice"


@mcp.tool()
def void_invoice(invoice_id: str) -> dict:
    if not invoice_id:
        return error_response("An invoice ID is required")  # error: FL306 "what error_response() returns"
    return {"voided": invoice_id}


@mcp.tool()
def get_invoice(invoice_id: str) -> str:
    return fetch_invoice(invoice_id)  # error: FL306 "what fetch_invoice() returns"
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if function.handler_of:
            framework = any(d.definition.server is not None for d in function.handler_of)
            for returned in function.function.returns:
                how = _how(returned, function)
                if how is not None:
                    yield Finding(
                        returned.span,
                        f"returns a failure as a successful result ({how}): the model reads it as the tool's "
                        f"answer, with no error flag, code or recovery; {_advice(framework)} or an error factory "
                        "instead",
                        function.path,
                    )
        yield from _through_a_helper(function)


def _how(returned: Return, function: FunctionView) -> str | None:
    """How ``returned`` is a failure returned as a success, for the message, or None."""
    how = failure(returned.value) or _error_model(returned)
    if how is None and (caught := built_from_caught(returned)) is not None:
        how = f"a value built from the caught exception {caught!r}"
    if how is None and (through := caught_through_local(returned, function.function)) is not None:
        how = f"{through[1]!r}, built from the caught exception {through[0]!r} in its except clause"
    return how


def _helper_failure(returned: Return, helper: FunctionView) -> str | None:
    """How a helper's return is a failure, read from the value alone: an error text, an ``error``
    message (its own or a parameter's), an error model. Not "built from a caught exception": a helper
    that formats what it caught (``format_response("error", str(e))``) builds a status the project may
    turn into an error result on its own (a middleware reading ``status``), judged on the corpus."""
    return failure(returned.value) or _error_model(returned) or _error_parameter(returned, helper)


def _error_model(returned: Return) -> str | None:
    """``return ErrorResponse(message=...)``: an instance of a class the project names as an error
    response or result, which the framework serialises as the tool's answer."""
    value = returned.value
    if value.kind != "call" or is_error_result(value):
        return None
    name = (value.callee or "").rpartition(".")[2]
    return f"a {name}(...)" if _ERROR_MODEL.search(name) else None


def _error_parameter(returned: Return, helper: FunctionView) -> str | None:
    """``return {"error": message, ...}`` in a helper, ``message`` one of its parameters: the message
    its callers pass (``error_response("A key is required.")``)."""
    if returned.value.kind != "dict" or informational(returned.value):
        return None
    for key, value in returned.value.keys:
        if key in ("error", "errors") and value.kind == "name" and value.text in helper.function.params:
            return f"a dict with an {key!r} message, its parameter {value.text!r}"
    return None


def _advice(framework: bool) -> str:
    return "raise fail(<reason>) under @contract" if framework else "raise ctx.fail(<reason>)"


def _through_a_helper(helper: FunctionView) -> Iterator[Finding]:
    """A handler's ``return helper(...)`` where the helper (project code) returns a failure: reported
    at the handler's return, which is what the model gets, naming the helper and where it fails. Read
    from the helper's side: its callers are what its item's key (and the snapshot's reads) cover."""
    failing = next(
        (
            (returned, how)
            for returned in helper.function.returns
            if (how := _helper_failure(returned, helper)) is not None
        ),
        None,
    )
    if failing is None:
        return
    returned_failure, how = failing
    qualname = helper.function.qualname
    for caller, _ in helper.callers:
        tools = [d for d in caller.handler_of if d.kind == "tool"]  # a resource's answer has no error flag
        if not tools or caller is helper:
            continue
        framework = any(d.definition.server is not None for d in tools)
        line = returned_failure.span.line
        where = f"line {line}" if caller.path == helper.path else f"{os.path.basename(helper.path)}:{line}"
        for returned in caller.function.returns:
            callee = returned.value.callee if returned.value.kind == "call" else None
            if callee is None or not (callee == qualname or callee.endswith("." + qualname)):
                continue
            if _how(returned, caller) is not None:
                continue  # the handler's own return reads as a failure already: one finding, the direct one
            yield Finding(
                returned.span,
                f"returns what {qualname}() returns, a failure as a successful result on one of its paths ({how}, "
                f"{where}): the model reads it as the tool's answer, with no error flag, "
                f"code or recovery; {_advice(framework)} or an error factory instead of returning it",
                caller.path,
                subjects=tools,
            )
