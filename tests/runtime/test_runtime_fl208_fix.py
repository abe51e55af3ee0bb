"""FL208's fix, end to end on each framework (issue 30, DESIGN §13.2): a server with an argument
guard, a missing-configuration failure, a not-found lookup and a framework ``ToolError``, fixed with
``--extend-select FL208 --fix --unsafe-fixes``, then called with the framework's own client. Every
failing path must still carry its original message, now with the declared code and reason (never a
masked ``INTERNAL_ERROR``), and the success path and the tool's schema must not change.

The matrix (``tests/framework_matrix.sh``) runs this once per framework version; the linter never
imports the server, the test does (it is the test's own fixture).
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from framework_clients import FRAMEWORKS, in_memory

from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.fix.apply import apply_fixes

pytestmark = [pytest.mark.anyio]

IMPORTS = {
    "mcp1": "from mcp.server.fastmcp import FastMCP\nfrom mcp.server.fastmcp.exceptions import ToolError\n",
    "fastmcp": "from fastmcp import FastMCP\nfrom fastmcp.exceptions import ToolError\n",
}
SERVER = """\
import os

app = FastMCP("drafts")
INVOICES = {"inv_1": "paid"}


@app.tool()
def get_invoice(invoice_id: str, region: str = "eu") -> str:
    \"\"\"An invoice's status.\"\"\"
    if not invoice_id:
        raise ValueError("invoice_id is required.")
    if not os.environ.get("DRAFTS_BILLING_KEY"):
        raise RuntimeError("DRAFTS_BILLING_KEY environment variable is not set")
    if region == "moon":
        raise ToolError(f"Region {region} is not allowed for billing")
    if invoice_id not in INVOICES:
        raise LookupError(f"Invoice {invoice_id} not found")
    return INVOICES[invoice_id]
"""
# (arguments, the text the model read before the fix, the code and reason it carries after)
FAILURES = [
    ({"invoice_id": ""}, "invoice_id is required.", "INVALID_PARAMS", "missing_invoice_id"),
    (
        {"invoice_id": "inv_1", "region": "moon"},
        "Region moon is not allowed for billing",
        "FORBIDDEN",
        "region_not_allowed",
    ),
    ({"invoice_id": "inv_9"}, "Invoice inv_9 not found", "NOT_FOUND", "invoice_not_found"),
]
MISSING_CONFIGURATION = ("DRAFTS_BILLING_KEY environment variable is not set", "CONFIGURATION_ERROR")


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.app


async def _calls(framework: str, app: Any) -> tuple[list[dict], list[dict]]:
    async with in_memory(framework, app) as caller:
        results = [await caller.call("get_invoice", arguments) for arguments, *_ in FAILURES]
        results.append(await caller.call("get_invoice", {"invoice_id": "inv_1"}))
        listed = await (caller.client.list_tools_mcp() if framework == "fastmcp" else caller.client.list_tools())
        tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
    return results, tools


def _first_text(result: dict) -> str:
    return result["content"][0]["text"]


@pytest.mark.parametrize("framework", [f for f in FRAMEWORKS if f in IMPORTS])
async def test_fl208s_fix_keeps_every_message_and_adds_code_and_reason(
    framework: str, tmp_path: Path, monkeypatch
) -> None:
    source = IMPORTS[framework] + textwrap.dedent(SERVER)
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    original = tmp_path / "original_server.py"
    original.write_text(source)
    fixed_path = tmp_path / "server.py"
    fixed_path.write_text(source)
    options = Options(paths=[str(fixed_path)], selection=Selection(extend_select=["FL208"]), use_cache=False, jobs=1)
    apply_fixes(lint(options), options, write=True, unsafe=True)
    fixed = fixed_path.read_text()
    assert "@contract(errors=[" in fixed and fixed.count("raise fail(") == 4, fixed

    monkeypatch.setenv("DRAFTS_BILLING_KEY", "k")
    before, tools_before = await _calls(framework, _load(original, f"drafts_original_{framework}"))
    after, tools_after = await _calls(framework, _load(fixed_path, f"drafts_fixed_{framework}"))
    assert tools_after == tools_before  # the schema the model sees is unchanged
    assert after[-1] == before[-1] and not after[-1].get("isError")  # so is the success path
    for (_, message, code, reason), was, now in zip(FAILURES, before, after):
        assert message in _first_text(was)
        text = _first_text(now)
        assert now.get("isError") is True
        assert message in text and f'code="{code}"' in text and reason in text, text
        assert "INTERNAL_ERROR" not in text

    monkeypatch.delenv("DRAFTS_BILLING_KEY")
    async with in_memory(framework, sys.modules[f"drafts_fixed_{framework}"].app) as caller:
        configuration = _first_text(await caller.call("get_invoice", {"invoice_id": "inv_1"}))
    message, code = MISSING_CONFIGURATION
    assert message in configuration and f'code="{code}"' in configuration, configuration
