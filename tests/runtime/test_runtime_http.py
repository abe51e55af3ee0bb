"""Serving over Streamable HTTP, the ASGI app and ``lifespan=`` (DESIGN §3.7, issue 16 item 5).

The example server runs as a subprocess on 127.0.0.1 (``--http``); the SDK's own HTTP client calls
it. ``lifespan=`` is checked in memory and over HTTP: handlers reach its value as ``ctx.lifespan``.
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp
import pytest
from framework_clients import served_over_http
from runtime_testing import REPO_ROOT, connected, envelope_text

from mcp_fusion import Context, FusionServer, tool
from mcp_fusion.client import FusionClient, ToolFailure, parse_tool_result

pytestmark = pytest.mark.anyio


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited early: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def serve(*args: str) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *args, "--port", str(port)], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(port, process)
        yield port, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def example_over_http() -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    yield from serve("-m", "fixtures.example_server.server", "--http")


@pytest.mark.slow
async def test_the_example_server_over_streamable_http(example_over_http: tuple[int, Any]) -> None:
    port, _ = example_over_http
    with anyio.fail_after(60):
        async with mcp.Client(f"http://127.0.0.1:{port}/mcp") as client:
            listing = await client.list_tools()
            found = await client.call_tool("get_invoice", {"invoice_id": "inv_2026_0001"})
            missing = await client.call_tool("get_invoice", {"invoice_id": "inv_missing"})
            with pytest.raises(mcp.MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
    assert "list_invoices" in {tool.name for tool in listing.tools}
    assert found.is_error is False and found.structured_content["id"] == "inv_2026_0001"
    assert missing.is_error is True and parse_tool_result(missing).reason == "invoice_not_found"
    assert (
        "<recovery>Call list_invoices to find the right invoice, then retry with its ID.</recovery>"
        in envelope_text(missing)
    )
    assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown tool: no_such_tool")


async def test_fusion_client_over_http_raises_typed_failures(example_over_http: tuple[int, Any]) -> None:
    port, _ = example_over_http
    with anyio.fail_after(60):
        async with FusionClient(f"http://127.0.0.1:{port}/mcp") as client:
            found = await client.call_tool("get_invoice", {"invoice_id": "inv_2026_0001"})
            with pytest.raises(ToolFailure) as caught:
                await client.call_tool("get_invoice", {"invoice_id": "inv_404"})
    assert found.is_error is False
    assert (caught.value.code, caught.value.reason) == ("NOT_FOUND", "invoice_not_found")


@pytest.mark.slow
async def test_ctrl_c_stops_the_http_server_cleanly(example_over_http: tuple[int, Any]) -> None:
    # After the test above: the fixture's process is the one that served it.
    _, process = example_over_http
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=20) == 0
    stderr = process.stderr.read()
    assert b"Traceback" not in stderr and b"stopped (Ctrl-C)" in stderr


@pytest.mark.slow
def test_ctrl_c_stops_the_stdio_server_cleanly() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "fixtures.example_server.server"],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    try:
        process.stdin.write((json.dumps(initialize) + "\n").encode())  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "the server did not answer initialize"
        assert json.loads(process.stdout.readline())["id"] == 1  # type: ignore[union-attr]
        process.send_signal(signal.SIGINT)  # while it waits on stdin, the pipe still open
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert b"Traceback" not in process.stderr.read()  # type: ignore[union-attr]


LIFESPAN_SERVER = textwrap.dedent(
    """
    import sys
    from contextlib import asynccontextmanager
    from mcp_fusion import Context, FusionServer, tool

    @asynccontextmanager
    async def lifespan(server):
        print("lifespan entered", file=sys.stderr, flush=True)
        yield {"pool": f"pool of {server.name}"}
        print("lifespan exited", file=sys.stderr, flush=True)

    @tool("which_pool")
    def which_pool(ctx: Context) -> str:
        return ctx.lifespan["pool"]

    FusionServer("inventory", tools=[which_pool], lifespan=lifespan).run(
        transport="streamable-http", host="127.0.0.1", port=int(sys.argv[-1]), path="/rpc", log_level="warning"
    )
    """
)


@pytest.mark.slow
async def test_lifespan_over_http_on_a_custom_path(tmp_path: Any) -> None:
    script = tmp_path / "lifespan_server.py"
    script.write_text(LIFESPAN_SERVER)
    served = serve(str(script))
    port, process = next(served)
    try:
        with anyio.fail_after(60):
            async with mcp.Client(f"http://127.0.0.1:{port}/rpc") as client:
                result = await client.call_tool("which_pool", {})
        assert result.content[0].text == "pool of inventory"
    finally:
        for _ in served:
            pass
    stderr = process.stderr.read().decode()
    assert stderr.count("lifespan entered") == 1 and "lifespan exited" in stderr


async def test_lifespan_in_memory_with_or_without_the_server_argument() -> None:
    entered: list[str] = []

    @asynccontextmanager
    async def with_server(server: FusionServer) -> AsyncIterator[dict[str, str]]:
        entered.append(server.name)
        yield {"db": "primary"}

    @asynccontextmanager
    async def without_arguments() -> AsyncIterator[str]:
        yield "plain value"

    @tool("lifespan_value")
    def lifespan_value(ctx: Context) -> str:
        return repr(ctx.lifespan)

    async with connected(FusionServer("a", tools=[lifespan_value], lifespan=with_server)) as client:
        first = await client.call_tool("lifespan_value", {})
    async with connected(FusionServer("b", tools=[lifespan_value], lifespan=without_arguments)) as client:
        second = await client.call_tool("lifespan_value", {})
    async with connected(FusionServer("c", tools=[lifespan_value])) as client:
        none = await client.call_tool("lifespan_value", {})
    async with connected(FusionServer("d", tools=[lifespan_value], lifespan=without_arguments())) as client:
        instance = await client.call_tool("lifespan_value", {})
    assert (first.content[0].text, second.content[0].text, none.content[0].text, instance.content[0].text) == (
        "{'db': 'primary'}",
        "'plain value'",
        "None",
        "'plain value'",
    )
    assert entered == ["a"]


def test_lifespan_must_be_an_async_context_manager() -> None:
    with pytest.raises(TypeError, match="lifespan= takes an async context manager"):
        FusionServer("s", lifespan=object())  # type: ignore[arg-type]


async def test_asgi_app_in_an_asgi_server_of_your_own() -> None:
    @tool("ping")
    def ping() -> str:
        return "pong"

    async with served_over_http(FusionServer("s", tools=[ping]).asgi_app()) as url, mcp.Client(url) as client:
        result = await client.call_tool("ping", {})
    assert result.content[0].text == "pong"


def test_unknown_transport_is_refused() -> None:
    with pytest.raises(ValueError, match="use 'stdio' or 'streamable-http'"):
        FusionServer("s").run(transport="sse")  # type: ignore[arg-type]
