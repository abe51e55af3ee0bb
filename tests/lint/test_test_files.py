"""Tools a test registers again (``tests/``, ``test_*.py``, ``*_test.py``, ``conftest.py``) are a test's
doubles, not the project's (DESIGN §13.3, issue 31): not counted, no finding labelled by them, and a
handler they register again is still reported once, for the project's own tool."""

from __future__ import annotations

SERVER = """\
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    raise KeyError(invoice_id)
"""
DOUBLE = """\
from mcp.server.fastmcp import FastMCP

from app.server import get_invoice

double = FastMCP("test-double")
double.tool(name="get_invoice_double")(get_invoice)


@double.tool()
def only_in_tests(x: str) -> str:
    raise ValueError(x)
"""


def test_tools_registered_in_test_files_are_not_the_projects(lint_project) -> None:
    files = {
        "app/__init__.py": "",
        "app/server.py": SERVER,
        "tests/__init__.py": "",
        "tests/helpers.py": DOUBLE,
        "tests/test_server.py": DOUBLE,
        "conftest.py": DOUBLE,
        "app/server_test.py": DOUBLE,
    }
    linted = lint_project(files, select=["FL300"])
    assert linted.report.definitions == {"tool": 1}
    (finding,) = linted.diagnostics
    assert linted.relative(finding) == "app/server.py"
    assert finding.message.startswith("tool 'get_invoice': ")


def test_a_project_whose_own_folder_is_called_test_is_still_linted(lint_project) -> None:
    # Only the module's own dotted name counts: a project under /.../tests/... is not a test.
    linted = lint_project({"server.py": SERVER}, select=["FL300"])
    assert linted.report.definitions == {"tool": 1} and len(linted.diagnostics) == 1
