"""FL300 prefer-mcp-error-in-handler: the handler raises a plain builtin exception."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.facts.frameworks import what_the_client_reads, what_the_model_sees
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._builtin_raises import builtin_raises, unreadable_text
from fusion_lint.rules._shared import HANDLER_PRELUDE, tool_name


@register
class PreferMcpErrorInHandler(Rule):
    code, name, severity = "FL300", "prefer-mcp-error-in-handler", "warning"
    summary = (
        "The handler raises a builtin exception (`ValueError`, `KeyError`, `RuntimeError`, ...) that the model loses "
        "or misreads: the framework masks it, or sends it with no message or as `KeyError`'s quoted key."
    )
    why = (
        "A builtin exception carries no code, no reason and no recovery. Where the framework masks it (mcp 2.x "
        "MCPServer, fastmcp with `mask_error_details=True`, the low-level server of mcp 2.x, the runtime under "
        "`@contract`) the model reads a bare internal error and learns nothing. Where the framework sends its "
        "text (mcp 1.x FastMCP, fastmcp), the model can act on a sentence, but not on an exception with no "
        "message or on `KeyError(key)`, whose text is the key in quotes. Programming-error guards (`TypeError`, "
        "`AssertionError`, `NotImplementedError`) are fine."
    )
    limits = (
        "Where the framework sends the text, a builtin raised with a message is not reported: the model reads "
        'it (`raise ValueError("url is required.")`, an f-string, a message in a variable, a caught '
        'exception\'s text re-wrapped as `f"Failed to list collections: {e}"`: judged on real servers, the '
        "model can act on these). Each is still an undeclared failure: FL208 drafts its contract, and the "
        "opt-in FL309 `undeclared-guard` reports the author's own sentences. `raise ValueError(f\"Unknown tool: "
        "{name}\")` in a dispatcher is the protocol's answer to a name it does not serve and is not reported. "
        "Re-raising what was caught (`raise`, `raise e`) is never reported, nor a raise an enclosing `try` of "
        "the same function, or one around the call in a caller, catches and does not re-raise, nor one a "
        "decorator of the project between the framework and the handler catches around its call of the "
        "handler (`@mcp.tool()` over `@handle_exceptions`, whose wrapper returns the error). A raise in code the "
        "handler calls is reported where it is, naming the tools it escapes from; a resource's or a prompt's, "
        "as what the framework answers there (a JSON-RPC error, not a result)."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    if not invoice_id:
        raise NotImplementedError
    try:
        return lookup(invoice_id)
    except ValueError as e:
        raise
""",
        """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    try:
        if not invoice_id:
            raise ValueError("empty id")
        return {"id": invoice_id}
    except ValueError:
        return {"id": None}
""",
        """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    if not invoice_id.isdigit():
        raise ValueError(f"Invoice ids are digits; {invoice_id} is not.")  # sent verbatim: FL309's, opt-in
    return {"id": invoice_id}
""",
        """
from functools import wraps

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("cache")


def handle_exceptions(func):
    @wraps(func)
    async def wrapper(*args, **kwargs):
        try:
            return await func(*args, **kwargs)
        except Exception as e:
            return {"error": str(e)}
    return wrapper


@mcp.tool()
@handle_exceptions
async def flush_cache(name: str) -> dict:
    if not name:
        raise ValueError("A cache name is required")  # the wrapper catches it: FastMCP never sees it
    return {"flushed": name}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ValueError("bad invoice id")  # error: FL300 "ValueError"
"""),
        Example("""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


def parse_id(text: str) -> int:
    if not text.isdigit():
        raise KeyError(text)  # error: FL300 "`Error executing tool get_invoice: <its text>`"
    return int(text)


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    return {"id": parse_id(invoice_id)}
"""),
        Example("""
from fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool
def get_invoice(invoice_id: str) -> dict:
    raise KeyError(invoice_id)  # error: FL300 "`Error calling tool 'get_invoice': <its text>` (fastmcp)"
"""),
        Example("""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.resource("invoices://{invoice_id}")
def invoice_file(invoice_id: str) -> str:
    raise KeyError(invoice_id)  # error: FL300 "a JSON-RPC error carrying its text (mcp 1.x FastMCP), not a resource"
"""),
        Example("""
from functools import wraps

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("cache")
CACHES = {"sessions": {}}


def handle_exceptions(func):
    @wraps(func)
    async def wrapper(*args, **kwargs):
        try:
            return await func(*args, **kwargs)
        except Exception as e:
            return {"error": str(e)}
    return wrapper


@handle_exceptions  # above the registration: FastMCP registered the unwrapped function
@mcp.tool()
async def flush_cache(name: str) -> dict:
    if name not in CACHES:
        raise KeyError(name)  # error: FL300 "Error executing tool flush_cache"
    return {"flushed": name}
"""),
        Example("""
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    if not invoice_id:
        raise ValueError("An invoice id is required.")  # error: FL300 "MCPServer masks it"
    return {"id": invoice_id}
"""),
        Example("""
from fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool
def void_invoice(invoice_id: str) -> dict:
    if invoice_id.startswith("paid-"):
        raise RuntimeError  # error: FL300 "no message"
    return {"voided": invoice_id}
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        for site, groups in builtin_raises(function):
            why = unreadable_text(site)
            for group in groups:
                if not group.loses_the_text and why is None:
                    continue  # the author's own sentence, sent verbatim: FL309's (opt-in), not a loss
                framework, kind = group.framework, group.kind
                if group.guarded:
                    sees, advice = (
                        "a masked INTERNAL_ERROR",
                        (
                            "raise ctx.fail(<reason>) or an error factory (invalid_params, not_found, ...) instead"
                            if framework == "mcp_fusion"
                            else "raise fail(<reason>) or an error factory (invalid_params, not_found, ...) instead"
                        ),
                    )
                elif kind != "tool":
                    sees = what_the_client_reads(framework, group.masked, kind)
                    advice = (
                        "declare the failure with @contract(errors=[...]) and raise fail(<reason>)"
                        if kind == "resource"
                        else "raise an error whose message says what to change (a prompt takes no contract)"
                    )
                else:
                    sees = what_the_model_sees(framework, group.masked, tool_name(group.subjects))
                    advice = "declare the failure with @contract(errors=[...]) and raise fail(<reason>)"
                    if framework == "mcp2" or (framework == "fastmcp" and group.masked):
                        # Only where the framework masks other exceptions does ToolError change what is sent.
                        advice += ", or raise ToolError with a message the model can act on"
                if why is not None and not group.loses_the_text:
                    sees += f", and {why}"
                reader = "the model" if kind == "tool" else "the client"
                yield Finding(
                    site.span,
                    f"raise {site.exception} reaches {reader} as {sees}; {advice}",
                    function.path,
                    subjects=group.subjects,
                )
