"""FL307 exception-text-to-model: the caught exception's text becomes what the model reads."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.facts.model import Except, FunctionFacts, Uses
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._returned import is_error_result
from fusion_lint.rules._shared import HANDLER_PRELUDE, by_framework, listing
from fusion_lint.rules.fl303_no_stringify_upstream_error import leaks, reaches_the_model


def exception_text(uses: Uses | None, caught: set[str], returned: bool) -> list[str]:
    """How the text of an exception bound to a name in ``caught`` goes into an expression:
    ``str(e)``, ``f"{e}"``, ``e.args``, and, in a returned value, ``repr(e)`` or ``{e!r}`` (in a
    raise those are FL303's)."""
    if uses is None or not caught:
        return []
    found: list[str] = []
    for kind, name, detail in uses.parts:
        if kind == "call" and detail in caught and (name == "str" or (returned and name == "repr")):
            found.append(f"{name}({detail})")
        elif kind == "format" and name in caught and (detail in ("", "s") or (returned and detail == "r")):
            found.append(f'f"{{{name}{"!" + detail if detail else ""}}}"')
        elif kind == "name" and name.partition(".")[0] in caught and name.partition(".")[2] == "args":
            found.append(name)
    return list(dict.fromkeys(found))


def text_in(
    uses: Uses | None, clauses: tuple[Except, ...], facts: FunctionFacts, returned: bool, line: int
) -> list[str]:
    """``exception_text`` of an expression on ``line``, following one local assignment made in an
    except clause above it (``msg = str(e)`` ... ``return msg``; a use in the try body above the
    clause sees another value of the name)."""
    found = exception_text(uses, {clause.name for clause in clauses if clause.name}, returned)
    for kind, name, _ in uses.parts if uses is not None else ():
        if kind == "name" and name in facts.assigned_in_except:
            assigned, caught, where = facts.assigned_in_except[name]
            if where.line >= line:
                continue
            found += [text for text in exception_text(assigned, set(caught), returned) if text not in found]
    return found


@register
class ExceptionTextToModel(Rule):
    code, name, severity = "FL307", "exception-text-to-model", "warning"
    summary = (
        'The caught exception\'s text (`str(e)`, `f"{e}"`, `e.args`) becomes part of what the tool raises or returns.'
    )
    why = (
        "An upstream exception's text is written for whoever debugs the server: hosts, SQL, file paths, "
        "internal names. Pasted into a failure or a result, it is what the model reads instead of a reason "
        "and a recovery it can act on, and it may leak what the client should never see. Say what failed in "
        "plain words, keep the exception as the cause, and log the details."
    )
    limits = (
        "The handler's own raises and returns, inside the except clause that binds the exception, following one "
        "local assignment made in an except clause above the use (`msg = str(e); return msg`). A raise counts where its message reaches the model: the "
        "runtime's failures and a framework's `ToolError` always; any other exception where the framework sends "
        "its text (mcp 1.x FastMCP, fastmcp without `mask_error_details=True`). A raise whose message uses "
        "`repr(e)`, `json.dumps` or a traceback is FL303's alone."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        return lookup(invoice_id)
    except KeyError as e:
        raise ctx.fail("no_match", "No invoice has that id") from e
""",
        """
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    try:
        return lookup(invoice_id)
    except KeyError as e:
        raise RuntimeError(f"lookup failed: {e}") from e  # MCPServer masks it (FL300 says so)
""",
        """
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError

mcp = FastMCP("metrics")


@mcp.tool()
async def run_query(query: str) -> dict:
    try:
        if not is_safe(query):
            error_msg = "The query uses a write statement; send a read-only query"
            raise ToolError(error_msg)  # this literal, not the except clause's text further down
        return await execute(query)
    except OSError as e:
        error_msg = f"Query failed: {e}"
        log(error_msg)
        raise
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        return lookup(invoice_id)
    except KeyError as e:
        raise ctx.fail("no_match", f"Lookup failed: {e}") from e  # error: FL307 "{e}"
    except OSError as e:
        return {"error": str(e)}  # error: FL307 "str(e)"
"""),
        Example("""
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> str:
    try:
        return lookup(invoice_id)
    except KeyError as e:
        raise ToolError(str(e)) from e  # error: FL307 "str(e)"
    except OSError as e:
        message = f"Could not read the invoice: {e}"
    return message  # error: FL307 "{e}"
"""),
        Example("""
from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> CallToolResult:
    try:
        return lookup(invoice_id)
    except OSError as e:
        return CallToolResult(isError=True, content=[TextContent(type="text", text=str(e))])  # error: FL307 "the error result is built"
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.handler_of:
            return
        facts = function.function
        for site in facts.raises:
            if site.kind in ("fail", "mcp_error", "factory") and leaks(site):
                continue
            found = text_in(site.message, site.clauses, facts, False, site.span.line)
            found += [
                text for text in text_in(site.data, site.clauses, facts, False, site.span.line) if text not in found
            ]
            if not found:
                continue
            subjects = [
                d
                for framework, masked, guarded, members in by_framework(function.handler_of)
                if reaches_the_model(site, framework, masked, guarded)
                for d in members
            ]
            if subjects:
                yield Finding(
                    site.span,
                    f"the raised failure carries the caught exception's text ({listing(found)}); "
                    "the model reads raw upstream text instead of a reason and a recovery; say what failed "
                    "in plain words and keep the exception as the cause",
                    function.path,
                    subjects=subjects,
                )
        for returned in facts.returns:
            found = text_in(returned.uses, returned.clauses, facts, True, returned.span.line)
            if found:
                advice = (
                    "ctx.fail"
                    if all(d.definition.server is None for d in function.handler_of)
                    else "fail() under @contract"
                )
                failed = is_error_result(returned.value)  # isError=True: a failure, but with raw text
                yield Finding(
                    returned.span,
                    f"the {'error ' if failed else ''}result is built from the caught exception's text "
                    f"({listing(found)}); the model reads raw upstream text "
                    f"{'instead of a reason and a recovery' if failed else 'as a success'}; raise a declared "
                    f"failure ({advice}) instead",
                    function.path,
                )
