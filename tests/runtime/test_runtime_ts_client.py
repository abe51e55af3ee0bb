"""A client nobody here wrote: the TypeScript SDK against the example server over stdio (issue 16).

``.ci/run`` installs ``@modelcontextprotocol/sdk`` into ``.ci-node/``; elsewhere point
``FUSION_TS_SDK_DIR`` at an installed ``@modelcontextprotocol/sdk`` package folder. Without node
or the package the test skips, saying which is missing. None of the calls may throw, but for the
unknown tool, which the spec answers with the protocol error ``-32602``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from runtime_testing import REPO_ROOT

from mcp_fusion.client import parse_tool_result

SCRIPT = Path(__file__).with_name("ts_client") / "example_client.mjs"
DEFAULT_SDK_DIR = REPO_ROOT / ".ci-node" / "node_modules" / "@modelcontextprotocol" / "sdk"


def sdk_dir() -> Path:
    return Path(os.environ.get("FUSION_TS_SDK_DIR", DEFAULT_SDK_DIR))


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript SDK client test needs node >= 18")
    if not (sdk_dir() / "dist" / "esm" / "client" / "index.js").is_file():
        pytest.skip(
            f"the TypeScript SDK is not installed at {sdk_dir()}: run "
            "`npm install --prefix .ci-node @modelcontextprotocol/sdk` (as .ci/run does) or set FUSION_TS_SDK_DIR"
        )
    completed = subprocess.run(
        [node, str(SCRIPT), str(sdk_dir()), sys.executable, str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout)


def succeeded(report: dict[str, Any], step: str) -> dict[str, Any]:
    outcome = report[step]
    assert outcome["ok"], f"{step}: the TypeScript client threw {outcome['error']}"
    return outcome["value"]


def test_list_tools(report: dict[str, Any]) -> None:
    tools = {tool["name"]: tool for tool in succeeded(report, "list")["tools"]}
    assert {"get_invoice", "list_invoices", "pay_invoice"} <= set(tools)
    assert tools["get_invoice"]["_meta"]["fusion/errors"][0]["reason"] == "invoice_not_found"


def test_success_passes_the_clients_output_schema_check(report: dict[str, Any]) -> None:
    result = succeeded(report, "success")
    assert result.get("isError", False) is False
    assert result["structuredContent"]["id"] == "inv_2026_0001"


def test_declared_failure_is_a_result_with_the_envelope(report: dict[str, Any]) -> None:
    result = succeeded(report, "declared_failure")
    assert result["isError"] is True
    assert ElementTree.fromstring(result["content"][0]["text"]).get("code") == "NOT_FOUND"
    failure = parse_tool_result(result)
    assert failure is not None and failure.reason == "invoice_not_found" and failure.parse_error is None
    assert failure.recovery == "Call list_invoices to find the right invoice, then retry with its ID."


def test_validation_failure_is_a_result_with_the_validation_envelope(report: dict[str, Any]) -> None:
    result = succeeded(report, "validation_failure")
    assert result["isError"] is True
    root = ElementTree.fromstring(result["content"][0]["text"])
    assert root.tag == "validation_error" and root.get("action") == "get_invoice"
    assert parse_tool_result(result).fields[0][0] == "invoice_id"


def test_unknown_tool_is_the_specs_protocol_error(report: dict[str, Any]) -> None:
    outcome = report["unknown_tool"]
    assert not outcome["ok"]
    assert outcome["error"]["code"] == -32602
    assert "Unknown tool: no_such_tool" in outcome["error"]["message"]


def test_a_warning_on_a_tool_with_an_output_schema_keeps_structured_content(report: dict[str, Any]) -> None:
    result = succeeded(report, "warning_with_output_schema")
    assert result.get("isError", False) is False
    assert len(result["structuredContent"]["invoices"]) == 1 and result["structuredContent"]["total"] == 3
    warning = ElementTree.fromstring(result["content"][0]["text"])
    assert (warning.get("code"), warning.get("severity")) == ("RESULT_TRUNCATED", "warning")
    assert result["_meta"]["fusion/error"]["code_name"] == "RESULT_TRUNCATED"
