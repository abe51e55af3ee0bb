"""Each framework's own client, in memory and over stdio, reading results as wire JSON (issue 18).

``FRAMEWORKS`` holds what this environment has installed: ``mcp1`` (mcp 1.x ``FastMCP``),
``mcpserver`` (mcp 2.x ``MCPServer``) and ``fastmcp`` (the package, any version). The matrix
(``tests/framework_matrix.sh``) runs the framework tests once per installed combination.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "fixtures" / "frameworks"
FIXTURE_OF = {"mcp1": "billing_mcp1", "mcpserver": "billing_mcpserver", "fastmcp": "billing_fastmcp"}


def _installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


MCP_VERSION = _installed("mcp")
FASTMCP_VERSION = _installed("fastmcp")
MCP_MAJOR = int(MCP_VERSION.split(".")[0]) if MCP_VERSION else None

FRAMEWORKS: list[str] = []
if MCP_MAJOR == 1:
    FRAMEWORKS.append("mcp1")
if MCP_MAJOR == 2:
    FRAMEWORKS.append("mcpserver")
if FASTMCP_VERSION and importlib.util.find_spec("fastmcp") is not None:
    FRAMEWORKS.append("fastmcp")

#: Whether the framework has a hook before argument validation (mcp_fusion.integrations).
HOOKED = {"mcp1": False, "mcpserver": True, "fastmcp": True}


def fixture_app(framework: str) -> Any:
    """The fixture server's app object (``fixtures/frameworks/billing_<framework>.py``)."""
    if str(FIXTURES) not in sys.path:
        sys.path.insert(0, str(FIXTURES))
    return importlib.import_module(FIXTURE_OF[framework]).app


def wire(result: Any) -> dict[str, Any]:
    """A ``CallToolResult`` as MCP spells it, without the SDK's per-server stamps."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    dumped.pop("resultType", None)
    meta = {k: v for k, v in (dumped.pop("_meta", None) or {}).items() if k.startswith("fusion/")}
    if meta:
        dumped["_meta"] = meta
    return dumped


class Caller:
    """``await caller.call(name, arguments)`` -> the result as wire JSON, whatever the client."""

    def __init__(self, framework: str, client: Any) -> None:
        self.framework = framework
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.framework == "fastmcp":
            return wire(await self.client.call_tool_mcp(name, arguments))
        return wire(await self.client.call_tool(name, arguments))

    async def call_raw(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The result as wire JSON with every ``_meta`` key (``call`` keeps only ``fusion/`` ones)."""
        if self.framework == "fastmcp":
            result = await self.client.call_tool_mcp(name, arguments)
        else:
            result = await self.client.call_tool(name, arguments)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def list_tools(self) -> list[Any]:
        listed = await self.client.list_tools()
        return list(getattr(listed, "tools", listed))


@asynccontextmanager
async def in_memory(framework: str, app: Any) -> AsyncIterator[Caller]:
    """The framework's own in-memory client talking to ``app``."""
    if framework == "mcp1":
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(app._mcp_server) as session:
            yield Caller(framework, session)
    elif framework == "mcpserver":
        import mcp

        async with mcp.Client(app) as client:
            yield Caller(framework, client)
    else:
        import fastmcp

        async with fastmcp.Client(app) as client:
            yield Caller(framework, client)


@asynccontextmanager
async def over_stdio(framework: str, env: dict[str, str] | None = None) -> AsyncIterator[Caller]:
    """A real subprocess serving the fixture on stdio, driven by the framework's SDK client."""
    import os

    script = str(FIXTURES / f"{FIXTURE_OF[framework]}.py")
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})}
    if framework == "fastmcp":
        import fastmcp
        from fastmcp.client.transports import PythonStdioTransport

        transport = PythonStdioTransport(script, python_cmd=sys.executable, env=environment, cwd=str(REPO_ROOT))
        async with fastmcp.Client(transport) as client:
            yield Caller(framework, client)
        return
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[script], env=environment, cwd=str(REPO_ROOT))
    if framework == "mcp1":
        from mcp import ClientSession

        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield Caller(framework, session)
    else:
        import mcp

        async with mcp.Client(stdio_client(params)) as client:
            yield Caller(framework, client)


@asynccontextmanager
async def served_over_http(asgi_app: Any) -> AsyncIterator[str]:
    """``asgi_app`` served by uvicorn in this process on a free port; yields its MCP endpoint's URL."""
    import socket

    import anyio
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(asgi_app, host="127.0.0.1", port=port, log_level="warning"))
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.05)
            try:
                yield f"http://127.0.0.1:{port}/mcp"
            finally:
                server.should_exit = True


class SdkCaller:
    """The official Python SDK's client (mcp 1.x ``ClientSession`` or 2.x ``mcp.Client``), results as wire JSON.

    A JSON-RPC error is raised as the SDK raises it; :func:`error_code` reads its code.
    """

    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return wire(await self.client.call_tool(name, arguments))

    async def read_resource(self, uri: str) -> Any:
        return await self.client.read_resource(uri)


def error_code(error: BaseException) -> int | None:
    """The JSON-RPC code of an error the SDK client raised (1.x ``McpError.error.code``, 2.x ``MCPError.code``)."""
    code = getattr(error, "code", None)
    if code is None:
        code = getattr(getattr(error, "error", None), "code", None)
    return code


@asynccontextmanager
async def sdk_stdio(args: list[str], env: dict[str, str] | None = None) -> AsyncIterator[SdkCaller]:
    """The official SDK client driving ``python *args`` over stdio."""
    import os

    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})}
    params = StdioServerParameters(command=sys.executable, args=args, env=environment, cwd=str(REPO_ROOT))
    if MCP_MAJOR == 1:
        from mcp import ClientSession

        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield SdkCaller(session)
    else:
        import mcp

        async with mcp.Client(stdio_client(params)) as client:
            yield SdkCaller(client)


@asynccontextmanager
async def sdk_http(url: str) -> AsyncIterator[SdkCaller]:
    """The official SDK client over Streamable HTTP."""
    if MCP_MAJOR == 1:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamablehttp_client

        async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            yield SdkCaller(session)
    else:
        import mcp

        async with mcp.Client(url) as client:
            yield SdkCaller(client)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def http_process(args: list[str], port: int, path: str = "/mcp") -> AsyncIterator[tuple[str, Any]]:
    """``python *args`` serving Streamable HTTP on ``port``; yields ``(url, process)`` once it accepts connections."""
    import os
    import socket

    import anyio

    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = await anyio.open_process([sys.executable, *args], cwd=str(REPO_ROOT), env=environment, stderr=None)
    try:
        with anyio.fail_after(60):
            while True:
                if process.returncode is not None:
                    raise RuntimeError(f"the HTTP server exited with {process.returncode}")
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    await anyio.sleep(0.1)
        yield f"http://127.0.0.1:{port}{path}", process
    finally:
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
