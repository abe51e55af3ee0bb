"""FL302 preserve-cause-on-rethrow: raising inside ``except E as e:`` without the cause."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from fusion_lint.base.diagnostics import Edit, Fix
from fusion_lint.facts.frameworks import TOOL_ERRORS
from fusion_lint.facts.model import Raise
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import valid_span
from fusion_lint.rules._shared import HANDLER_PRELUDE


def caught_name(site: Raise) -> str:
    """The name the innermost enclosing except clause binds ("" when unnamed or none)."""
    return site.clauses[0].name if site.clauses else ""


@register
class PreserveCauseOnRethrow(Rule):
    code, name, severity = "FL302", "preserve-cause-on-rethrow", "warning"
    summary = (
        "Inside `except E as e:`, an McpError (or a framework's `ToolError`) is raised without `from e` or `cause=e`."
    )
    why = "The cause is what the traceback in the server log shows; dropping it hides the real failure from whoever debugs it."
    fix = "Appends `from <e>` to the raise."
    fix_safety = "safe"
    limits = "`raise ... from None` is an explicit decision and never reported."
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        pass
    except KeyError as e:
        raise ctx.fail("no_match", cause=e)
""",
    )
    INVALID = (
        Example(
            """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        pass
    except KeyError as e:
        raise ctx.fail("no_match")  # error: FL302 "from e"
""",
            fixed="""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        pass
    except KeyError as e:
        raise ctx.fail("no_match") from e  # error: FL302 "from e"
""",
        ),
        Example(
            """
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

mcp = FastMCP("billing")


@mcp.tool
def get_invoice(invoice_id: str) -> dict:
    try:
        return {"id": int(invoice_id)}
    except ValueError as e:
        raise ToolError("The invoice ID must be a number.")  # error: FL302 "from e"
""",
            fixed="""
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

mcp = FastMCP("billing")


@mcp.tool
def get_invoice(invoice_id: str) -> dict:
    try:
        return {"id": int(invoice_id)}
    except ValueError as e:
        raise ToolError("The invoice ID must be a number.") from e  # error: FL302 "from e"
""",
        ),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for site in function.function.raises:
            caught = caught_name(site)
            ours = site.kind in ("mcp_error", "factory", "fail") or (
                site.kind == "call" and site.exception in TOOL_ERRORS
            )
            if caught and ours and not site.has_cause:
                yield Finding(
                    site.span,
                    f"raising inside 'except ... as {caught}' drops the cause; add 'from {caught}' (or cause={caught})",
                    function.path,
                    partial(add_cause, site=site, caught=caught),
                )


def add_cause(text: str, *, site: Raise, caught: str) -> Fix | None:
    """`` from <caught>`` appended to the raise statement."""
    if not valid_span(text, site.span) or not text.startswith("raise", site.span.start):
        return None
    return Fix(f"Add 'from {caught}'", [Edit(site.span.end, site.span.end, f" from {caught}")])
