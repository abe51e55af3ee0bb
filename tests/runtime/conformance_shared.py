"""What both conformance fixtures serve alike (``conformance_fusion.py``, ``conformance_mcpserver.py``):
the scenarios' minimal media and the two declared failures."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_fusion import ErrorContract, JsonRpcErrorCode

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

INTENTIONAL = ErrorContract(
    reason="intentional_error",
    code=JsonRpcErrorCode.INTERNAL_ERROR,
    when="Always: the scenario checks how a failing tool is reported",
    recovery="Do not call test_error_handling again; call test_simple_text to check the server instead.",
)
NO_CAPABILITY = ErrorContract(
    reason="client_capability_missing",
    code=JsonRpcErrorCode.INVALID_REQUEST,
    when="The client did not declare the capability the tool needs (sampling or elicitation)",
    recovery="Reconnect with a client that declares the capability, then call the tool again.",
)
MESSAGE = "This tool intentionally returns an error for testing"


async def log_three_steps(ctx: Any) -> str:
    """tools-call-with-logging: three info messages ~50 ms apart (either framework's Context)."""
    for step, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await asyncio.sleep(0.05)
        await ctx.info(message)
    return "Tool with logging executed successfully"


async def progress_three_steps(ctx: Any) -> str:
    """tools-call-with-progress: 0, 50 and 100 of 100, ~50 ms apart."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        await asyncio.sleep(0.05)
    return "Tool with progress executed successfully"
