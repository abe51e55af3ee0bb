"""The rules on framework servers (DESIGN §12.2): what each framework makes of a failure, the
forms real servers use (FL306's traps, FL307's one assignment, FL305's two spellings), FL208's
draft, loops over literal lists, mount prefixes, prompts, and the honest summary."""

from __future__ import annotations

import textwrap

import pytest
from harness import ROOT, lint_sources

from fusion_lint.fix.codemod import rewrite
from fusion_lint.output.common import summary

FASTMCP1 = "from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('billing')\n"


def findings(source: str, *codes: str, extra: tuple[str, ...] = ()) -> list[tuple[str, int, str]]:
    report = lint_sources({"app.py": textwrap.dedent(source)}, extend_select=extra)
    return [(d.code, d.span.line, d.message) for d in report.diagnostics if not codes or d.code in codes]


# ----- FL306: failures returned as successes, and what is not one ---------------------------------


@pytest.mark.parametrize(
    "returned, fires",
    [
        ('"Error: no such invoice"', True),
        ('f"Failed to load {invoice_id}"', True),
        ('"could not reach the billing API"', True),
        ('{"error": "Invoice not found"}', True),
        ('json.dumps({"error": "Invoice not found"})', True),
        ('[TextContent(type="text", text="Error: not found")]', True),
        ('{"status": "info", "error": "No error details for this job"}', False),
        ('{"valid": False, "errors": []}', False),
        ('"FAILED"', False),
        ("\"Exception('x') is how you build one\"", False),  # call-like: code, not a message
        ('"Errors found: none"', False),
        ('CallToolResult(content=[TextContent(type="text", text="Error: x")], isError=True)', False),
        ('"exception_count: 3"', False),
    ],
)
def test_fl306_what_reads_as_a_failure(returned: str, fires: bool) -> None:
    source = FASTMCP1 + textwrap.dedent(f"""
        import json
        from mcp.types import TextContent, CallToolResult

        @mcp.tool()
        def get_invoice(invoice_id: str):
            return {returned}
    """)
    assert bool(findings(source, "FL306")) is fires, returned


def test_fl306_a_value_built_from_the_caught_exception() -> None:
    source = FASTMCP1 + textwrap.dedent("""
        @mcp.tool()
        def get_invoice(invoice_id: str) -> dict:
            try:
                return load(invoice_id)
            except KeyError as e:
                return {"missing": e.args[0]}
    """)
    [(code, _, message)] = findings(source, "FL306")
    assert "caught exception 'e'" in message


# ----- FL307: the exception's text, through one local assignment ---------------------------------


def test_fl307_follows_one_local_assignment() -> None:
    source = FASTMCP1 + textwrap.dedent("""
        @mcp.tool()
        def get_invoice(invoice_id: str) -> str:
            try:
                return load(invoice_id)
            except Exception as e:
                msg = str(e)
                return msg
    """)
    assert [code for code, _, _ in findings(source, "FL307")] == ["FL307"]


def test_fl307_not_for_text_that_does_not_come_from_the_exception() -> None:
    source = FASTMCP1 + textwrap.dedent("""
        @mcp.tool()
        def get_invoice(invoice_id: str) -> str:
            try:
                return load(invoice_id)
            except Exception as e:
                msg = "the invoice could not be loaded"
                log(e)
                return msg
    """)
    assert findings(source, "FL307") == []


# ----- FL305: both spellings, each framework's message ------------------------------------------


@pytest.mark.parametrize(
    "imports, raised, says",
    [
        (
            "from mcp.server.fastmcp import FastMCP\nfrom mcp.shared.exceptions import McpError\nfrom mcp.types import ErrorData",
            "McpError(ErrorData(code=-32602, message='bad id'))",
            "FastMCP",
        ),
        (
            "from mcp.server.mcpserver import MCPServer as FastMCP\nfrom mcp.shared.exceptions import MCPError",
            "MCPError(-32602, 'bad id')",
            "MCPServer",
        ),
    ],
)
def test_fl305_both_spellings_say_what_their_framework_sends(imports: str, raised: str, says: str) -> None:
    source = imports + textwrap.dedent(f"""
        mcp = FastMCP("billing")

        @mcp.tool()
        def get_invoice(invoice_id: str) -> dict:
            raise {raised}
    """)
    found = findings(source, "FL305")
    assert len(found) == 1, found
    assert says in found[0][2]


# ----- FL208: opt-in, and its draft ---------------------------------------------------------------


DRAFTABLE = FASTMCP1 + textwrap.dedent("""
    import json


    class InvoiceLocked(Exception):
        pass


    def load(invoice_id):
        if invoice_id == "x":
            raise InvoiceLocked(invoice_id)
        return {}


    @mcp.tool()
    def get_invoice(invoice_id: str) -> str:
        if not invoice_id:
            raise ValueError("Invoice id is required")
        if invoice_id == "?":
            return "Error: invoice not found"
        return json.dumps(load(invoice_id))


    @mcp.tool()
    def add(a: int, b: int) -> int:
        if not isinstance(a, int):
            raise TypeError("a must be an int")
        return a + b
""")


