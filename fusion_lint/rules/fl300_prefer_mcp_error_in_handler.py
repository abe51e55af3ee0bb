"""FL300 prefer-mcp-error-in-handler: the handler raises a plain builtin exception."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fusion_lint.facts.frameworks import what_the_client_reads, what_the_model_sees
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, by_framework, caught_by, escapes_to, tool_name

BUILTIN_EXCEPTIONS = frozenset(
    {
        "Exception",
        "RuntimeError",
        "ValueError",
        "KeyError",
        "LookupError",
        "OSError",
        "IOError",
        "PermissionError",
        "FileNotFoundError",
        "TimeoutError",
        "ConnectionError",
    }
)


def by_kind(groups: list[Any]) -> Iterator[tuple[Any, ...]]:
    """Each framework group split into its tools and its resources or prompts, which the framework
    answers differently (a resource's or a prompt's failure is a JSON-RPC error, not a result)."""
    for framework, masked, guarded, subjects in groups:
        for kind in ("tool", "resource", "prompt"):
            members = [d for d in subjects if d.kind == kind]
            if members:
                yield framework, masked, guarded, members, kind


@register
class PreferMcpErrorInHandler(Rule):
    code, name, severity = "FL300", "prefer-mcp-error-in-handler", "warning"
    summary = "The handler raises a plain builtin exception (`ValueError`, `KeyError`, `RuntimeError`, ...)."
    why = (
        "A builtin exception carries no code, no reason and no recovery. The runtime's boundary (and a working "
        "`@contract`) masks it as INTERNAL_ERROR so internals do not leak, and mcp 2.x MCPServer masks it too: "
        "the model learns nothing. mcp 1.x FastMCP and fastmcp send its raw text instead, which the model cannot "
        "act on either. Programming-error guards (`TypeError`, `AssertionError`, `NotImplementedError`) are fine."
    )
    limits = (
        "Re-raising what was caught (`raise`, `raise e`) is never reported, nor a raise an enclosing `try` of "
        "the same function, or one around the call in a caller, catches and does not re-raise, nor one a "
        "decorator of the project between the framework and the handler catches around its call of the "
        "handler (`@mcp.tool()` over `@handle_exceptions`, whose wrapper returns the error). A raise in code "
        "the handler calls is reported where it is, naming the tools it escapes from; a resource's or a "
        "prompt's, as what the framework answers there (a JSON-RPC error, not a result). The message says what "
        "the server's framework sends: mcp 1.x FastMCP and fastmcp send the exception's text, MCPServer and "
        "a working `@contract` mask it."
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
        raise ValueError(f"bad invoice id {text}")  # error: FL300 "`Error executing tool get_invoice: <its text>`"
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
    raise FileNotFoundError(invoice_id)  # error: FL300 "a JSON-RPC error carrying its text (mcp 1.x FastMCP), not a resource"
"""),
        Example("""
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


@handle_exceptions  # above the registration: FastMCP registered the unwrapped function
@mcp.tool()
async def flush_cache(name: str) -> dict:
    if not name:
        raise ValueError("A cache name is required")  # error: FL300 "Error executing tool flush_cache"
    return {"flushed": name}
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        for site in function.function.raises:
            if site.kind not in ("call", "name") or site.exception not in BUILTIN_EXCEPTIONS:
                continue
            if caught_by(site.tries, site.exception):
                continue  # an enclosing try of this function catches it and does not re-raise it
            for framework, masked, guarded, subjects, kind in by_kind(
                by_framework(escapes_to(function, site.exception))
            ):
                if guarded:
                    sees, advice = (
                        "a masked INTERNAL_ERROR",
                        (
                            "raise ctx.fail(<reason>) or an error factory (invalid_params, not_found, ...) instead"
                            if framework == "mcp_fusion"
                            else "raise fail(<reason>) or an error factory (invalid_params, not_found, ...) instead"
                        ),
                    )
                elif kind != "tool":
                    sees = what_the_client_reads(framework, masked, kind)
                    advice = (
                        "declare the failure with @contract(errors=[...]) and raise fail(<reason>)"
                        if kind == "resource"
                        else "raise an error whose message says what to change (a prompt takes no contract)"
                    )
                else:
                    sees = what_the_model_sees(framework, masked, tool_name(subjects))
                    advice = "declare the failure with @contract(errors=[...]) and raise fail(<reason>)"
                    if framework == "mcp2" or (framework == "fastmcp" and masked):
                        # Only where the framework masks other exceptions does ToolError change what is sent.
                        advice += ", or raise ToolError with a message the model can act on"
                reader = "the model" if kind == "tool" else "the client"
                yield Finding(
                    site.span,
                    f"raise {site.exception} reaches {reader} as {sees}; {advice}",
                    function.path,
                    subjects=subjects,
                )
