"""FL310 end to end: the CLI reads the middleware order of a real module (the re-exported import
path and the constructor's ``middleware=[...]`` list too), and a warm run after the order is
fixed reports what a cold run reports."""

from __future__ import annotations

from pathlib import Path

from cli_support import lint_json

SERVER = """\
from fastmcp import FastMCP
from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware
from mcp_fusion import contract, fail, ErrorContract
from mcp_fusion.integrations import fastmcp as fusion

mcp = FastMCP("billing")
{first}
{second}


@mcp.tool()
@contract(errors=[ErrorContract(reason="no_invoice", code="NOT_FOUND", when="No invoice has that ID",
                                recovery="Call list_invoices and retry with one of its IDs.")])
def get_invoice(invoice_id: str) -> dict:
    if invoice_id != "inv_1":
        raise fail("no_invoice")
    return {{"id": invoice_id}}


@mcp.tool()
def list_invoices() -> list:
    return ["inv_1"]
"""
INSTALL = "fusion.install(mcp)"
ERRORS = "mcp.add_middleware(ErrorHandlingMiddleware())"


def fl310(found: list[dict]) -> list[tuple[int, str]]:
    return [(d["location"]["row"], d["message"]) for d in found if d["code"] == "FL310"]


def test_the_order_is_read_from_the_module_and_a_warm_run_sees_it_change(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    server = tmp_path / "server.py"
    server.write_text(SERVER.format(first=INSTALL, second=ERRORS))
    ((row, message),) = fl310(lint_json(tmp_path))
    # One finding at the middleware line, naming every tool of that server.
    assert row == 8 and message.startswith("tool 'get_invoice', tool 'list_invoices': "), message
    assert "(line 7)" in message and "transform_errors=False" in message

    # Fixed: the error middleware first. Warm (the cache of the run above) as cold.
    server.write_text(SERVER.format(first=ERRORS, second=INSTALL))
    warm, cold = lint_json(tmp_path), lint_json(tmp_path, "--no-cache")
    assert warm == cold and fl310(warm) == []

    # Broken again, and through the constructor's list: warm as cold, one finding at the list's entry.
    server.write_text(
        SERVER.format(first="", second="").replace(
            'mcp = FastMCP("billing")',
            "from mcp_fusion.integrations.fastmcp import FusionMiddleware\n"
            'mcp = FastMCP("billing", middleware=[FusionMiddleware(), ErrorHandlingMiddleware(include_traceback=True)])',
        )
    )
    warm, cold = lint_json(tmp_path), lint_json(tmp_path, "--no-cache")
    assert warm == cold
    ((row, message),) = fl310(warm)
    assert row == 7 and "(earlier in the list)" in message


def test_transform_errors_off_and_no_integration_are_quiet(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    server = tmp_path / "server.py"
    server.write_text(SERVER.format(first=INSTALL, second=ERRORS.replace("()", "(transform_errors=False)")))
    assert fl310(lint_json(tmp_path, "--no-cache")) == []
    server.write_text(SERVER.format(first="", second=ERRORS))
    assert fl310(lint_json(tmp_path, "--no-cache")) == []


def test_a_plain_function_named_add_middleware_is_no_server_call(tmp_path: Path) -> None:
    # ``add_middleware(m)`` without a receiver once crashed the file's analysis (FL999).
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "server.py").write_text(
        SERVER.format(
            first="def add_middleware(m):\n    return m\n", second="add_middleware(ErrorHandlingMiddleware())"
        )
    )
    assert [d["code"] for d in lint_json(tmp_path) if d["code"] == "FL999"] == []
