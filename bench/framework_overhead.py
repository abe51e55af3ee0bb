"""What ``@contract`` costs on each framework, in memory, side by side in one run (issue 18).

    python bench/framework_overhead.py                 # the frameworks installed in this environment
    .ci-matrix/mcp1-fastmcp3/bin/python bench/framework_overhead.py --calls 400

For every framework installed here it serves four tools through the framework's own in-memory client:

* success: ``plain_ok`` (the bare handler) vs ``contracted_ok`` (the same under ``@contract``);
* failure: ``plain_tool_error`` raising the framework's own ``ToolError`` vs ``contracted_fail`` raising
  ``fail(...)`` of a declared reason (rendered as the ``<tool_error>`` envelope and mirror).

Calls run in paired blocks (plain then contracted, the order flipped every block) so both see the
same machine load; times are the median block time per call, ratios the median of the paired
blocks' ratios. Records are created as in a served process (a root handler
that discards them), so both sides pay for logging. Targets: success ≤ 1.1×, failure ≤ 1.3×.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail  # noqa: E402

ENTRY = ErrorContract(
    reason="invoice_not_found",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No invoice has that ID",
    recovery="Call list_invoices to find a real invoice ID, then retry.",
)


def frameworks() -> list[str]:
    found = []
    try:
        major = int(version("mcp").split(".")[0])
    except Exception:  # noqa: BLE001
        major = None
    if major == 1:
        found.append("mcp1 FastMCP")
    if major == 2:
        found.append("mcp2 MCPServer")
    if importlib.util.find_spec("fastmcp") is not None:
        found.append(f"fastmcp {version('fastmcp')}")
    return found


def build(framework: str):
    if framework.startswith("mcp1"):
        from mcp.server.fastmcp import FastMCP as App
        from mcp.server.fastmcp.exceptions import ToolError
    elif framework.startswith("mcp2"):
        from mcp.server.mcpserver import MCPServer as App
        from mcp.server.mcpserver.exceptions import ToolError
    else:
        from fastmcp import FastMCP as App
        from fastmcp.exceptions import ToolError
    app = App("bench")

    def plain_ok(invoice_id: str) -> str:
        return f"invoice {invoice_id}"

    @contract(errors=[ENTRY])
    def contracted_ok(invoice_id: str) -> str:
        return f"invoice {invoice_id}"

    def plain_tool_error(invoice_id: str) -> str:
        raise ToolError(f"No invoice {invoice_id}")

    @contract(errors=[ENTRY])
    def contracted_fail(invoice_id: str) -> str:
        raise fail("invoice_not_found", f"No invoice {invoice_id}")

    for fn in (plain_ok, contracted_ok, plain_tool_error, contracted_fail):
        app.tool()(fn)
    return app


class Client:
    def __init__(self, framework: str, app) -> None:
        self.framework, self.app = framework, app

    async def __aenter__(self):
        if self.framework.startswith("mcp1"):
            from mcp.shared.memory import create_connected_server_and_client_session

            self.manager = create_connected_server_and_client_session(self.app._mcp_server)
            self.client = await self.manager.__aenter__()
            self.call = self.client.call_tool
        elif self.framework.startswith("mcp2"):
            import mcp

            self.manager = mcp.Client(self.app)
            self.client = await self.manager.__aenter__()
            self.call = self.client.call_tool
        else:
            import fastmcp

            self.manager = fastmcp.Client(self.app)
            self.client = await self.manager.__aenter__()
            self.call = self.client.call_tool_mcp
        return self

    async def __aexit__(self, *exc) -> None:
        await self.manager.__aexit__(*exc)


async def measure(framework: str, calls: int, blocks: int) -> dict[str, float]:
    async with Client(framework, build(framework)) as client:
        pairs = {"success": ("plain_ok", "contracted_ok"), "failure": ("plain_tool_error", "contracted_fail")}
        for plain, contracted in pairs.values():  # warm up both paths (schemas, caches, first-failure setup)
            for name in (plain, contracted):
                for _ in range(20):
                    await client.call(name, {"invoice_id": "inv_1"})
        timings: dict[str, list[float]] = {name: [] for pair in pairs.values() for name in pair}
        ratios: dict[str, list[float]] = {kind: [] for kind in pairs}
        for block in range(blocks):
            for kind, pair in pairs.items():
                # Paired blocks, the order flipped every block: drift in the machine's load cancels out.
                order = pair if block % 2 == 0 else pair[::-1]
                took = {}
                for name in order:
                    start = time.perf_counter()
                    for _ in range(calls):
                        await client.call(name, {"invoice_id": "inv_1"})
                    took[name] = (time.perf_counter() - start) / calls
                    timings[name].append(took[name])
                ratios[kind].append(took[pair[1]] / took[pair[0]])
    per_call = {name: statistics.median(values) for name, values in timings.items()}
    return {
        "plain_ok_us": per_call["plain_ok"] * 1e6,
        "contracted_ok_us": per_call["contracted_ok"] * 1e6,
        "success_ratio": statistics.median(ratios["success"]),
        "tool_error_us": per_call["plain_tool_error"] * 1e6,
        "contracted_fail_us": per_call["contracted_fail"] * 1e6,
        "failure_ratio": statistics.median(ratios["failure"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per block")
    parser.add_argument("--blocks", type=int, default=7, help="alternating blocks per tool")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, handlers=[logging.NullHandler()], force=True)
    found = frameworks()
    if not found:
        print("no framework installed (mcp, fastmcp)")
        return 1
    print(f"Python {sys.version.split()[0]}; {args.blocks} blocks x {args.calls} calls per tool; median per call")
    print(
        "| framework | plain success | @contract success | ratio (≤ 1.1) | ToolError | @contract fail() | ratio (≤ 1.3) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for framework in found:
        label = framework if not framework.startswith("mcp") else f"{framework} (mcp {version('mcp')})"
        row = asyncio.run(measure(framework, args.calls, args.blocks))
        print(
            f"| {label} | {row['plain_ok_us']:.0f} µs | {row['contracted_ok_us']:.0f} µs | {row['success_ratio']:.2f}× "
            f"| {row['tool_error_us']:.0f} µs | {row['contracted_fail_us']:.0f} µs | {row['failure_ratio']:.2f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
