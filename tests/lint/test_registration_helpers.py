"""Registration helpers (DESIGN §12.2): a project function handed the server, whose returned decorator
registers what it is given — ``logged_tool(mcp, "get_invoice")(self.get_invoice)`` — defines one
tool per call, named as the framework names it, with the handler the call passes."""

from __future__ import annotations

import textwrap

from harness import ROOT, lint_sources

from fusion_lint.output.common import summary

# A look-alike of a real server's audit helper: no framework import, the server under its usual name.
HELPER = """
import functools
import logging

log = logging.getLogger(__name__)


def logged_tool(mcp, name=None, **options):
    def decorator(func):
        @functools.wraps(func)
        async def wrapper(*args, **kwargs):
            log.info("tool %s called", name)
            return await func(*args, **kwargs)

        mcp.tool(name=name, **options)(wrapper)
        return wrapper

    return decorator
"""

HANDLERS = """
from typing import Any

from mcp.server.fastmcp import Context

from billing.audit import logged_tool


class InvoiceTools:
    def __init__(self, mcp: Any) -> None:
        logged_tool(mcp, "get_invoice", title="Get invoice")(self.get_invoice)
        logged_tool(mcp, name="void_invoice")(self.void)
        logged_tool(mcp)(self.refund_invoice)

    async def get_invoice(self, invoice_id: str, ctx: Context) -> str:
        raise KeyError(invoice_id)

    async def void(self, invoice_id: str) -> str:
        raise KeyError(invoice_id)

    async def refund_invoice(self, invoice_id: str) -> str:
        raise RuntimeError()
"""


def lint(files: dict[str, str], select: tuple[str, ...] = ("FL300",)):
    sources = {"billing/__init__.py": "", **{path: textwrap.dedent(text) for path, text in files.items()}}
    return lint_sources(sources, select=list(select))


def fl300(report) -> list[tuple[str, int, str]]:
    return [(d.path[len(ROOT) + 1 :], d.span.line, d.message) for d in report.diagnostics if d.code == "FL300"]


def test_each_call_of_a_helper_is_a_tool_named_by_its_name_argument() -> None:
    report = lint({"billing/audit.py": HELPER, "billing/tools.py": HANDLERS})
    found = fl300(report)
    assert [(path, line) for path, line, _ in found] == [
        ("billing/tools.py", 16),
        ("billing/tools.py", 19),
        ("billing/tools.py", 22),
    ]
    # the name passed positionally, by keyword, and none at all: ``functools.wraps`` keeps the
    # handler's ``__name__``, which the framework then uses
    assert [message.split(":")[0] for _, _, message in found] == [
        "tool 'get_invoice'",
        "tool 'void_invoice'",
        "tool 'refund_invoice'",
    ]
    # The framework is the one the calling module imports (the helper's module imports none).
    assert "`Error executing tool get_invoice: <its text>` (mcp 1.x FastMCP)" in found[0][2]
    assert summary(report).endswith("(3 tools; 3 files checked).")


def test_the_helper_itself_defines_nothing() -> None:
    """Its registration is a template: what it registers, and the name, are each call's."""
    report = lint({"billing/audit.py": HELPER, "billing/tools.py": HANDLERS}, select=("ALL",))
    assert not [d for d in report.diagnostics if d.path.endswith("audit.py")]
    assert not any("<dynamic>" in d.message for d in report.diagnostics)
    alone = lint({"billing/audit.py": HELPER})
    assert summary(alone).startswith("No MCP tools, resources or prompts found")


def test_without_functools_wraps_the_framework_names_the_wrapper() -> None:
    bare = HELPER.replace("        @functools.wraps(func)\n", "")
    report = lint({"billing/audit.py": bare, "billing/tools.py": HANDLERS})
    assert [message.split(":")[0] for _, _, message in fl300(report)] == [
        "tool 'get_invoice'",
        "tool 'void_invoice'",
        "tool 'wrapper'",
    ]


def test_a_helper_used_as_a_decorator_on_a_module_server() -> None:
    app = """
    from fastmcp import FastMCP

    from billing.audit import logged_tool

    app = FastMCP("billing")


    @logged_tool(app, "find_invoice")
    async def find(query: str) -> str:
        raise LookupError
    """
    found = fl300(lint({"billing/audit.py": HELPER, "billing/app.py": app}))
    assert [(path, line) for path, line, _ in found] == [("billing/app.py", 11)]
    assert found[0][2].startswith(
        "tool 'find_invoice': raise LookupError reaches the model as `Error calling tool 'find_invoice'"
    )  # (fastmcp: the server the call hands over)


def test_a_wrapper_that_catches_everything_absorbs_the_handlers_raises() -> None:
    catching = HELPER.replace(
        "            return await func(*args, **kwargs)\n",
        "            try:\n                return await func(*args, **kwargs)\n"
        "            except Exception as exc:\n                return {'ok': False}\n",
    )
    report = lint({"billing/audit.py": catching, "billing/tools.py": HANDLERS})
    assert fl300(report) == []
    assert summary(report).endswith("(3 tools; 3 files checked).")  # still three tools


def test_no_tool_where_the_helper_gets_no_server_or_registers_nothing() -> None:
    no_registration = """
    def logged_tool(mcp, name=None):
        def decorator(func):
            return func

        return decorator
    """
    assert "No MCP tools" in summary(lint({"billing/audit.py": no_registration, "billing/tools.py": HANDLERS}))
    # a call handing over no server, nor a parameter one could arrive through
    plain = """
    from mcp.server.fastmcp import Context

    from billing.audit import logged_tool

    SETTINGS = {"name": "x"}


    def setup():
        logged_tool(SETTINGS, "x")(handle)


    async def handle(ctx: Context) -> str:
        raise ValueError("x")
    """
    assert "No MCP tools" in summary(lint({"billing/audit.py": HELPER, "billing/setup.py": plain}))


def test_a_helper_taking_the_server_under_another_name_in_a_framework_module() -> None:
    helper = """
    from typing import Any

    from mcp.server.fastmcp import FastMCP


    def register_as(server: Any, tool_name: str):
        def decorator(fn):
            server.tool(name=tool_name)(fn)
            return fn

        return decorator


    def add_ping(server: Any, fn):  # registers its parameter directly: not followed (no decorator returned)
        server.tool()(fn)
    """
    app = """
    from mcp.server.fastmcp import FastMCP

    from billing.helpers import register_as

    mcp = FastMCP("billing")
    register_as(mcp, tool_name="close_invoice")(lambda: None)


    @register_as(mcp, "open_invoice")
    def open_invoice(invoice_id: str) -> str:
        raise KeyError(invoice_id)
    """
    report = lint({"billing/helpers.py": helper, "billing/app.py": app}, select=("FL300", "FL190"))
    messages = sorted((d.code, d.message.split(":")[0]) for d in report.diagnostics)
    assert messages == [("FL190", "tool 'close_invoice'"), ("FL300", "tool 'open_invoice'")]
