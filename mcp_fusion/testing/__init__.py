"""Contract tests for MCP tools (issue 22): run a tool through the production boundary, and measure coverage.

    from mcp_fusion.testing import run_tool_contract

    async def test_unknown_invoice():
        result = await run_tool_contract(get_invoice, {"invoice_id": "inv_404"})
        assert result.is_error and result.failure.reason == "invoice_not_found"

``run_tool_contract`` is awaitable (async tests: anyio's or pytest-asyncio's); ``run_tool_contract_sync``
is the same call for a plain test. ``pytest --contract-coverage`` (the plugin in
``fusion_lint.pytest_plugin``) reports which declared reasons the tests made happen.
"""

from __future__ import annotations

from ..failure import ToolFailure
from .recording import CoverageRecorder, Observation
from .result import ContractResult
from .runner import run_tool_contract, run_tool_contract_sync
from .standin import StandInContext

__all__ = [
    "ContractResult",
    "CoverageRecorder",
    "Observation",
    "StandInContext",
    "ToolFailure",
    "run_tool_contract",
    "run_tool_contract_sync",
]
