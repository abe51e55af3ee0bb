"""Contract coverage records what reaches the boundary however the test drives the server (issue 22).

``run_tool_contract``, an in-memory client, a stdio or HTTP server running in the test's process, each
framework of the matrix under ``@contract`` (``tests/framework_matrix.sh`` runs this file once per
combination): every declared outcome is one observation with its code and whether the recovery
reached the wire. The universe these are counted against is the static one (``fusion-lint``; for the
framework tools, ``test_runtime_contract_coverage_static.py``).
"""

from __future__ import annotations

import json

import anyio
import pytest
from framework_clients import FRAMEWORKS, MCP_MAJOR, fixture_app, in_memory, served_over_http

from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool
from mcp_fusion.testing import CoverageRecorder, Observation, run_tool_contract
from mcp_fusion.testing.report import build_report

pytestmark = pytest.mark.anyio
needs_fusion_server = pytest.mark.skipif(MCP_MAJOR != 2, reason="FusionServer needs mcp 2.x (the [server] extra)")

RETRY = "Call list_items to find a real item ID, then retry."


@tool(
    "get_item",
    errors=[
        ErrorContract(
            reason="item_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item has that ID", recovery=RETRY
        ),
    ],
)
def get_item(item_id: str) -> str:
    from mcp_fusion import not_found

    raise not_found(f"No item {item_id}", {"reason": "item_missing"})


def observed(kind: str, name: str, reason: str, code: str, declared: str | None, **extra) -> Observation:
    return Observation(kind, name, reason, code, recovery_on_wire=True, declared_code=declared, **extra)


async def test_run_tool_contract_is_recorded() -> None:
    with CoverageRecorder() as recorder:
        await run_tool_contract(get_item, {"item_id": "x"})
        await run_tool_contract(get_item, {"item_id": "y"})
    assert recorder.observations == {observed("tool", "get_item", "item_missing", "NOT_FOUND", "NOT_FOUND"): 2}
    assert recorder.running_contracts == {("tool", "get_item"): {"item_missing": "NOT_FOUND"}}


async def test_nothing_is_recorded_once_uninstalled() -> None:
    recorder = CoverageRecorder().install()
    recorder.uninstall()
    await run_tool_contract(get_item, {"item_id": "x"})
    assert not recorder.observations


@needs_fusion_server
async def test_an_in_memory_client_and_an_http_server_in_the_process_are_recorded() -> None:
    import mcp

    from mcp_fusion import FusionServer

    server = FusionServer("items", tools=[get_item])
    with CoverageRecorder() as recorder:
        async with mcp.Client(server.sdk_server) as client:
            await client.call_tool("get_item", {"item_id": "in-memory"})
        async with served_over_http(server.asgi_app()) as url, mcp.Client(url) as client:
            result = await client.call_tool("get_item", {"item_id": "over-http"})
    assert result.is_error is True
    assert recorder.observations == {observed("tool", "get_item", "item_missing", "NOT_FOUND", "NOT_FOUND"): 2}


class StdioWire:
    """The client's end of a stdio transport in this process: JSON-RPC lines in, the server's lines out."""

    def __init__(self, requests: list[dict]) -> None:
        self.requests, self.responses, self.answered = requests, [], anyio.Event()

    def __aiter__(self):  # the server's stdin: the requests, then EOF once the last one is answered
        return self._lines()

    async def _lines(self):
        for request in self.requests:
            yield json.dumps(request) + "\n"
        await self.answered.wait()

    async def write(self, line: str) -> None:  # the server's stdout
        self.responses.append(json.loads(line))
        if self.responses[-1].get("id") == self.requests[-1]["id"]:
            self.answered.set()

    async def flush(self) -> None:
        pass


@needs_fusion_server
async def test_a_stdio_server_in_the_process_is_recorded() -> None:
    from mcp.server.stdio import stdio_server
    from mcp_types import LATEST_PROTOCOL_VERSION

    from mcp_fusion import FusionServer

    server = FusionServer("items", tools=[get_item]).sdk_server
    wire = StdioWire(
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "get_item", "arguments": {"item_id": "x"}},
            },
        ]
    )
    with CoverageRecorder() as recorder, anyio.fail_after(60):
        async with stdio_server(stdin=wire, stdout=wire) as (read_stream, write_stream):  # type: ignore[arg-type]
            await server.run(read_stream, write_stream, server.create_initialization_options())
    assert wire.responses[-1]["result"]["isError"] is True
    assert recorder.observations == {observed("tool", "get_item", "item_missing", "NOT_FOUND", "NOT_FOUND"): 1}


