"""FL300's advice is true on the framework it names (issue 31): raising ``ToolError`` instead of a
builtin changes what is sent only where the framework masks other exceptions (MCPServer, fastmcp
with ``mask_error_details=True``); elsewhere the builtin's text is sent as it is, and the advice
that remains is the contract."""

from __future__ import annotations

import pytest
from harness import lint_sources

HANDLER = """

@app.tool()
def get_invoice(invoice_id: str) -> str:
    raise KeyError(invoice_id)
"""
SERVERS = {
    "mcp1": ("from mcp.server.fastmcp import FastMCP\napp = FastMCP('billing')\n", False),
    "mcp2": ("from mcp.server.mcpserver import MCPServer\napp = MCPServer('billing')\n", True),
    "fastmcp": ("from fastmcp import FastMCP\napp = FastMCP('billing')\n", False),
    "fastmcp-masked": ("from fastmcp import FastMCP\napp = FastMCP('billing', mask_error_details=True)\n", True),
}


@pytest.mark.parametrize("server", SERVERS)
def test_toolerror_is_advised_only_where_it_changes_what_is_sent(server: str) -> None:
    prelude, advised = SERVERS[server]
    report = lint_sources({"app.py": prelude + HANDLER})
    (message,) = [d.message for d in report.diagnostics if d.code == "FL300"]
    assert "@contract(errors=[...]) and raise fail(<reason>)" in message
    assert ("raise ToolError" in message) is advised, message
