"""Contract coverage of framework tools against the contracts the linter reads statically (issues 22 and 19).

The runtime records framework tools on every framework (``test_runtime_contract_coverage_servers.py``);
here the universe they are counted against is the linter's reading of ``@app.tool()`` over
``@contract(errors=[...])`` (mcp 1.x ``FastMCP``, mcp 2.x ``MCPServer``, fastmcp), so a framework
tool no test imports counts at 0% and the framework servers' suite is measured against the contracts
their files declare. ``tests/framework_matrix.sh`` runs this file once per framework combination.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from framework_clients import FRAMEWORKS, REPO_ROOT, fixture_app
from test_runtime_contract_coverage_examples import readme_output, report_lines
from test_runtime_frameworks import passes_protocol_errors

pytest_plugins = ["pytester"]

needs_framework = pytest.mark.skipif(not FRAMEWORKS, reason="no MCP framework installed (mcp, fastmcp)")

#: What the framework fixtures declare: the same contracts on each framework.
BILLING_CONTRACTS = {
    ("tool", "get_invoice"): {"invoice_not_found": "NOT_FOUND"},
    ("tool", "refund_invoice"): {"invoice_locked": "CONFLICT"},
    ("tool", "export_invoices"): {"ExportTooLarge": "VALIDATION_ERROR"},
    ("tool", "get_invoice_total"): {"invoice_not_found": "NOT_FOUND"},
    ("tool", "void_invoice"): {"invoice_not_found": "NOT_FOUND"},
    ("tool", "slow_report"): {"invoice_not_found": "NOT_FOUND"},
    ("resource", "billing://invoices/{invoice_id}"): {"invoice_not_found": "NOT_FOUND"},
}


def test_the_universe_holds_the_framework_fixtures_contracts() -> None:
    from fusion_lint.lock.lockfile import project_contracts

    document = project_contracts([str(REPO_ROOT / "fixtures" / "frameworks")]).document
    found = {
        (kind, name): {reason: entry["code"] for reason, entry in body["errors"].items()}
        for kind, section in (("tool", "tools"), ("resource", "resources"))
        for name, body in document[section].items()
    }
    assert {key: value for key, value in found.items() if value} == BILLING_CONTRACTS


#: One small server per framework (the import and the server class).
SERVERS = {
    "mcpserver": ("from mcp.server.mcpserver import MCPServer", "MCPServer"),
    "mcp1": ("from mcp.server.fastmcp import FastMCP", "FastMCP"),
    "fastmcp": ("from fastmcp import FastMCP", "FastMCP"),
}

SERVER = """
{imports}
from mcp_fusion import ErrorContract, JsonRpcErrorCode, conflict, contract, fail

RETRY = "Call list_items to find a real item ID, then retry."
app = {server}("items")


def lock_service(item_id):
    \"\"\"The service layer raises the declared reason itself, with another code than declared.\"\"\"
    raise conflict(f"Item {{item_id}} is locked", {{"reason": "item_locked"}})


@app.tool()
@contract(errors=[
    ErrorContract(reason="item_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item", recovery=RETRY),
    ErrorContract(reason="item_locked", code=JsonRpcErrorCode.FORBIDDEN, when="Locked", recovery=RETRY,
                  thrown_by="service"),
])
def get_item(item_id: str) -> str:
    if item_id == "locked":
        lock_service(item_id)
    raise fail("item_missing")


@app.tool()
@contract(errors=[ErrorContract(reason="item_pinned", code=JsonRpcErrorCode.CONFLICT, when="Pinned", recovery=RETRY)])
def delete_item(item_id: str) -> str:
    raise fail("item_pinned")
"""

TESTS = """
from mcp_fusion.testing import run_tool_contract_sync
import server


def test_missing():
    assert run_tool_contract_sync(server.app, "get_item", {"item_id": "x"}).failure.reason == "item_missing"


def test_locked():
    assert run_tool_contract_sync(server.app, "get_item", {"item_id": "locked"}).failure.code == "CONFLICT"


def test_pinned():
    assert run_tool_contract_sync(server.app, "delete_item", {"item_id": "x"}).failure.reason == "item_pinned"
