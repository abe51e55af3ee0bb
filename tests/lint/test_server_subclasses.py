"""Servers by what they are (DESIGN §13.3, issue 31: never silent): an instance of a project class
deriving from a framework's server class is a server wherever the class is defined (another
module, through other project classes and re-exports), and an instance of any other class is not,
whatever its methods are called (pydantic-ai's ``Agent.tool``/``tool_plain``)."""

from __future__ import annotations

from pathlib import Path

from cli_support import lint_json
from harness import lint_sources

BASE = "from mcp.server.fastmcp import FastMCP\n\n\nclass BillingServer(FastMCP):\n    pass\n"
MIDDLE = "from pkg.base import BillingServer\n\n\nclass AuditedServer(BillingServer):\n    pass\n"
SERVER = """\
from pkg import AuditedServer

mcp = AuditedServer("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> str:
    raise KeyError(invoice_id)
"""


def files(base: str = BASE) -> dict[str, str]:
    return {
        "pkg/__init__.py": "from pkg.middle import AuditedServer\n",
        "pkg/base.py": base,
        "pkg/middle.py": MIDDLE,
        "pkg/server.py": SERVER,
    }


def test_a_subclass_defined_in_another_module_is_a_server(lint_project) -> None:
    report = lint_project(files()).report  # on disk: module names come from the packages
    assert report.definitions == {"tool": 1}
    (message,) = [d.message for d in report.diagnostics if d.code == "FL300"]
    assert message.startswith("tool 'get_invoice': ") and "(mcp 1.x FastMCP)" in message


def test_an_instance_of_a_class_that_is_no_server_registers_nothing(lint_project) -> None:
    source = """\
from mcp.server.fastmcp import FastMCP
from pydantic_ai import Agent

mcp = FastMCP("x")
agent = Agent("openai:gpt-4o")


@agent.tool
def roll(ctx) -> str:
    raise ValueError  # FL300 wherever it were a tool: no message


@agent.tool_plain
def roll_plain() -> str:
    raise ValueError
"""
    report = lint_sources({"app.py": source})
    assert report.definitions == {} and report.diagnostics == []
    # A project class that is no server: the same.
    plain = files(base="class BillingServer:\n    def tool(self):\n        return lambda f: f\n")
    report = lint_project(plain).report
    assert report.definitions == {} and report.diagnostics == []


def test_a_base_class_edited_in_another_file_is_seen_warm_as_cold(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for relative, text in files().items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    assert [d["code"] for d in lint_json(tmp_path)] == ["FL300"]
    # The base stops being a server: no tool is left, warm as cold.
    (tmp_path / "pkg" / "base.py").write_text("class BillingServer:\n    def tool(self):\n        return lambda f: f\n")
    warm, cold = lint_json(tmp_path), lint_json(tmp_path, "--no-cache")
    assert warm == cold == []
    # And back.
    (tmp_path / "pkg" / "base.py").write_text(BASE)
    warm, cold = lint_json(tmp_path), lint_json(tmp_path, "--no-cache")
    assert warm == cold and [d["code"] for d in warm] == ["FL300"]


def test_a_project_class_wrapping_a_server_in_a_framework_module_is_kept(lint_project) -> None:
    """A project's own registry forwarding ``.tool`` to a server it holds, used in a module that
    imports a framework: its tools are kept (as before), never dropped silently."""
    registry = (
        "from mcp.server.fastmcp import FastMCP\n\n\nclass Registry:\n    def __init__(self):\n"
        "        self.mcp = FastMCP('billing')\n\n    def tool(self):\n        return self.mcp.tool()\n"
    )
    server = (
        "from mcp.server.fastmcp import Context\nfrom pkg.registry import Registry\n\nregistry = Registry()\n\n\n"
        "@registry.tool()\ndef get_invoice(invoice_id: str, ctx: Context) -> str:\n    raise KeyError(invoice_id)\n"
    )
    report = lint_project({"pkg/__init__.py": "", "pkg/registry.py": registry, "pkg/server.py": server}).report
    assert report.definitions == {"tool": 1}
