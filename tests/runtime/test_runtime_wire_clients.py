"""What the clients keep (issue 33, DESIGN §13.4): framework × transport × the official Python SDK client, and the TypeScript SDK's.

Clients pass the model only ``content[0].text`` of an error result (Claude Code, LangChain, hermes drop
``structuredContent``; Claude Code shows only ``message`` of a JSON-RPC error). For every framework
installed here (mcp 1.x ``FastMCP``, mcp 2.x ``MCPServer``, ``fastmcp``, the low-level ``Server``, and
``FusionServer`` with mcp 2.x), served as a real subprocess on stdio and on Streamable HTTP, each
declared failure's first text block alone must hold its code, reason, message and recovery; no
JSON-RPC error carries a code in the legacy/reserved band −32000…−32099; invalid arguments are an
``isError`` result where the framework lets an adapter see them; a resource failure's ``message``
carries the recovery. ``tests/framework_matrix.sh`` runs it on every supported combination.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from framework_clients import (
    FRAMEWORKS,
    HOOKED,
    MCP_MAJOR,
    REPO_ROOT,
    error_code,
    free_port,
    http_process,
    sdk_http,
    sdk_stdio,
)

from mcp_fusion.client import parse_envelope

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.skipif(MCP_MAJOR is None, reason="mcp not installed")]

SERVE = str(Path(__file__).with_name("serve_fixture.py"))
SERVERS = [*FRAMEWORKS, "lowlevel", *(["fusion"] if MCP_MAJOR == 2 else [])]
FIXTURE_RECOVERY = "Call list_invoices to find a real invoice ID, then retry."
#: (tool, arguments, code, reason, message, recovery) of each server's declared failures.
DECLARED = [
    (
        "get_invoice",
        {"invoice_id": "inv_404"},
        "NOT_FOUND",
        "invoice_not_found",
        "No invoice inv_404",
        FIXTURE_RECOVERY,
    ),
]
FUSION_DECLARED = [
    (
        "get_invoice",
        {"invoice_id": "inv_404"},
        "NOT_FOUND",
        "invoice_not_found",
        "No invoice 'inv_404'",
        "Call list_invoices to find the right invoice, then retry with its ID.",
    ),
]
SERVICE = ("refund_invoice", {"invoice_id": "inv_2", "amount_cents": 100}, "CONFLICT", "invoice_locked")
RESERVED = range(-32099, -32000 + 1)


def _command(server: str, transport: str, port: int | None = None) -> list[str]:
    if server == "fusion":
        return ["-m", "fixtures.example_server.server", *(["--http", "--port", str(port)] if port else [])]
    return [SERVE, server, transport, *([str(port)] if port else [])]


@asynccontextmanager
async def connect(server: str, transport: str):
    if transport == "stdio":
        async with sdk_stdio(_command(server, "stdio")) as caller:
            yield caller
        return
    port = free_port()
    async with http_process(_command(server, "http", port), port) as (url, _process):
        async with sdk_http(url) as caller:
            yield caller


async def _attempt(awaitable: Any) -> Any:
    try:
        with anyio.fail_after(60):
            return await awaitable
    except Exception as exc:  # noqa: BLE001 - a JSON-RPC error is judged below
        return exc


def _first_text_carries_everything(result: Any, code: str, reason: str, recovery: str | None, message: str | None):
    assert isinstance(result, dict), f"not a result: {result!r}"
    assert result["isError"] is True
    text = result["content"][0]["text"]  # all a client passes the model
    failure = parse_envelope(text)
    assert (failure.code, failure.reason) == (code, reason), text
    assert f'code="{code}"' in text and reason in text
    if recovery is not None:
        assert failure.recovery == recovery and recovery in text
    if message is not None:
        assert failure.message == message
    for block in result["content"][1:]:  # an error adds no block the model would need
        assert block.get("type") != "text" or not block["text"].strip(), result


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("server", SERVERS)
async def test_the_first_text_block_carries_every_declared_failure(server: str, transport: str) -> None:
    async with connect(server, transport) as caller:
        declared = FUSION_DECLARED if server == "fusion" else DECLARED
        for name, arguments, code, reason, message, recovery in declared:
            _first_text_carries_everything(
                await _attempt(caller.call(name, arguments)), code, reason, recovery, message
            )
        if server != "fusion":
            name, arguments, code, reason = SERVICE
            _first_text_carries_everything(await _attempt(caller.call(name, arguments)), code, reason, None, None)
        # Invalid arguments: an isError result (the <validation_error> where an adapter can see them).
        invalid = await _attempt(caller.call("get_invoice", {}))
        if isinstance(invalid, BaseException):
            code = error_code(invalid)
            assert code is not None and code not in RESERVED, (server, transport, invalid)
            assert server == "lowlevel" and MCP_MAJOR == 2, f"{server}: invalid arguments were a protocol error"
        else:
            assert invalid["isError"] is True
            if HOOKED.get(server, server == "fusion"):
                assert invalid["content"][0]["text"].startswith(
                    '<validation_error action="get_invoice" code="INVALID_PARAMS" reason="invalid_arguments">'
                )
        # An unknown tool: the spec's protocol error (or the framework's error result), never a reserved code.
        unknown = await _attempt(caller.call("no_such_tool", {}))
        if isinstance(unknown, BaseException):
            assert error_code(unknown) not in RESERVED, (server, transport, unknown)
        else:
            assert unknown["isError"] is True


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("server", [server for server in SERVERS if server not in ("lowlevel", "fusion")])
async def test_a_resource_failure_keeps_the_recovery_in_its_message(server: str, transport: str) -> None:
    async with connect(server, transport) as caller:
        error = await _attempt(caller.read_resource("billing://invoices/inv_404"))
    assert isinstance(error, BaseException), error
    code = error_code(error)
    assert code is not None and code not in RESERVED, (server, code)
    message = getattr(getattr(error, "error", None), "message", None) or str(error)
    assert FIXTURE_RECOVERY in message, message


def test_the_servers_under_test(request: pytest.FixtureRequest) -> None:
    """Which servers this environment exercised (printed for the matrix log)."""
    print(f"servers: {SERVERS}; mcp {MCP_MAJOR}.x; python {sys.version.split()[0]}")


# ----- the same with the TypeScript SDK's client ------------------------------------------------------

TS_SCRIPT = Path(__file__).with_name("ts_client") / "call_tools.mjs"
TS_SDK = REPO_ROOT / ".ci-node" / "node_modules" / "@modelcontextprotocol" / "sdk"


def _typescript_client() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript SDK client is not run")
    if not (TS_SDK / "dist" / "esm" / "client" / "index.js").is_file():
        pytest.skip(f"the TypeScript SDK is not installed at {TS_SDK}: run .ci/run's npm install")
    return node


async def _ts_calls(server: str, transport: str, calls: list[tuple[str, dict]]) -> list[dict]:
    node = _typescript_client()
    head = [node, str(TS_SCRIPT), str(TS_SDK), json.dumps(calls)]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}

    def run(argv: list[str]) -> list[dict]:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=REPO_ROOT, env=environment)
        assert done.returncode == 0, done.stderr[-4000:]
        return json.loads(done.stdout)

    if transport == "stdio":
        return run([*head, "stdio", str(REPO_ROOT), sys.executable, *_command(server, "stdio")])
    port = free_port()
    async with http_process(_command(server, "http", port), port) as (url, _process):
        return await anyio.to_thread.run_sync(run, [*head, "http", url])


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("server", SERVERS)
async def test_the_typescript_client_reads_the_same_first_text_block(server: str, transport: str) -> None:
    declared = FUSION_DECLARED if server == "fusion" else DECLARED
    calls = [(name, arguments) for name, arguments, *_ in declared] + [("get_invoice", {})]
    outcomes = await _ts_calls(server, transport, calls)
    for (_, _, code, reason, message, recovery), outcome in zip(declared, outcomes):
        assert outcome["ok"], f"{server}/{transport}: the TypeScript client threw {outcome['error']}"
        _first_text_carries_everything(outcome["value"], code, reason, recovery, message)
    invalid = outcomes[-1]
    if not invalid["ok"]:  # a protocol error: only where the framework leaves no adapter a way in
        assert invalid["error"]["code"] not in RESERVED, invalid
        assert server == "lowlevel" and MCP_MAJOR == 2, f"{server}: invalid arguments were a protocol error"
    elif HOOKED.get(server, server == "fusion"):
        assert invalid["value"]["content"][0]["text"].startswith(
            '<validation_error action="get_invoice" code="INVALID_PARAMS" reason="invalid_arguments">'
        )
