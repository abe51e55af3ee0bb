"""``contract``, ``fail`` and ``recovery_for`` (DESIGN §12.1): the same failure, the same bytes everywhere.

The parametrised test registers one set of handlers on FusionServer and on each installed framework and
compares what the client reads: envelope text and structured mirror must be identical.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from framework_clients import FRAMEWORKS, MCP_MAJOR, in_memory

from mcp_fusion import (
    ErrorContract,
    JsonRpcErrorCode,
    contract,
    fail,
    not_found,
    recovery_for,
    tool,
    tool_error,
)

pytestmark = pytest.mark.anyio

ENTRIES = [
    ErrorContract(
        reason="invoice_not_found",
        code=JsonRpcErrorCode.NOT_FOUND,
        when="No invoice has that ID",
        recovery="Call list_invoices to find a real invoice ID, then retry.",
        retryable=False,
    ),
    ErrorContract(
        reason="upstream_down",
        code="SERVER_BUSY",
        when="The billing API is at capacity",
        recovery="Wait thirty seconds, then call get_invoice again.",
        retryable=True,
        thrown_by="service",
    ),
]


def billing_api() -> None:
    raise not_found("Invoice inv_9 was archived", {"reason": "upstream_down", "invoice_id": "inv_9"})


def declared(invoice_id: str):
    raise fail("invoice_not_found", f"No invoice {invoice_id}", {"invoice_id": invoice_id})


async def service(invoice_id: str):
    billing_api()


def crash(invoice_id: str):
    raise KeyError("db1.internal")


def warning(invoice_id: str):
    return tool_error("DEPRECATED", "Use get_invoice").severity("warning").result("ok")


def with_hint(invoice_id: str):
    raise not_found("gone", {"reason": "invoice_not_found", **recovery_for("invoice_not_found")})


HANDLERS = [declared, service, crash, warning, with_hint]


async def fusion_server_results() -> dict[str, dict]:
    from framework_clients import wire
    from runtime_testing import connected

    from mcp_fusion import FusionServer

    tools = [tool(fn.__name__, errors=ENTRIES)(fn) for fn in HANDLERS]
    async with connected(FusionServer("billing", tools=tools)) as client:
        return {fn.__name__: wire(await client.call_tool(fn.__name__, {"invoice_id": "inv_9"})) for fn in HANDLERS}


def framework_app(framework: str):
    if framework == "mcp1":
        from mcp.server.fastmcp import FastMCP as App
    elif framework == "mcpserver":
        from mcp.server.mcpserver import MCPServer as App
    else:
        from fastmcp import FastMCP as App
    app = App("billing")
    for fn in HANDLERS:
        app.tool()(contract(errors=ENTRIES)(fn))
    return app


#: FusionServer's results for HANDLERS, recorded with mcp 2.x so that mcp 1.x environments (where
#: FusionServer cannot run) compare against the same bytes. Regenerate with FUSION_LINT_REGENERATE_GOLDEN=1.
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "fusion_server_failures.json"


async def expected_results() -> dict[str, dict]:
    if MCP_MAJOR != 2:
        return json.loads(GOLDEN.read_text(encoding="utf-8"))
    results = await fusion_server_results()
    if os.environ.get("FUSION_LINT_REGENERATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert results == json.loads(GOLDEN.read_text(encoding="utf-8")), "FusionServer's bytes moved: regenerate"
    return results


@pytest.mark.skipif(not FRAMEWORKS, reason="no MCP framework installed")
@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_fusion_server_and_the_framework_send_identical_envelopes_and_mirrors(framework: str) -> None:
    expected = await expected_results()
    async with in_memory(framework, framework_app(framework)) as caller:
        for fn in HANDLERS:
            got = await caller.call(fn.__name__, {"invoice_id": "inv_9"})
            assert got == expected[fn.__name__], fn.__name__
    assert "Wait thirty seconds" in expected["service"]["content"][0]["text"]  # the service's reason, recovery filled
    assert "db1" not in str(expected["crash"])


def test_fail_outside_a_contracted_handler_names_the_reason() -> None:
    with pytest.raises(RuntimeError, match="fail\\('invoice_not_found'\\) was called outside a contracted handler"):
        fail("invoice_not_found")
    assert recovery_for("invoice_not_found") == {}


def test_fail_and_recovery_for_resolve_against_the_running_contract() -> None:
    seen = {}

    @contract(errors=ENTRIES)
    def probe() -> str:
        seen["error"] = fail("upstream_down", data={"reason": "other", "page": 2})
        seen["hint"] = recovery_for("upstream_down")
        seen["unknown"] = recovery_for("nope")
        return "done"

    assert probe() == "done"
    error = seen["error"]
    assert error.code == "SERVER_BUSY" and error.message == "The billing API is at capacity"
    assert error.data == {"retryable": True, "page": 2, "reason": "upstream_down"}  # reason written last
    assert seen["hint"] == {"recovery": {"hint": "Wait thirty seconds, then call get_invoice again."}}
    assert seen["unknown"] == {}
    with pytest.raises(RuntimeError):
        fail("upstream_down")  # the contract ended with the call


async def test_fusion_server_handlers_may_use_module_level_fail() -> None:
    pytest.importorskip("mcp_types", reason="FusionServer serves with mcp 2.x")
    from runtime_testing import connected

    from mcp_fusion import FusionServer

    @tool("sync_get", errors=ENTRIES)
    def sync_get(invoice_id: str) -> str:  # runs in a worker thread: the contract travels with it
        raise fail("invoice_not_found")

    @tool("async_get", errors=ENTRIES)
    async def async_get(invoice_id: str) -> str:
        raise fail("invoice_not_found", data=recovery_for("upstream_down"))

    async with connected(FusionServer("s", tools=[sync_get, async_get])) as client:
        synced = await client.call_tool("sync_get", {"invoice_id": "x"})
        awaited = await client.call_tool("async_get", {"invoice_id": "x"})
    assert "<message>No invoice has that ID</message>" in synced.content[0].text
    assert "<recovery>Wait thirty seconds, then call get_invoice again.</recovery>" in awaited.content[0].text


def test_the_contract_is_validated_when_declared() -> None:
    with pytest.raises(TypeError, match=r"errors\[0\]\.recovery is required"):
        contract(errors=[{"reason": "x", "code": "NOT_FOUND", "when": "w"}])
    with pytest.raises(TypeError, match="not a bare @contract"):
        contract(declared)  # type: ignore[arg-type]


def test_the_wrapper_keeps_the_handlers_signature_and_kind() -> None:
    import inspect

    wrapped = contract(errors=ENTRIES)(service)
    assert inspect.signature(wrapped) == inspect.signature(service)
    assert inspect.iscoroutinefunction(wrapped) and not inspect.iscoroutinefunction(contract(errors=[])(declared))
    assert wrapped.__name__ == "service" and wrapped.__wrapped__ is service


@pytest.mark.skipif("fastmcp" not in FRAMEWORKS, reason="needs fastmcp")
def test_contract_above_fastmcps_decorator_is_a_type_error() -> None:
    from fastmcp import FastMCP

    app = FastMCP("billing")
    with pytest.raises(TypeError, match=r"put @contract \*below\* @app.tool"):

        @contract(errors=ENTRIES)
        @app.tool
        def get_invoice(invoice_id: str) -> str:
            return invoice_id


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_messages_use_the_name_the_framework_registered(framework: str) -> None:
    app = framework_app(framework)
    if framework == "mcpserver":
        from mcp_fusion.integrations import mcpserver

        mcpserver.install(app)  # MCPServer and fastmcp tell the name through the integration
    elif framework == "fastmcp":
        from mcp_fusion.integrations import fastmcp

        fastmcp.install(app)
    # mcp 1.x has no hook: its running Tool is found on the stack.
    app.tool(name="billing_crash")(contract(errors=ENTRIES)(crash))
    async with in_memory(framework, app) as caller:
        got = await caller.call("billing_crash", {"invoice_id": "inv_9"})
    assert "<message>tool 'billing_crash' failed unexpectedly;" in got["content"][0]["text"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_one_function_under_two_names_fails_under_each(framework: str, caplog: pytest.LogCaptureFixture) -> None:
    # The target renamed for a served name is made once and reused: each name must still get its own.
    app = framework_app(framework)
    if framework == "mcpserver":
        from mcp_fusion.integrations import mcpserver

        mcpserver.install(app)
    elif framework == "fastmcp":
        from mcp_fusion.integrations import fastmcp

        fastmcp.install(app)
    contracted = contract(errors=ENTRIES)(crash)
    app.tool(name="crash_a")(contracted)
    app.tool(name="crash_b")(contracted)
    caplog.set_level("ERROR", logger="mcp_fusion.boundary")
    async with in_memory(framework, app) as caller:
        for _ in range(2):
            for name in ("crash_a", "crash_b", "crash_a"):
                got = await caller.call(name, {"invoice_id": "inv_9"})
                assert f"<message>tool '{name}' failed unexpectedly;" in got["content"][0]["text"]
    logged = [record.fusion_name for record in caplog.records if hasattr(record, "fusion_name")]
    assert logged == ["crash_a", "crash_b", "crash_a"] * 2


@pytest.mark.skipif(MCP_MAJOR != 1, reason="needs mcp 1.x (FastMCP 1.x checks a returned result's structuredContent)")
async def test_mcp1_lets_only_our_own_error_results_skip_its_output_check() -> None:
    from mcp.server.fastmcp import FastMCP
    from mcp.types import CallToolResult, TextContent

    app = FastMCP("billing")

    def own_shape(invoice_id: str) -> str:  # -> str: FastMCP 1.x gives it an output schema
        return CallToolResult(content=[TextContent(type="text", text="mine")], isError=True)

    app.tool()(own_shape)
    app.tool()(contract(errors=ENTRIES)(declared))
    async with in_memory("mcp1", app) as caller:
        ours = await caller.call("declared", {"invoice_id": "inv_1"})
        theirs = await caller.call("own_shape", {"invoice_id": "inv_1"})
    assert ours["isError"] and ours["content"][0]["text"].startswith('<tool_error code="NOT_FOUND"')
    # A handler's own CallToolResult is checked by FastMCP exactly as without mcp_fusion.
    assert theirs["isError"] and theirs["content"][0]["text"] != "mine"


def test_the_registry_of_own_results_matches_by_identity_and_forgets_dead_ones() -> None:
    from mcp_fusion import frameworks

    class Result:  # anything weak-referenceable stands in for a CallToolResult
        pass

    kept = frameworks._mark_own_error_result(Result())
    assert frameworks._is_own_error_result(kept)
    assert not frameworks._is_own_error_result(Result())
    for _ in range(5000):
        frameworks._mark_own_error_result(Result())  # dies at once: its entry must not pile up
    assert len(frameworks._OWN_ERROR_RESULTS) <= 2048
    assert frameworks._is_own_error_result(kept)