def test_fl208_is_opt_in() -> None:
    assert findings(DRAFTABLE, "FL208") == []
    found = findings(DRAFTABLE, "FL208", extra=("FL208",))
    assert [(code, "get_invoice" in message) for code, _, message in found] == [("FL208", True)]
    assert "3 failure modes" in found[0][2]  # a guard (TypeError) is not a failure mode: add is clean


def test_fl208_draft_is_a_contract_the_linter_then_reads() -> None:
    report = lint_sources({"app.py": DRAFTABLE}, extend_select=("FL208",))
    [finding] = [d for d in report.diagnostics if d.code == "FL208"]
    assert finding.fix is not None and finding.fix.applicability == "unsafe"
    fixed = rewrite(DRAFTABLE, finding.fix.edits)
    assert "from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail\n" in fixed
    assert (
        '@mcp.tool()\n@contract(errors=[\n    ErrorContract(reason="missing_invoice_id", code=JsonRpcErrorCode.INVALID_PARAMS'
        in fixed
    )
    assert 'raise fail("missing_invoice_id", "Invoice id is required")' in fixed
    assert 'reason="invoice_not_found", code=JsonRpcErrorCode.NOT_FOUND, when="Invoice not found"' in fixed
    assert 'raise fail("invoice_not_found", "Error: invoice not found")' in fixed
    # The callee's exception cannot be raised with fail() by the draft: not declared (it would read
    # as declared while still masked), and named in the fix's message.
    assert "invoice_locked" not in fixed and "InvoiceLocked raised in load" in finding.fix.message
    compile(fixed, "app.py", "exec")
    after = lint_sources({"app.py": fixed}, extend_select=("FL208",))
    codes = [d.code for d in after.diagnostics]
    assert "FL208" not in codes  # the tool has a contract now
    assert codes.count("FL111") == 2  # every empty recovery is pointed at, for the author to write


def test_fl208_not_with_fail_nor_when_the_handler_catches_everything() -> None:
    source = FASTMCP1 + textwrap.dedent("""
        from mcp_fusion import fail

        @mcp.tool()
        def void(invoice_id: str) -> dict:
            raise fail("already_void")

        @mcp.tool()
        def safe(invoice_id: str) -> dict:
            try:
                raise ValueError("bad")
            except ValueError:
                return {"ok": False}
    """)
    codes = [code for code, _, _ in findings(source, "FL205", "FL208", extra=("FL208",))]
    assert codes == ["FL205"]


@pytest.mark.parametrize(
    "source",
    [
        # mcp 1.x: ``@server.call_tool()``
        "from mcp.server.lowlevel import Server\nserver = Server('billing')\n\n@server.call_tool()\n"
        "async def call_tool(name: str, arguments: dict) -> list:\n    raise ValueError(f'Unknown tool: {name}')\n",
        # mcp 2.x: ``Server(name, on_call_tool=...)``
        "from mcp.server.lowlevel import Server\n\nasync def handle(ctx, params):\n"
        "    raise ValueError(f'Unknown tool: {params.name}')\n\nserver = Server('billing', on_call_tool=handle)\n",
    ],
)
def test_fl208_on_a_dispatcher_gives_no_contract_draft_and_says_what_it_can_do(source: str) -> None:
    """A dispatcher serves every tool of its server: no @contract describes it, so neither the
    message nor a draft fix puts one there (docs/precision.md, FL208's sample)."""
    report = lint_sources({"app.py": source}, extend_select=("FL208",))
    [finding] = [d for d in report.diagnostics if d.code == "FL208"]
    assert finding.message.startswith("server 'billing' call_tool: can fail (1 failure mode found: unknown_tool)")
    assert "a low-level dispatcher takes no @contract" in finding.message
    assert "below the tool decorator" not in finding.message
    assert "FusionServer" in finding.message
    assert finding.fix is None


# ----- registrations in a loop, mount prefixes, prompts ---------------------------------------


def test_a_loop_over_a_literal_list_registers_each_element() -> None:
    source = FASTMCP1 + textwrap.dedent("""
        from mcp.server.fastmcp.tools import Tool

        def alpha(a: str) -> str:
            raise ValueError

        def beta(a: str) -> str:
            raise KeyError(a)

        for fn in [alpha, beta]:
            mcp.add_tool(fn)

        for made in (Tool.from_function(alpha, name="alpha_two"),):
            mcp.add_tool(made)

        def register(server: FastMCP) -> None:
            for handler in (beta,):
                server.tool(name="beta_two")(handler)

        for dynamic in discover():
            mcp.add_tool(dynamic)
    """)
    found = findings(source, "FL300", "FL190")
    tools = {code: message for code, _, message in found}
    fl300 = [message for code, _, message in found if code == "FL300"]
    assert any("alpha" in m and "alpha_two" in m for m in fl300) and any("beta_two" in m for m in fl300), fl300
    assert [code for code, _, _ in found].count("FL190") == 1  # only the dynamic loop
    assert "'dynamic'" in tools["FL190"]


