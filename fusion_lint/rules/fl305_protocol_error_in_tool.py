"""FL305 protocol-error-in-tool: a tool raises the SDK's ``MCPError``."""
from __future__ import annotations

from typing import Iterable

from . import Example, Finding, Rule, register
from ._shared import HANDLER_PRELUDE

SDK_PROTOCOL_ERRORS = frozenset({"mcp.MCPError", "mcp.shared.exceptions.MCPError"})


@register
class ProtocolErrorInTool(Rule):
    code, name, severity = "FL305", "protocol-error-in-tool", "warning"
    summary = "A tool raises the SDK's `mcp.MCPError`, a JSON-RPC protocol error."
    why = "Protocol errors answer the JSON-RPC request itself: the model never sees them, and never recovers."
    prelude = "from mcp import MCPError\n" + HANDLER_PRELUDE
    VALID = (
        '''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")
''',
    )
    INVALID = (
        Example('''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise MCPError(-32001, "gone")  # error: FL305 "MCPError"
'''),
    )

    def check_function(self, function, project) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for site in function.function.raises:
            if site.kind in ("call", "name") and site.exception in SDK_PROTOCOL_ERRORS:
                yield Finding(
                    site.span,
                    "raises the SDK's MCPError, a JSON-RPC protocol error the model never sees; raise "
                    "ctx.fail(<reason>) or an error factory instead",
                    function.path,
                )
