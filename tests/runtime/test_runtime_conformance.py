"""The official conformance suite (``@modelcontextprotocol/conformance``) against FusionServer and ``@contract``.

``.ci/run`` installs the package into ``.ci-node/``. Its CLI needs node >= 22 (it imports ``fs.globSync``);
Debian 12's node is 20, so ``.ci/run`` also installs node 22 from npm (the ``node`` package, which
brings the binary) into ``.ci-node/``; the test runs the CLI with that node, else with the PATH's, and
skips, saying so, when neither is 22 or newer. It runs ``conformance server --url`` over Streamable
HTTP against ``conformance_fusion.py`` (a FusionServer) and ``conformance_mcpserver.py`` (``@contract``
on MCPServer), which serve the tools, resources and prompts the scenarios name, and requires every
active server scenario to pass (exit status 0).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from framework_clients import FRAMEWORKS, MCP_MAJOR, REPO_ROOT, free_port, http_process

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MCP_MAJOR != 2, reason="FusionServer serves with mcp 2.x")]

CLI = REPO_ROOT / ".ci-node" / "node_modules" / ".bin" / "conformance"


NODE_FROM_NPM = REPO_ROOT / ".ci-node" / "node_modules" / ".bin" / "node"


def conformance() -> tuple[str, dict[str, str]]:
    """The CLI, and the environment whose PATH starts with a node >= 22 (its ``#!/usr/bin/env node``)."""
    node = str(NODE_FROM_NPM) if NODE_FROM_NPM.exists() else shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the conformance suite needs node >= 22")
    major = int(
        subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v").split(".")[0]
    )
    if major < 22:
        pytest.skip(f"@modelcontextprotocol/conformance needs node >= 22 (fs.globSync); this machine has node {major}")
    if not CLI.exists():
        pytest.skip(f"the conformance suite is not installed at {CLI}: run .ci/run's npm install")
    environment = {**os.environ, "PATH": f"{Path(node).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return str(CLI), environment


# The suite's "everything" scenarios, each served by our own fixture: a FusionServer, and mcp 2.x
# MCPServer with every tool under @contract (its one failing tool fails with a declared reason).
SERVERS = {
    "fusion": lambda port: ["tests/runtime/conformance_fusion.py", str(port)],
    **(
        {"mcpserver": lambda port: ["tests/runtime/conformance_mcpserver.py", str(port)]}
        if "mcpserver" in FRAMEWORKS
        else {}
    ),
}


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_every_active_server_scenario_passes(server: str) -> None:
    cli, environment = conformance()

    async def run() -> subprocess.CompletedProcess[str]:
        port = free_port()
        async with http_process(SERVERS[server](port), port) as (url, _process):
            return await anyio.to_thread.run_sync(
                lambda: subprocess.run(
                    [cli, "server", "--url", url],
                    capture_output=True,
                    text=True,
                    timeout=600,
                    cwd=REPO_ROOT,
                    env=environment,
                )
            )

    completed = anyio.run(run)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
