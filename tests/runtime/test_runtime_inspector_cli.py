"""The MCP Inspector's CLI as a client (issue 33): framework × transport, reading only ``content[0].text``.

``.ci/run`` installs ``@modelcontextprotocol/inspector`` into ``.ci-node/`` (elsewhere point
``FUSION_INSPECTOR_BIN`` at its ``mcp-inspector`` script). Without node or the package the tests skip,
saying which is missing. Each framework fixture installed here (and FusionServer's example with mcp 2.x)
is called over stdio and Streamable HTTP; the declared failure's first text block must carry code,
reason and recovery.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from framework_clients import FRAMEWORKS, MCP_MAJOR, REPO_ROOT, free_port, http_process

from mcp_fusion.client import parse_envelope

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MCP_MAJOR is None, reason="mcp not installed")]

SERVE = str(Path(__file__).with_name("serve_fixture.py"))
DEFAULT_BIN = REPO_ROOT / ".ci-node" / "node_modules" / ".bin" / "mcp-inspector"
SERVERS = [*FRAMEWORKS, "lowlevel", *(["fusion"] if MCP_MAJOR == 2 else [])]
RECOVERY = {
    "fusion": "Call list_invoices to find the right invoice, then retry with its ID.",
}


def inspector() -> str:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the MCP Inspector CLI test needs node >= 18")
    found = Path(os.environ.get("FUSION_INSPECTOR_BIN", DEFAULT_BIN))
    if not found.exists():
        pytest.skip(
            f"the MCP Inspector is not installed at {found}: run `npm install --prefix .ci-node "
            "@modelcontextprotocol/inspector` (as .ci/run does) or set FUSION_INSPECTOR_BIN"
        )
    return str(found)


def server_args(server: str) -> list[str]:
    if server == "fusion":
        return ["-m", "fixtures.example_server.server"]
    return [SERVE, server, "stdio"]


def call(target: list[str], tool: str, arguments: dict[str, str]) -> dict:
    args = [f"{key}={value}" for key, value in arguments.items()]
    command = [inspector(), "--cli", *target, "--method", "tools/call", "--tool-name", tool]
    if args:
        command += ["--tool-arg", *args]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT, env=environment, check=False
    )
    assert completed.returncode == 0, completed.stderr[-3000:] + completed.stdout[-2000:]
    return json.loads(completed.stdout[completed.stdout.index("{") :])


def check(result: dict, server: str) -> None:
    assert result["isError"] is True, result
    failure = parse_envelope(result["content"][0]["text"])
    assert (failure.code, failure.reason) == ("NOT_FOUND", "invoice_not_found"), result
    assert failure.recovery == RECOVERY.get(server, "Call list_invoices to find a real invoice ID, then retry.")


@pytest.mark.parametrize("server", SERVERS)
def test_stdio(server: str) -> None:
    check(call([sys.executable, *server_args(server)], "get_invoice", {"invoice_id": "inv_404"}), server)


@pytest.mark.parametrize("server", SERVERS)
def test_streamable_http(server: str) -> None:
    binary = inspector()

    async def run() -> dict:
        port = free_port()
        args = ["-m", "fixtures.example_server.server", "--http", "--port", str(port)]
        if server != "fusion":
            args = [SERVE, server, "http", str(port)]
        async with http_process(args, port) as (url, _process):
            return await anyio.to_thread.run_sync(
                lambda: call([url, "--transport", "http"], "get_invoice", {"invoice_id": "inv_404"})
            )

    assert binary
    check(anyio.run(run), server)