def test_a_mount_prefix_names_tools_a_recovery_may_name() -> None:
    source = textwrap.dedent("""
        from fastmcp import FastMCP
        from mcp_fusion import contract, ErrorContract, JsonRpcErrorCode

        sub = FastMCP("sub")
        main = FastMCP("main")
        main.mount(sub, prefix="billing")

        @sub.tool
        @contract(errors=[ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                                        recovery="Call billing_list_invoices to find a valid invoice id.")])
        def get_invoice(invoice_id: str) -> dict:
            return {}

        @sub.tool
        def list_invoices() -> list:
            return []
    """)
    assert findings(source, "FL401") == []
    assert findings(source.replace("billing_list_invoices", "billing_list_bills"), "FL401") != []


def test_prompts_get_the_handler_rules() -> None:
    source = FASTMCP1 + textwrap.dedent("""
        @mcp.prompt()
        def summarise(topic: str) -> str:
            if topic not in TOPICS:
                raise KeyError(topic)
            try:
                return render(topic)
            except Exception as e:
                return f"Error: {e}"
    """)
    codes = {code for code, _, _ in findings(source)}
    assert {"FL300", "FL306", "FL307"} <= codes, codes


# ----- the honest summary ---------------------------------------------------------------------


def test_the_summary_counts_definitions_and_says_when_nothing_was_checked() -> None:
    report = lint_sources({"app.py": DRAFTABLE}, select=["FL3"])
    assert summary(report).endswith("(2 tools; 1 file checked).")
    none = lint_sources({"plain.py": "from mcp.server.fastmcp import FastMCP\nx = 1\n"})
    assert summary(none).startswith("No MCP tools, resources or prompts found in 1 file: nothing was checked")
    assert "mcp 1.x FastMCP" in summary(none)
    assert ROOT  # the harness lints in memory


# ----- the pre-scan: a framework import admits a file only with a registration in it -------------


@pytest.mark.parametrize(
    "source, admitted",
    [
        ("from fastmcp.exceptions import ToolError\ndef check(x):\n    raise ToolError(x)\n", False),
        ("from mcp.server.fastmcp import FastMCP\nfrom .server import build\nbuild().run()\n", False),
        # others may register on it: parsed when one does (the second look, or on demand)
        ("from mcp.server.fastmcp import FastMCP\nshared = FastMCP('hub')\n", False),
        ("from mcp.types import TextContent\ndef text(t):\n    return TextContent(type='text', text=t)\n", False),
        ("from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('x')\n@mcp.tool()\ndef f(): ...\n", True),
        ("from fastmcp.tools import tool\n@tool\ndef greet(name: str) -> str: ...\n", True),
        ("from fastmcp import FastMCP\napp = FastMCP('a')\napp.mount(sub, prefix='billing')\n", True),
        (
            "from mcp.server.lowlevel import Server\nserver = Server('s')\n@server.call_tool()\nasync def c(n, a): ...\n",
            True,
        ),
        ("from mcp.server.lowlevel import Server\nserver = Server('s', on_call_tool=handle)\n", True),
        ("def register(mcp):\n    mcp.tool()(helper)\n", True),
        ("from mcp_fusion import ErrorContract\n", True),
        # what only looks like a registration: a mock's attribute, an OAuth field, a prompt object,
        # fastmcp middleware's hook, a docstring or comment naming the decorator
        ("from fastmcp import FastMCP\ndef test_it(mock):\n    mock.tool = object()\n", False),
        (
            "from mcp.server.auth.provider import AuthorizationParams\ndef f(params):\n    return params.resource\n",
            False,
        ),
        ("from mcp.server.fastmcp.prompts.base import Prompt\nP = Prompt.from_function(f, name='p')\n", False),
        (
            "from fastmcp.server.middleware import Middleware\nclass M(Middleware):\n"
            "    async def on_call_tool(self, context, call_next):\n        return await call_next(context)\n",
            False,
        ),
        ('def test_tools():\n    """Tools are plain functions decorated with @mcp.tool()."""\n', False),
        ("def test_tools():\n    # each is registered with mcp.tool(name=...)\n    pass\n", False),
        # the forms a registration takes
        ("from mcp.server.fastmcp.tools import Tool\nTOOLS = [Tool.from_function(f)]\n", True),
        ("def register(mcp):\n    for fn in FNS: mcp.add_tool(fn)\n", True),
        (
            "class Tools:\n    def __init__(self, mcp):\n        self.find = self.mcp.tool(name='find')(self._find)\n",
            True,
        ),
    ],
)
def test_the_prescan_admits_registrations_not_framework_imports_alone(source: str, admitted: bool) -> None:
    from fusion_lint.source.pipeline import mentions_runtime

    assert mentions_runtime(source.encode(), ("mcp_fusion",)) is admitted


def test_a_file_that_only_builds_a_server_is_a_hub_for_the_second_look() -> None:
    from fusion_lint.source.pipeline import builds_a_server

    assert builds_a_server(b"from mcp.server.fastmcp import FastMCP\nshared = FastMCP('hub')\n")
    assert builds_a_server(b"import mcp.types as types\nfrom mcp.server import Server\nserver = Server('s')\n")
    assert not builds_a_server(b"from myapp import Server\nserver = Server('s')\n")  # no framework import
