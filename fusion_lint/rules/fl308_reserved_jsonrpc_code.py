"""FL308 reserved-jsonrpc-code: handler code raises the SDK's JSON-RPC error with a code in -32000..-32099."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.facts.frameworks import SDK_ERRORS
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register

#: MCP 2026-07-28: the implementation-defined server-error band, split in two.
LEGACY = range(-32019, -32000 + 1)  # -32000..-32019: legacy, SHOULD NOT be used
RESERVED = range(-32099, -32020 + 1)  # -32020..-32099: reserved, MUST NOT emit undefined codes
#: -32002 was "resource not found" before SEP-2164 made a missing resource -32602.
RETIRED_RESOURCE_NOT_FOUND = -32002


def what_the_spec_says(code: int) -> str:
    if code == RETIRED_RESOURCE_NOT_FOUND:
        return "-32002 is retired: MCP 2026-07-28 (SEP-2164) answers a missing resource with -32602 (Invalid params)"
    if code in LEGACY:
        return f"{code} is in the legacy range -32000..-32019, which MCP 2026-07-28 says servers SHOULD NOT use"
    return (
        f"{code} is in the range -32020..-32099 that MCP 2026-07-28 reserves: a server MUST NOT emit a code "
        "the specification does not define"
    )


@register
class ReservedJsonRpcCode(Rule):
    code, name, severity = "FL308", "reserved-jsonrpc-code", "warning"
    summary = (
        "Handler code raises the SDK's `McpError`/`MCPError` (or `ErrorData`) with a literal code in -32000..-32099."
    )
    why = (
        "MCP 2026-07-28 marks -32000..-32019 legacy (servers SHOULD NOT use them), reserves -32020..-32099 "
        "(servers MUST NOT emit codes it does not define) and retires -32002: a missing resource is -32602 "
        "(SEP-2164). A client that follows the revision may treat such a frame as a broken server, and a code "
        "the client's SDK gives its own meaning (-32001 is the Python SDK's client-side timeout) is misread. "
        "A tool's failure should not be a JSON-RPC error at all: the model never sees it (FL305). "
        "A resource or prompt raises -32602 (invalid params, a missing resource) or -32603 (internal error), "
        "with what the agent should do in the message; a tool raises `fail(<reason>)` under `@contract` (or a "
        "`mcp_fusion` factory), which is a tool result the model reads."
    )
    limits = "Only a literal integer code is checked (a constant defined elsewhere is not followed)."
    prelude = (
        "from mcp.server.mcpserver import MCPServer\n"
        "from mcp import MCPError\n"
        "from mcp.shared.exceptions import McpError\n"
        "from mcp.types import ErrorData\n"
        'app = MCPServer("billing")\n'
    )
    VALID = (
        """
@app.resource("billing://invoices/{invoice_id}")
def invoice(invoice_id: str) -> str:
    raise MCPError(code=-32602, message="No invoice with that ID: call list_invoices first")
""",
        """
def not_a_handler() -> None:
    raise MCPError(code=-32001, message="not reached by any tool")
""",
    )
    INVALID = (
        Example("""
@app.resource("billing://invoices/{invoice_id}")
def invoice(invoice_id: str) -> str:
    raise MCPError(code=-32002, message="Resource not found")  # error: FL308 "SEP-2164"
"""),
        Example("""
@app.tool()
def get_invoice(invoice_id: str) -> dict:
    raise McpError(ErrorData(code=-32001, message="gone"))  # error: FL308 "SHOULD NOT"
"""),
        Example("""
def lookup(invoice_id: str) -> dict:
    raise MCPError(-32050, "upstream down")  # error: FL308 "MUST NOT"


@app.resource("billing://invoices/{invoice_id}")
def invoice(invoice_id: str) -> str:
    return str(lookup(invoice_id))
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.reached_by:
            return
        for site in function.function.raises:
            code = site.wire_code
            if code is None or site.exception not in SDK_ERRORS or code not in range(-32099, -32000 + 1):
                continue
            subjects = [definition for definition, _ in function.reached_by]
            yield Finding(
                site.span,
                f"raises a JSON-RPC error with code {code}: {what_the_spec_says(code)}; raise -32602 or -32603 "
                "(a tool: fail(<reason>) under @contract, a result the model reads)",
                function.path,
                subjects=list(dict.fromkeys(subjects)),
            )
