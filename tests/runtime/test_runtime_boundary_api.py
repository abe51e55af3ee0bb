"""The boundary without a server (issue 16 for issue 18): any outcome -> the same bytes FusionServer sends.

A framework adapter has no ``ToolDefinition``, only what it runs: a kind, a name and a contract.
``outcome_of_exception``/``outcome_of_return`` classify what the handler did and ``tool_result``
renders it; the text and the mirror must be exactly what ``FusionServer`` puts on the wire.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass

import pytest
from runtime_testing import connected

from mcp_fusion import ErrorContract, FusionServer, JsonRpcErrorCode, not_found, tool, tool_error
from mcp_fusion.boundary import HandlerSuccess, outcome_of_exception, outcome_of_return, run_handler
from mcp_fusion.wire import tool_result

pytestmark = pytest.mark.anyio

MISSING = ErrorContract(
    reason="invoice_missing",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No invoice has that ID",
    recovery="Call list_invoices to find a real invoice ID, then retry.",
    retryable=False,
)


@dataclass
class AdapterTarget:
    """What a framework adapter knows about the tool it wraps."""

    name: str
    kind: str = "tool"

    @property
    def owner(self) -> str:
        return f"{self.kind} {self.name!r}"

    def entry(self, reason: str | None) -> ErrorContract | None:
        return MISSING if reason == MISSING.reason else None


def failing() -> str:
    raise not_found("Invoice inv_9 was archived", {"reason": "invoice_missing", "invoice_id": "inv_9"})


@tool("get_invoice", errors=[MISSING])
def get_invoice() -> str:
    return failing()


@pytest.mark.parametrize("envelope", ["xml", "json"])
async def test_an_adapter_renders_the_bytes_fusion_server_sends(envelope: str) -> None:
    async with connected(FusionServer("s", tools=[get_invoice], envelope=envelope)) as client:
        served = await client.call_tool("get_invoice", {})
    try:
        failing()
    except BaseException as exc:  # noqa: BLE001 - what an adapter's wrapper does
        outcome = outcome_of_exception(AdapterTarget("get_invoice"), exc, {})
    parts = tool_result(AdapterTarget("get_invoice"), outcome, envelope_format=envelope)
    assert parts.content[0]["text"] == served.content[0].text
    assert parts.structured_content == served.structured_content
    assert parts.is_error is served.is_error is True
    wire = served.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"result_type", "meta"})
    assert parts.to_wire() == wire  # the SDK only adds its serverInfo stamp in _meta


def test_with_an_output_schema_the_mirror_travels_in_meta() -> None:
    outcome = outcome_of_return(AdapterTarget("t"), tool_error("SERVER_BUSY", "Busy").retry_after(5), {})
    parts = tool_result(AdapterTarget("t"), outcome, has_output_schema=True)
    assert parts.structured_content is None
    assert parts.meta["fusion/error"]["code_name"] == "SERVER_BUSY" and parts.meta["fusion/error"]["code"] == -32000


def test_a_returned_value_and_a_warning() -> None:
    assert outcome_of_return(AdapterTarget("t"), {"a": 1}, {}) == HandlerSuccess({"a": 1})
    warned = outcome_of_return(AdapterTarget("t"), tool_error("DEPRECATED", "Old").severity("warning").result("ok"), {})
    parts = tool_result(AdapterTarget("t"), warned)
    assert parts.is_error is False and parts.content[1] == {"type": "text", "text": "ok"}


async def test_keyboard_interrupt_and_a_real_cancellation_propagate(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_fusion")
    with pytest.raises(KeyboardInterrupt):
        outcome_of_exception(AdapterTarget("t"), KeyboardInterrupt(), {})

    @tool("sleeper")
    async def sleeper() -> str:
        await asyncio.sleep(30)
        return "woke"

    import anyio

    with anyio.CancelScope() as scope:  # how the SDK cancels a request
        scope.cancel()
        with pytest.raises(anyio.get_cancelled_exc_class()):
            await run_handler(sleeper, {})
    (record,) = [r for r in caplog.records if r.getMessage().startswith("Error in tool:sleeper")]
    assert record.levelno == logging.INFO and "REQUEST_CANCELLED" in record.getMessage()
    assert "without a cancel notification from the client" in record.getMessage()  # never claimed as the client's


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio tasks count cancel requests from 3.11 on")
async def test_a_plain_asyncio_cancellation_outside_anyio_propagates_too() -> None:
    @tool("sleeper")
    async def sleeper() -> str:
        await asyncio.sleep(30)
        return "woke"

    task = asyncio.get_running_loop().create_task(run_handler(sleeper, {}))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_handlers_own_cancelled_error_is_a_masked_failure() -> None:
    @tool("self_cancelling")
    async def self_cancelling() -> str:
        task = asyncio.ensure_future(asyncio.sleep(30))
        await asyncio.sleep(0)
        task.cancel()
        await task
        return "unreachable"

    outcome = await run_handler(self_cancelling, {})
    assert outcome.reason == "unexpected_error" and outcome.code is JsonRpcErrorCode.INTERNAL_ERROR
    await asyncio.sleep(0)  # the task was not left cancelling: it goes on awaiting