@needs_fusion_server
async def test_a_fusion_server_resource_is_recorded_by_its_uri_template() -> None:
    from fixtures.example_server import server as example

    with CoverageRecorder() as recorder:
        async with __import__("mcp").Client(example.build_server().sdk_server) as client:
            with pytest.raises(Exception):
                await client.read_resource("billing://invoices/inv_404")
    assert recorder.observations == {
        observed("resource", "billing://invoices/{invoice_id}", "invoice_not_found", "NOT_FOUND", "NOT_FOUND"): 1
    }


# -- each framework, through its own in-memory client ----------------------------------------------


@pytest.mark.skipif(not FRAMEWORKS, reason="no MCP framework installed (mcp, fastmcp)")
@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_each_framework_under_contract_is_recorded(framework: str) -> None:
    app = fixture_app(framework)
    with CoverageRecorder() as recorder:
        async with in_memory(framework, app) as caller:
            await caller.call("get_invoice", {"invoice_id": "inv_404"})
            await caller.call("refund_invoice", {"invoice_id": "inv_2", "amount_cents": 100})
            await caller.call("void_invoice", {"invoice_id": "inv_1"})
            await caller.call("get_invoice_total", {"invoice_id": "inv_1"})  # a warning names no reason
            with pytest.raises(Exception):
                await caller.client.read_resource("billing://invoices/inv_404")
    observations = dict(recorder.observations)
    resources = {o: n for o, n in observations.items() if o.kind == "resource"}
    assert {o: n for o, n in observations.items() if o.kind == "tool"} == {
        observed("tool", "get_invoice", "invoice_not_found", "NOT_FOUND", "NOT_FOUND"): 1,
        observed("tool", "refund_invoice", "invoice_locked", "CONFLICT", "CONFLICT"): 1,
        observed("tool", "void_invoice", "already_void", "INTERNAL_ERROR", None, undeclared_fail=True): 1,
    }
    ((resource, count),) = resources.items()
    assert (resource.reason, resource.code, resource.declared_code, count) == (
        "invoice_not_found",
        "NOT_FOUND",
        "NOT_FOUND",
        1,
    )
    # Named by its URI, as the linter names it: the one read where an integration tells it, else (mcp 1.x
    # FastMCP, no hook) the template of the resource object running the read; never by its function.
    assert resource.name == ("billing://invoices/{invoice_id}" if framework == "mcp1" else "billing://invoices/inv_404")
    # mcp 1.x FastMCP and fastmcp 2.x keep only a resource failure's message: its recovery never reaches the client.
    from test_runtime_frameworks import passes_protocol_errors

    assert resource.recovery_on_wire is passes_protocol_errors(framework)
    # A tool outside the universe (paths that leave its file out) is listed with the contract it runs with.
    report = build_report(
        {"tools": {}, "resources": {}},
        observations,
        source={"source": "linter", "paths": []},
        running_contracts=recorder.running_contracts,
    )
    outside = {(d.kind, d.name): [(r.reason, r.status) for r in d.reasons] for d in report.outside}
    assert outside[("tool", "get_invoice")] == [("invoice_not_found", "exercised")]
    assert outside[("tool", "refund_invoice")] == [("invoice_locked", "exercised")]
    assert report.definition("tool", "void_invoice").undeclared == {("already_void", "INTERNAL_ERROR", True): 1}


def test_a_resource_read_by_its_uri_counts_for_its_template() -> None:
    universe = {
        "tools": {},
        "resources": {"billing://invoices/{invoice_id}": {"errors": {"invoice_not_found": {"code": "NOT_FOUND"}}}},
    }
    seen = {observed("resource", "billing://invoices/inv_404", "invoice_not_found", "NOT_FOUND", "NOT_FOUND"): 1}
    report = build_report(universe, seen, source={"source": "linter", "paths": []})
    assert report.percent == 100 and not report.outside


def test_a_reason_seen_only_without_its_recovery_is_flagged() -> None:
    universe = {"tools": {"t": {"errors": {"r": {"code": "NOT_FOUND"}}}}, "resources": {}}
    seen = {Observation("tool", "t", "r", "NOT_FOUND", recovery_on_wire=False, declared_code="NOT_FOUND"): 1}
    report = build_report(universe, seen, source={"source": "linter", "paths": []})
    reason = report.definitions[0].reasons[0]
    assert (reason.status, reason.why, report.percent) == ("flagged", "its recovery never reached the wire", 0)
