"""The runtime benchmark (issue 16): a ``tools/call`` round trip, FusionServer vs the SDK's MCPServer.

    python bench/runtime_roundtrip.py               # ~30 s on 2 cores
    python bench/runtime_roundtrip.py --calls 5000  # steadier figures

The same tool (validate an ID argument, look it up, return a pydantic model) is served by a
``FusionServer`` and by mcp 2.x's ``MCPServer``; the SDK's in-memory client (``mcp.Client``) calls
each, in one process and one run, alternating short blocks so both see the same machine. Two paths:

* success: the invoice exists, the result is the model (``structured_content`` checked against the
  output schema by the client, on both);
* declared failure: the invoice does not exist; FusionServer answers ``raise ctx.fail(...)`` with
  the ``<tool_error>`` envelope and its mirror, MCPServer a ``ToolError`` (its error result).

It prints the median time per call and the ratio FusionServer / MCPServer, next to the targets
(success <= 1.1x, declared failure <= 1.3x). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_fusion import Context, ErrorContract, FusionServer, JsonRpcErrorCode, tool  # noqa: E402

TARGETS = {"success": 1.1, "declared failure": 1.3}
BLOCK = 50  # calls per block; blocks of the two servers alternate


class Invoice(BaseModel):
    id: str
    customer_id: str
    total_cents: int
    status: str


INVOICES = {"inv_1": Invoice(id="inv_1", customer_id="cus_acme", total_cents=120_000, status="open")}
NOT_FOUND = ErrorContract(
    reason="invoice_not_found",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No invoice has that ID",
    recovery="Call list_invoices to find a real invoice ID, then retry.",
)


@tool("get_invoice", description="Fetch one invoice.", errors=[NOT_FOUND])
async def fusion_get_invoice(invoice_id: str, ctx: Context) -> Invoice:
    invoice = INVOICES.get(invoice_id)
    if invoice is None:
        raise ctx.fail("invoice_not_found", f"No invoice {invoice_id!r}", {"invoice_id": invoice_id})
    return invoice


def mcpserver() -> MCPServer:
    server = MCPServer("bench")

    @server.tool(name="get_invoice", description="Fetch one invoice.")
    async def get_invoice(invoice_id: str) -> Invoice:
        invoice = INVOICES.get(invoice_id)
        if invoice is None:
            raise ToolError(f"No invoice {invoice_id!r}")
        return invoice

    return server


async def timed_block(call: Callable[[], Awaitable[Any]], count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return times


async def measure(calls: int) -> dict[str, tuple[float, float]]:
    fusion = FusionServer("bench", tools=[fusion_get_invoice])
    results: dict[str, tuple[float, float]] = {}
    async with mcp.Client(fusion.sdk_server) as fusion_client, mcp.Client(mcpserver()) as sdk_client:
        await fusion_client.list_tools()
        await sdk_client.list_tools()
        for label, invoice_id in (("success", "inv_1"), ("declared failure", "inv_404")):
            arguments = {"invoice_id": invoice_id}

            async def fusion_call() -> Any:
                return await fusion_client.call_tool("get_invoice", arguments)

            async def sdk_call() -> Any:
                return await sdk_client.call_tool("get_invoice", arguments)

            check = (await fusion_call(), await sdk_call())
            expected_error = invoice_id != "inv_1"
            assert all(result.is_error is expected_error for result in check), check
            await timed_block(fusion_call, BLOCK)  # warm-up
            await timed_block(sdk_call, BLOCK)
            fusion_times: list[float] = []
            sdk_times: list[float] = []
            for _ in range(max(1, calls // BLOCK)):
                fusion_times += await timed_block(fusion_call, BLOCK)
                sdk_times += await timed_block(sdk_call, BLOCK)
            results[label] = (statistics.median(fusion_times), statistics.median(sdk_times))
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per server and path (default 2000)")
    options = parser.parse_args(argv)
    results = anyio.run(measure, options.calls)
    print(f"tools/call round trip, in memory, {options.calls} calls per server and path (median per call)\n")
    print(f"{'path':<18} {'FusionServer':>13} {'MCPServer':>11} {'ratio':>7} {'target':>7}")
    for label, (fusion, sdk) in results.items():
        ratio = fusion / sdk
        print(f"{label:<18} {fusion * 1e3:>10.3f} ms {sdk * 1e3:>8.3f} ms {ratio:>6.2f}x {TARGETS[label]:>6.1f}x")


if __name__ == "__main__":
    main()
