"""FL305 protocol-error-in-tool: a tool raises the SDK's ``McpError``/``MCPError``."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.facts.frameworks import SDK_ERRORS
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, by_framework, tool_name


def what_becomes_of(framework: str, masked: bool, guarded: bool, tool: str) -> str:
    """What the model gets for the SDK's error under this framework (measured: bench/corpus-survey.md §9)."""
    if guarded:
        return "which the runtime's boundary masks as an INTERNAL_ERROR: the model learns nothing"
    if framework == "mcp2":
        return "a JSON-RPC protocol error under MCPServer: the model gets no tool result at all, and never recovers"
    if framework == "mcp1":
        return f"which mcp 1.x FastMCP turns into `Error executing tool {tool}: <its message>`: its code is lost"
    if framework == "fastmcp":
        shown = f"`Error calling tool '{tool}'` (masked)" if masked else f"`Error calling tool '{tool}': <its message>`"
        return f"which fastmcp turns into {shown}: its code is lost"
    return "a protocol error only under mcp 2.x MCPServer; elsewhere an error result whose code is lost"


@register
class ProtocolErrorInTool(Rule):
    code, name, severity = "FL305", "protocol-error-in-tool", "warning"
    summary = "A tool raises the SDK's `McpError` (mcp 1.x) or `MCPError` (mcp 2.x)."
    why = (
        "The SDK's error is a JSON-RPC protocol error under mcp 2.x MCPServer: it answers the request itself, the "
        "model never sees it and never recovers. Under mcp 1.x FastMCP and fastmcp it becomes an ordinary error "
        "result whose code is dropped; under the runtime's boundary (FusionServer, `@contract`) it is masked. "
        "In no framework does it carry a reason or a recovery."
    )
    prelude = "from mcp import MCPError\n" + HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise MCPError(-32603, "gone")  # error: FL305 "MCPError"
"""),
        Example("""
from mcp.server.fastmcp import FastMCP
from mcp.shared.exceptions import McpError
from mcp.types import ErrorData

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    raise McpError(ErrorData(code=-32603, message="gone"))  # error: FL305 "`Error executing tool get_invoice: <its message>`"
"""),
        Example("""
from mcp.server.mcpserver import MCPServer
from mcp import MCPError

mcp = MCPServer("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    raise MCPError(code=-32603, message="gone")  # error: FL305 "no tool result at all"
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for site in function.function.raises:
            if site.kind not in ("call", "name") or site.exception not in SDK_ERRORS:
                continue
            error = site.exception.rpartition(".")[2]
            for framework, masked, guarded, subjects in by_framework(function.handler_of):
                becomes = what_becomes_of(framework, masked, guarded, tool_name(subjects))
                advice = "ctx.fail(<reason>)" if framework == "mcp_fusion" else "fail(<reason>) under @contract"
                yield Finding(
                    site.span,
                    f"raises the SDK's {error}, {becomes}; raise {advice} or an error factory instead",
                    function.path,
                    subjects=subjects,
                )
