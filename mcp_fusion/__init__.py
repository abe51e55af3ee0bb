"""mcp_fusion: MCP tools with declared error contracts (DESIGN §3).

Importing this package never imports the MCP SDK; only serving (``FusionServer``) does.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

# Lazy (PEP 562): a name is imported from its module the first time it is read. The linter reads
# its tables (codes, contract fields) from here on every run; with an eager package that cost
# pydantic and asyncio (``contracted``), most of a warm run's start-up.
_LAZY = {
    **dict.fromkeys(("Context", "fail", "recovery_for"), "context"),
    **dict.fromkeys(("CONTRACT_FIELDS", "REQUIRED_FIELDS", "SEVERITIES", "THROWN_BY_VALUES"), "contract_fields"),
    "ErrorContract": "contract",
    **dict.fromkeys(
        ("PromptDefinition", "ResourceDefinition", "ToolDefinition", "prompt", "resource", "tool"), "definitions"
    ),
    **dict.fromkeys(("ToolErrorBuilder", "tool_error"), "builder"),
    "ToolErrorEnvelope": "envelope",
    # The package attribute ``contract`` is the decorator, not the module ``.contract`` (see _Package).
    "contract": "contracted",
    **dict.fromkeys(
        (
            "BASELINE_CODES",
            "CANONICAL_CODES",
            "FACTORIES",
            "FACTORY_CODES",
            "JsonRpcErrorCode",
            "McpError",
            "code_name",
            "code_value",
            "coerce_code",
            "is_valid_code",
            "configuration_error",
            "conflict",
            "database_error",
            "forbidden",
            "internal_error",
            "invalid_params",
            "invalid_request",
            "not_found",
            "rate_limited",
            "request_cancelled",
            "serialization_error",
            "service_unavailable",
            "timeout",
            "unauthorized",
            "validation_error",
        ),
        "errors",
    ),
}

if TYPE_CHECKING:  # pragma: no cover
    from .builder import ToolErrorBuilder, tool_error
    from .context import Context, fail, recovery_for
    from .contract import ErrorContract
    from .contract_fields import CONTRACT_FIELDS, REQUIRED_FIELDS, SEVERITIES, THROWN_BY_VALUES
    from .contracted import contract
    from .definitions import PromptDefinition, ResourceDefinition, ToolDefinition, prompt, resource, tool
    from .envelope import ToolErrorEnvelope
    from .errors import (
        BASELINE_CODES,
        CANONICAL_CODES,
        FACTORIES,
        FACTORY_CODES,
        JsonRpcErrorCode,
        McpError,
        code_name,
        code_value,
        coerce_code,
        configuration_error,
        conflict,
        database_error,
        forbidden,
        internal_error,
        invalid_params,
        invalid_request,
        is_valid_code,
        not_found,
        rate_limited,
        request_cancelled,
        serialization_error,
        service_unavailable,
        timeout,
        unauthorized,
        validation_error,
    )


class _Package(ModuleType):
    """Importing the submodule ``mcp_fusion.contract`` binds it as the package's ``contract``
    attribute; the public ``contract`` is the decorator, so that binding is dropped."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "contract" and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__version__ = "0.1.0"

__all__ = [
    "BASELINE_CODES",
    "CANONICAL_CODES",
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
    "code_name",
    "code_value",
    "coerce_code",
    "configuration_error",
    "conflict",
    "contract",
    "database_error",
    "fail",
    "forbidden",
    "internal_error",
    "invalid_params",
    "invalid_request",
    "is_valid_code",
    "not_found",
    "prompt",
    "rate_limited",
    "recovery_for",
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
    from .server import FusionServer  # noqa: F811


#: Top-level modules only the ``[server]`` extra brings (the SDK and what it serves with).
_SERVER_EXTRA_MODULES = frozenset({"mcp", "mcp_types", "anyio", "starlette", "uvicorn", "sse_starlette", "httpx"})
SERVER_EXTRA_HINT = 'pip install "fusion-lint[server]"'


def __getattr__(name: str) -> Any:
    # Lazy: serving needs the SDK, declaring and linting do not.
    if name == "FusionServer":
        try:
            from .server import FusionServer
        except ImportError as exc:
            missing = (exc.name or "").split(".")[0]
            if missing not in _SERVER_EXTRA_MODULES:
                raise
            # One line naming the extra, not the SDK's import chain.
            raise ImportError(
                f"FusionServer needs the MCP SDK{_installed_mcp1()} ({missing!r} is not installed): {SERVER_EXTRA_HINT}",
                name=exc.name,
            ) from None
        return FusionServer
    module = _LAZY.get(name)
    if module is not None:
        from importlib import import_module

        value = getattr(import_module(f".{module}", __name__), name)
        globals()[name] = value  # read once: later reads are plain attribute lookups
        return value
    raise AttributeError(f"module 'mcp_fusion' has no attribute {name!r}")


def _installed_mcp1() -> str:
    """With mcp 1.x installed: which, and that ``@contract`` works with it (FusionServer needs 2.x)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("mcp")
    except PackageNotFoundError:
        return ""
    if not installed.startswith("1."):
        return ""
    return f" 2.x (mcp {installed} is installed: @contract and fail work with it, FusionServer does not)"


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
