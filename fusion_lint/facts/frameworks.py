"""The MCP frameworks as the extractor recognises them (DESIGN §12.2): by qualified name, never by a
variable's spelling. What each framework sends the model for a raised exception is measured
(``bench/framework_messages.py``, recorded in ``bench/corpus-survey.md`` §9)."""

from __future__ import annotations

from typing import Literal

# The framework a definition is registered with. ``mcp_fusion``: the runtime's own definitions.
Framework = Literal["mcp_fusion", "mcp1", "mcp2", "fastmcp", "lowlevel1", "lowlevel2", "unknown"]

#: Server classes, with the framework each one is (any import spelling resolves to these).
#: tests/lint/test_framework_import_paths.py derives every public path from the installed frameworks
#: (in each environment of the matrix) and fails while one is missing here.
SERVER_CLASSES: dict[str, Framework] = {
    "mcp.server.fastmcp.FastMCP": "mcp1",
    "mcp.server.fastmcp.server.FastMCP": "mcp1",
    "mcp.server.FastMCP": "mcp1",  # 1.x re-exports it from mcp.server (2.x does not)
    "mcp.server.mcpserver.MCPServer": "mcp2",
    "mcp.server.mcpserver.server.MCPServer": "mcp2",
    "mcp.server.MCPServer": "mcp2",
    "fastmcp.FastMCP": "fastmcp",
    "fastmcp.server.FastMCP": "fastmcp",
    "fastmcp.server.server.FastMCP": "fastmcp",
    "fastmcp.client.transports.FastMCP": "fastmcp",  # fastmcp 2.x re-exports it there
    # fastmcp 3's component providers and mcp 2.x's Apps extension register like a server does.
    "fastmcp.server.providers.LocalProvider": "fastmcp",
    "fastmcp.server.providers.local_provider.LocalProvider": "fastmcp",
    "mcp.server.apps.Apps": "mcp2",
    # The low-level server: its definitions are its dispatchers (``@server.call_tool()`` in 1.x,
    # ``Server(name, on_call_tool=...)`` in 2.x); which one is told by the form, not the class.
    "mcp.server.lowlevel.Server": "lowlevel1",
    "mcp.server.lowlevel.server.Server": "lowlevel1",
    "mcp.server.Server": "lowlevel1",
}

#: ``Tool.from_function(fn, ...)``: a tool object (a definition wherever it then goes).
TOOL_CLASSES = frozenset(
    {
        "mcp.server.fastmcp.tools.Tool",
        "mcp.server.fastmcp.tools.base.Tool",
        "mcp.server.mcpserver.tools.Tool",
        "mcp.server.mcpserver.tools.base.Tool",
        "fastmcp.tools.Tool",
        "fastmcp.tools.tool.Tool",
        "fastmcp.tools.function_tool.FunctionTool",
        "fastmcp.tools.FunctionTool",
    }
)

#: The frameworks' own error for a tool: its message reaches the model (DESIGN §12.2).
TOOL_ERRORS = frozenset(
    {
        "mcp.server.fastmcp.exceptions.ToolError",
        "mcp.server.mcpserver.exceptions.ToolError",
        "fastmcp.exceptions.ToolError",
    }
)

#: The SDK's JSON-RPC error, in both spellings (mcp 1.x ``McpError``, 2.x ``MCPError``).
SDK_ERRORS = frozenset(
    {
        "mcp.McpError",
        "mcp.shared.exceptions.McpError",
        "mcp.MCPError",
        "mcp.shared.exceptions.MCPError",
    }
)

#: Module prefixes whose import makes a module a framework module (the pre-scan's needles and the
#: unannotated-receiver rule): import-precise, never the bare word ``mcp``.
FRAMEWORK_MODULES = ("mcp.server", "mcp.types", "mcp_types", "fastmcp")


def framework_of_class(qname: str | None) -> Framework | None:
    return SERVER_CLASSES.get(qname) if qname is not None else None


def imports_a_framework(imported: set[str]) -> bool:
    """Whether a module importing these qualified names is a framework module."""
    return any(name == module or name.startswith(module + ".") for name in imported for module in FRAMEWORK_MODULES)


def what_the_model_sees(framework: Framework, masked: bool, tool: str) -> str:
    """What a raised builtin exception becomes, as a message says it."""
    if framework == "mcp_fusion" or masked and framework == "fastmcp":
        return "a masked INTERNAL_ERROR" if framework == "mcp_fusion" else f"`Error calling tool '{tool}'` (masked)"
    return {
        "mcp1": f"`Error executing tool {tool}: <its text>` (mcp 1.x FastMCP): no code, no reason, no recovery",
        "mcp2": f"`Error executing tool {tool}` (MCPServer masks it): no code, no reason, no recovery",
        "fastmcp": f"`Error calling tool '{tool}': <its text>` (fastmcp): no code, no reason, no recovery",
        "lowlevel1": "its text as the error result (the low-level server): no code, no reason, no recovery",
        "lowlevel2": "a JSON-RPC 'Internal error' (the low-level server): the model sees no result at all",
    }.get(framework, "its text (FastMCP and fastmcp send it; MCPServer masks it): no code, no reason, no recovery")


FRAMEWORK_LABELS = {
    "mcp1": "mcp 1.x FastMCP",
    "mcp2": "MCPServer",
    "fastmcp": "fastmcp",
    "lowlevel1": "the low-level server",
    "lowlevel2": "the low-level server",
}


def what_the_client_reads(framework: Framework, masked: bool, kind: str) -> str:
    """What a raised builtin exception becomes where a framework reads a resource or renders a
    prompt: a JSON-RPC error answering the request, not a result (mcp 1.x, MCPServer's prompts and
    fastmcp pass the text on; MCPServer's resources and a masking fastmcp do not)."""
    text = not (masked and framework == "fastmcp") and not (framework == "mcp2" and kind == "resource")
    carrying = "carrying its text" if text else "without its text"
    label = FRAMEWORK_LABELS.get(framework, "the framework")
    return f"a JSON-RPC error {carrying} ({label}), not a {kind}: no code, no reason, no recovery"


def sends_exception_text(framework: Framework, masked: bool) -> bool:
    """Whether a raised exception's text reaches the model under this framework (FL307)."""
    return framework in ("mcp1", "lowlevel1", "unknown") or (framework == "fastmcp" and not masked)


# ----- fastmcp middleware (FL310) -------------------------------------------------------------------

#: The fusion integration for fastmcp: ``install(app)`` adds its ``FusionMiddleware``.
FUSION_FASTMCP_INSTALL = "mcp_fusion.integrations.fastmcp.install"
_MIDDLEWARE_KINDS: dict[str, tuple[str, Literal["fusion", "error_handling", "retry"]]] = {
    "FusionMiddleware": ("mcp_fusion.integrations.fastmcp.", "fusion"),
    "ErrorHandlingMiddleware": ("fastmcp.", "error_handling"),
    "RetryMiddleware": ("fastmcp.", "retry"),
}


def middleware_kind(qname: str) -> Literal["fusion", "error_handling", "retry"] | None:
    """What a middleware class is: the fusion integration's, or fastmcp's error handling or retry
    middleware (``fastmcp.server.middleware.error_handling.*`` or a re-export of it)."""
    prefix, _, last = qname.rpartition(".")
    known = _MIDDLEWARE_KINDS.get(last)
    if known is None or not (prefix + ".").startswith(known[0]):
        return None
    return known[1]