"""


@needs_framework
@pytest.mark.slow  # three pytest runs inside the test
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_framework_tools_untested_flagged_and_covered(pytester: pytest.Pytester, framework: str) -> None:
    # The framework loaded (a server built) in this process first: pytester's in-process runs unload what
    # they import, and the SDK's cryptography bindings cannot be imported a second time.
    fixture_app(framework)
    imports, server = SERVERS[framework]
    pytester.makepyfile(
        server=SERVER.format(imports=imports, server=server),
        test_items=TESTS,
        test_nothing="def test_nothing():\n    pass\n",
    )
    # No test calls a tool, none even imports the server: every declared reason counts, at 0%.
    untested = pytester.runpytest("--contract-coverage", "--contract-coverage-fail-under=100", "test_nothing.py")
    assert untested.ret == pytest.ExitCode.TESTS_FAILED
    untested.stdout.fnmatch_lines(
        [
            "tool delete_item * 1 * 0 * 0%  item_pinned",
            "tool get_item * 2 * 0 * 0%  item_missing, item_locked",
            "TOTAL * 3 * 0 * 0%",
            "FAIL Required contract coverage of 100% not reached. Total contract coverage: 0.00%",
        ]
    )
    # The service raises item_locked as CONFLICT where the contract says FORBIDDEN: flagged, not covered.
    flagged = pytester.runpytest("--contract-coverage", "--contract-coverage-fail-under=100", "-k", "not pinned")
    assert flagged.ret == pytest.ExitCode.TESTS_FAILED
    flagged.stdout.fnmatch_lines(
        [
            "tool delete_item * 1 * 0 * 0%  item_pinned",
            "tool get_item * 2 * 1 * 50%  item_locked FLAGGED (raised as CONFLICT, declared FORBIDDEN)",
            "TOTAL * 3 * 1 * 33%",
        ]
    )
    # The service fixed to raise it as declared: every reason happens, 100% reached.
    pytester.makepyfile(
        server=SERVER.format(imports=imports, server=server).replace("conflict", "forbidden"),
        test_items=TESTS.replace('"CONFLICT"', '"FORBIDDEN"'),
    )
    covered = pytester.runpytest("--contract-coverage", "--contract-coverage-fail-under=100")
    assert covered.ret == pytest.ExitCode.OK
    covered.stdout.fnmatch_lines(["TOTAL * 3 * 3 * 100%", "Required contract coverage of 100% reached. *"])


@needs_framework
@pytest.mark.slow  # a pytest subprocess
def test_the_framework_servers_suite_against_their_static_contracts(tmp_path: Path) -> None:
    report = tmp_path / "billing.json"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "tests/contracts/test_contracts_billing.py",
            "--contract-coverage",
            "--contract-coverage-paths=fixtures/frameworks",
            f"--contract-coverage-report={report}",
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    data = json.loads(report.read_text())
    statuses = {(d["kind"], d["name"], r["reason"]): r["status"] for d in data["definitions"] for r in d["reasons"]}
    not_covered = {
        ("tool", "export_invoices", "ExportTooLarge"): "missing",  # nothing raises it
        ("tool", "slow_report", "invoice_not_found"): "missing",  # the shared contract; it never fails
    }
    # mcp 1.x FastMCP and fastmcp 2.x keep only a resource failure's message: where no framework of this
    # environment passes the envelope on, the resource's reason happened but its recovery never reached the wire.
    resource_on_wire = any(passes_protocol_errors(framework) for framework in FRAMEWORKS)
    if not resource_on_wire:
        not_covered[("resource", "billing://invoices/{invoice_id}", "invoice_not_found")] = "flagged"
    assert {key: status for key, status in statuses.items() if status != "exercised"} == not_covered
    assert data["totals"]["declared"] == 7 and data["totals"]["exercised"] == 5 - (not resource_on_wire)
    # Every framework names what it served as the linter does (mcp 1.x FastMCP's resource by its URI too).
    assert data["outside_universe"] == []
    if FRAMEWORKS == ["mcpserver"]:  # docs/runtime.md shows this run's output under mcp 2.x MCPServer: the real one
        command = (
            "python -m pytest tests/contracts/test_contracts_billing.py --contract-coverage "
            "--contract-coverage-paths fixtures/frameworks"
        )
        assert readme_output(command, "docs/runtime.md") == report_lines(completed.stdout)
