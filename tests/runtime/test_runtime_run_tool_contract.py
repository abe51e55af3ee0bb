"""``mcp_fusion.testing.run_tool_contract`` (issue 22): a tool through the production boundary, without a server.

Each kind of tool a test has in hand — an ``mcp_fusion`` tool, a ``@contract`` function of each installed
framework (``tests/framework_matrix.sh`` runs this file once per combination), a server with a tool's
name — gives the result its client would read: the same envelope text and mirror as the real call.
"""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest
from framework_clients import FIXTURE_OF, FRAMEWORKS, MCP_MAJOR, REPO_ROOT, fixture_app, in_memory

from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, contract, fail, tool
from mcp_fusion.testing import StandInContext, ToolFailure, run_tool_contract, run_tool_contract_sync

pytestmark = pytest.mark.anyio
#: FusionServer serves with mcp 2.x; the matrix's mcp 1.x environments run everything else here.
needs_fusion_server = pytest.mark.skipif(MCP_MAJOR != 2, reason="FusionServer needs mcp 2.x (the [server] extra)")

NOT_FOUND = ErrorContract(
    reason="item_missing",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No item has that ID",
    recovery="Call list_items to find a real item ID, then retry.",
)


@tool("get_item", errors=[NOT_FOUND])
async def get_item(item_id: str, ctx: Context) -> dict:
    if item_id != "item_1":
        raise ctx.fail("item_missing", f"No item {item_id}")
    return {"id": item_id, "pool": getattr(ctx.lifespan, "name", None)}


@tool("count_items", errors=[NOT_FOUND])
def count_items(prefix: str) -> int:  # a sync handler: FusionServer runs it in a worker thread
    raise fail("item_missing")


def fusion_server():
    from mcp_fusion import FusionServer

    return FusionServer("items", tools=[get_item, count_items])


def meta_free(wire: dict) -> dict:
    """A result without the SDK's per-server ``_meta`` stamps (the failure mirror stays)."""
    wire = dict(wire)
    meta = {key: value for key, value in (wire.pop("_meta", None) or {}).items() if key.startswith("fusion/")}
    return {**wire, "_meta": meta} if meta else wire


# -- mcp_fusion tools ----------------------------------------------------------------------------


async def test_an_mcp_fusion_tool_fails_as_its_server_sends_it() -> None:
    alone = await run_tool_contract(get_item, {"item_id": "item_9"})
    assert alone.is_error is True
    assert alone.text == (
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "  <message>No item item_9</message>\n"
        "  <recovery>Call list_items to find a real item ID, then retry.</recovery>\n"
        "  <details>\n"
        '    <detail key="reason">item_missing</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )
    assert alone.mirror == {
        "code": -32001,
        "code_name": "NOT_FOUND",
        "message": "No item item_9",
        "data": {"reason": "item_missing", "recovery": {"hint": "Call list_items to find a real item ID, then retry."}},
    }
    assert isinstance(alone.failure, ToolFailure)
    assert (alone.failure.code, alone.failure.reason) == ("NOT_FOUND", "item_missing")
    assert alone.failure.recovery == "Call list_items to find a real item ID, then retry."
    if MCP_MAJOR is not None:
        assert type(alone.result).__name__ == "CallToolResult"


@needs_fusion_server
async def test_an_mcp_fusion_tool_alone_reads_exactly_as_fusion_server_serves_it() -> None:
    alone = await run_tool_contract(get_item, {"item_id": "item_9"})
    served = await run_tool_contract(fusion_server(), "get_item", {"item_id": "item_9"})
    assert meta_free(alone.wire) == meta_free(served.wire)
    assert type(served.result).__name__ == "CallToolResult" and served.result.is_error is True
    assert alone.result == served.result.model_copy(update={"meta": None, "result_type": served.result.result_type})


async def test_a_success_has_no_failure_and_a_sync_handler_runs_too() -> None:
    success = await run_tool_contract(get_item, {"item_id": "item_1"})
    assert success.is_error is False and success.failure is None and success.warning is None
    assert success.structured_content == {"id": "item_1", "pool": None}
    sync = await run_tool_contract(count_items, {"prefix": "a"})
    assert sync.failure.reason == "item_missing" and sync.failure.message == "No item has that ID"


async def test_invalid_arguments_get_the_validation_error() -> None:
    result = await run_tool_contract(get_item, {"item_id": 5})
    assert result.is_error is True and result.failure.is_validation_error
    assert result.failure.fields == (("item_id", "Expected a string. You sent: 5."),)


async def test_context_is_the_request_context_of_an_mcp_fusion_tool() -> None:
    result = await run_tool_contract(
        get_item, {"item_id": "item_1"}, context=SimpleNamespace(lifespan_context=SimpleNamespace(name="test-pool"))
    )
    assert result.structured_content == {"id": "item_1", "pool": "test-pool"}


def test_the_sync_form_for_a_plain_test() -> None:
    result = run_tool_contract_sync(get_item, {"item_id": "item_9"})
    assert result.failure.reason == "item_missing"


@needs_fusion_server
def test_the_sync_form_with_a_server() -> None:
    served = run_tool_contract_sync(fusion_server(), "count_items", {"prefix": "x"})
    assert served.failure.reason == "item_missing"


async def test_the_sync_form_inside_an_event_loop_says_to_await() -> None:
    with pytest.raises(RuntimeError, match=r"await run_tool_contract\(\.\.\.\)"):
        run_tool_contract_sync(get_item, {"item_id": "item_9"})


@needs_fusion_server
async def test_wrong_calls_to_a_server_are_clear_errors() -> None:
    with pytest.raises(LookupError, match=r"has no tool 'get_itme' \(its tools: count_items, get_item\)"):
        await run_tool_contract(fusion_server(), "get_itme", {})
    with pytest.raises(TypeError, match="needs the tool's name"):
        await run_tool_contract(fusion_server(), {"item_id": "x"})
    with pytest.raises(TypeError, match="a server injects its own"):
        await run_tool_contract(fusion_server(), "get_item", {}, context=object())


async def test_wrong_calls_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="a tool's name goes with a server"):
        await run_tool_contract(get_item, "get_item", {})
    with pytest.raises(TypeError, match="cannot run"):
        await run_tool_contract(lambda: None, {})
    with pytest.raises(TypeError, match="a mapping of names to values"):
        await run_tool_contract(get_item, ["item_1"])


