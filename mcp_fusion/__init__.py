"""mcp_fusion: MCP tools with declared error contracts (DESIGN §3).

Importing this package never imports the MCP SDK; only serving (``FusionServer``) does.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .context import Context
from .contract import CONTRACT_FIELDS, REQUIRED_FIELDS, SEVERITIES, THROWN_BY_VALUES, ErrorContract
from .definitions import PromptDefinition, ResourceDefinition, ToolDefinition, prompt, resource, tool
from .envelope import ToolErrorBuilder, ToolErrorEnvelope, tool_error
from .errors import (
    BASELINE_CODES,
    FACTORIES,
    FACTORY_CODES,
    JsonRpcErrorCode,
    McpError,
    configuration_error,
    conflict,
    database_error,
    forbidden,
    internal_error,
    invalid_params,
    invalid_request,
    not_found,
    rate_limited,
    request_cancelled,
    serialization_error,
    service_unavailable,
    timeout,
    unauthorized,
    validation_error,
)

__version__ = "0.1.0"

__all__ = [
    "BASELINE_CODES",
    "CONTRACT_FIELDS",
    "FACTORIES",
    "FACTORY_CODES",
    "REQUIRED_FIELDS",
    "SEVERITIES",
    "THROWN_BY_VALUES",
    "Context",
    "ErrorContract",
    "FusionServer",
    "JsonRpcErrorCode",
    "McpError",
    "PromptDefinition",
    "ResourceDefinition",
    "ToolDefinition",
    "ToolErrorBuilder",
    "ToolErrorEnvelope",
    "configuration_error",
    "conflict",
    "database_error",
    "forbidden",
    "internal_error",
    "invalid_params",
    "invalid_request",
    "not_found",
    "prompt",
    "rate_limited",
    "request_cancelled",
    "resource",
    "serialization_error",
    "service_unavailable",
    "timeout",
    "tool",
    "tool_error",
    "unauthorized",
    "validation_error",
]

if TYPE_CHECKING:  # pragma: no cover
    from .server import FusionServer


def __getattr__(name: str) -> Any:
    # Lazy: serving needs the SDK, declaring and linting do not.
    if name == "FusionServer":
        from .server import FusionServer

        return FusionServer
    raise AttributeError(f"module 'mcp_fusion' has no attribute {name!r}")
