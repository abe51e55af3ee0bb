"""FL303 no-stringify-upstream-error: a raised message built from internals."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.facts.frameworks import TOOL_ERRORS, sends_exception_text
from fusion_lint.facts.model import Raise
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, by_framework

# The runtime's raises: their message reaches the model wherever they are raised.
RUNTIME_RAISES = ("fail", "mcp_error", "factory", "tool_error")

LEAKY_CALLS = {
    "json.dumps": "json.dumps(...)",
    "traceback.format_exc": "traceback.format_exc()",
    "traceback.format_exception": "traceback.format_exception(...)",
    "traceback.format_tb": "traceback.format_tb(...)",
}


def leaks(site: Raise) -> list[str]:
    """What the raised message is built from that leaks internals: a dump, a traceback, or the
    ``repr`` of what an enclosing except clause caught."""
    if site.message is None or site.kind not in LEAKING_KINDS:
        return []
    caught = {clause.name for clause in site.clauses if clause.name}
    found = []
    for kind, name, detail in site.message.parts:
        if kind == "call" and name in LEAKY_CALLS:
            found.append(LEAKY_CALLS[name])
        elif kind == "call" and name == "repr" and detail in caught:
            found.append(f"repr({detail})")
        elif kind == "format" and detail == "r" and name in caught:
            found.append(f"{{{name}!r}}")
    return found


def data_leaks(site: Raise) -> list[str]:
    """What the raised data is built from that leaks internals: a dump or a traceback (DESIGN §12.3).
    (The caught exception's own text in data is FL307's.)"""
    if site.data is None or site.kind not in LEAKING_KINDS:
        return []
    return list(
        dict.fromkeys(LEAKY_CALLS[name] for kind, name, _ in site.data.parts if kind == "call" and name in LEAKY_CALLS)
    )


# A builtin or a framework's ToolError (``call``) leaks where the framework sends its text.
LEAKING_KINDS = ("fail", "mcp_error", "factory", "call")


def reaches_the_model(site: Raise, framework: str, masked: bool, guarded: bool) -> bool:
    """Whether the raised exception's message is what the model reads (DESIGN §12.2, measured)."""
    if site.kind in RUNTIME_RAISES or (site.kind == "call" and site.exception in TOOL_ERRORS):
        return True  # a declared failure, or a framework's ToolError (sent even under masking)
    return site.kind == "call" and not guarded and sends_exception_text(framework, masked)  # type: ignore[arg-type]  # a definition's framework: a Framework literal, passed as str


@register
class NoStringifyUpstreamError(Rule):
    code, name, severity = "FL303", "no-stringify-upstream-error", "warning"
    summary = (
        "A raised message built with `json.dumps(...)`, `traceback.format_exc()` or `repr(<caught>)` (or "
        "`{e!r}`), or raised data holding a `json.dumps(...)` or traceback text; a builtin exception or a "
        "`ToolError` where the framework sends its text."
    )
    why = "The message goes to the model and the client: stack traces and raw upstream payloads leak internals and secrets."
    prelude = "import traceback\n" + HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        pass
    except KeyError as e:
        raise ctx.fail("no_match", "No such invoice") from e
""",
        """
from mcp.server.mcpserver import MCPServer

app = MCPServer("billing")


@app.tool()
def void_invoice(invoice_id: str) -> str:
    try:
        return void(invoice_id)
    except KeyError as e:
        raise RuntimeError(traceback.format_exc()) from e  # MCPServer masks a builtin's text
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        pass
    except KeyError as e:
        raise ctx.fail("no_match", traceback.format_exc()) from e  # error: FL303 "traceback.format_exc()"
"""),
        Example("""
import json

@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context, query: dict):
    raise ctx.fail("no_match", data={"query": json.dumps(query)})  # error: FL303 "raised data holds json.dumps(...)"
"""),
        Example("""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def void_invoice(invoice_id: str) -> str:
    try:
        return void(invoice_id)
    except KeyError as e:
        raise RuntimeError(f"void failed: {e!r}") from e  # error: FL303 "{e!r}"
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for site in function.function.raises:
            subjects = None  # the definitions the raise reaches the model of (a builtin: not under masking)
            if site.kind == "call":
                subjects = [
                    d
                    for framework, masked, guarded, members in by_framework(function.handler_of)
                    if reaches_the_model(site, framework, masked, guarded)
                    for d in members
                ]
                if not subjects:
                    continue
            for found, part, advice in (
                (leaks(site), "message is built from", "say what failed in plain words"),
                (data_leaks(site), "data holds", "keep structured, plain facts in data"),
            ):
                if found:
                    yield Finding(
                        site.span,
                        f"the raised {part} {', '.join(found)}, which leaks internals to the "
                        f"client; {advice} and log the details",
                        function.path,
                        subjects=subjects,
                    )