def test_it_needs_no_sdk_for_an_mcp_fusion_tool() -> None:
    code = textwrap.dedent(
        """
        import sys
        for blocked in ('mcp', 'mcp_types', 'anyio', 'fastmcp'):
            sys.modules[blocked] = None
        from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context
        from mcp_fusion.testing import run_tool_contract_sync

        @tool("ping", errors=[{"reason": "down", "code": JsonRpcErrorCode.TIMEOUT, "when": "The upstream is down",
                               "recovery": "Wait a minute, then call ping again."}])
        async def ping(ctx: Context) -> str:
            raise ctx.fail("down")

        result = run_tool_contract_sync(ping, {})
        print(result.failure.code, result.failure.reason, result.result)
        """
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "TIMEOUT down None"


# -- @contract on each framework -----------------------------------------------------------------

needs_framework = pytest.mark.skipif(not FRAMEWORKS, reason="no MCP framework installed (mcp, fastmcp)")

#: (tool, arguments) whose result a contracted function alone gives exactly as its framework serves it.
CALLS = [
    ("get_invoice", {"invoice_id": "inv_404"}),  # a declared failure
    ("get_invoice", {"invoice_id": "inv_1"}),  # a success
    ("refund_invoice", {"invoice_id": "inv_2", "amount_cents": 100}),  # a service-raised reason
    ("get_invoice_total", {"invoice_id": "inv_1"}),  # a warning on the success path
    ("export_invoices", {"fmt": "xml"}),  # a masked crash
    ("void_invoice", {"invoice_id": "inv_1"}),  # an undeclared fail(): masked
]


def fixture_module(framework: str):
    fixture_app(framework)  # puts fixtures/frameworks on sys.path
    return importlib.import_module(FIXTURE_OF[framework])


@needs_framework
@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(("name", "arguments"), CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
async def test_a_contracted_tool_alone_reads_as_its_framework_serves_it(
    framework: str, name: str, arguments: dict
) -> None:
    module = fixture_module(framework)
    alone = await run_tool_contract(getattr(module, name), arguments)
    served = await run_tool_contract(module.app, name, arguments)
    async with in_memory(framework, module.app) as caller:
        client = await caller.call(name, arguments)
    assert meta_free(served.wire) == meta_free(client)
    assert meta_free(alone.wire) == meta_free(served.wire)


@needs_framework
@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_the_framework_context_is_a_harmless_stand_in(framework: str) -> None:
    module = fixture_module(framework)
    result = await run_tool_contract(module.get_invoice, {"invoice_id": "inv_404"})
    assert result.failure.reason == "invoice_not_found"
    given = StandInContext()
    await run_tool_contract(module.get_invoice, {"invoice_id": "inv_1"}, context=given)
    assert given.progress == [(0, 1, None)]  # the tool reported progress on the context it was given


@needs_framework
@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_invalid_arguments_of_a_contracted_tool_alone(framework: str) -> None:
    module = fixture_module(framework)
    result = await run_tool_contract(module.get_invoice, {})
    assert result.failure.is_validation_error
    assert result.failure.fields == (("invoice_id", "Missing required field: expected a string. You sent nothing."),)


async def test_the_stand_in_records_logging_and_names_what_it_cannot_do() -> None:
    @contract(errors=[NOT_FOUND])
    async def lookup(item_id: str, ctx: Context) -> str:  # a framework would inject its Context here
        await ctx.info(f"looking up {item_id}")
        await ctx.report_progress(1, 2, "halfway")
        if item_id == "sample":
            await ctx.sample("hello")
        raise fail("item_missing")

    stand_in = StandInContext()
    result = await run_tool_contract(lookup, {"item_id": "item_3"}, context=stand_in)
    assert result.failure.reason == "item_missing"
    assert stand_in.logs == [("info", "looking up item_3")] and stand_in.progress == [(1, 2, "halfway")]
    crashed = await run_tool_contract(lookup, {"item_id": "sample"})
    assert crashed.failure.code == "INTERNAL_ERROR"  # the boundary masked the stand-in's AttributeError
    with pytest.raises(AttributeError, match="ctx.sample needs a live client: .*Pass context=<your fake>"):
        StandInContext().sample


async def test_a_sync_contracted_function_alone() -> None:
    @contract(errors=[NOT_FOUND])
    def lookup(item_id: str) -> str:
        raise fail("item_missing", f"No item {item_id}")

    result = await run_tool_contract(lookup, {"item_id": "item_4"})
    assert (result.failure.reason, result.failure.message) == ("item_missing", "No item item_4")
    assert asyncio.iscoroutinefunction(run_tool_contract)
