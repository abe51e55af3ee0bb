"""FL300 by value (issue 31, DESIGN §13.3): a builtin exception is FL300 only where the model loses or
misreads the failure: the framework masks it, or its text is not a sentence the author wrote for the
model. The author's own literal message on a framework that sends it verbatim is FL309's (opt-in):
an undeclared failure, which the model can read. Each shape fires and does not fire on every framework
where it applies."""

from __future__ import annotations

import pytest
from harness import lint_sources

SERVERS = {
    "mcp1": "from mcp.server.fastmcp import FastMCP\napp = FastMCP('billing')\n",
    "fastmcp": "from fastmcp import FastMCP\napp = FastMCP('billing')\n",
    "mcp2": "from mcp.server.mcpserver import MCPServer\napp = MCPServer('billing')\n",
    "fastmcp-masked": "from fastmcp import FastMCP\napp = FastMCP('billing', mask_error_details=True)\n",
}
VERBATIM = ("mcp1", "fastmcp")
MASKING = ("mcp2", "fastmcp-masked")

#: Raises whose text is the author's own sentence: sent verbatim, the model reads them.
AUTHORS = {
    "literal": 'raise ValueError("An invoice id is required.")',
    "f-string": 'raise ValueError(f"Invoice {invoice_id} is not a number.")',
    "constant": "raise ValueError(REQUIRED)",
    "format": 'raise RuntimeError("Invoice {} is closed.".format(invoice_id))',
    "key-error-sentence": 'raise KeyError(f"No invoice {invoice_id}; call list_invoices.")',
}
#: Raises whose text is not a sentence written for the model.
UNREADABLE = {
    "key-error": ("raise KeyError(invoice_id)", "quoted key"),
    "no-message": ("raise ValueError", "no message"),
    "empty-call": ("raise RuntimeError()", "no message"),
}
#: Text the model reads although the author did not write it as a literal here: not FL300 (judged on
#: real servers, issue 31), nor FL309 (no sentence of the author's to declare).
READABLE_NOT_WRITTEN_HERE = {
    "variable": "raise ValueError(detail)",
    "bare-hole": 'raise ValueError(f"{detail}")',
}


def handler(body: str) -> str:
    return f"""
REQUIRED = "An invoice id is required."


@app.tool()
def get_invoice(invoice_id: str) -> str:
    detail = describe(invoice_id)
    if not invoice_id.isdigit():
        {body}
    return detail


def describe(invoice_id: str) -> str:
    return invoice_id
"""


def codes(report) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in report.diagnostics if d.code in ("FL300", "FL309")]


@pytest.mark.parametrize("server", VERBATIM)
@pytest.mark.parametrize("shape", AUTHORS)
def test_the_authors_sentence_sent_verbatim_is_fl309_not_fl300(server: str, shape: str) -> None:
    report = lint_sources({"app.py": SERVERS[server] + handler(AUTHORS[shape])}, extend_select=["FL309"])
    found = codes(report)
    assert [code for code, _ in found] == ["FL309"], found
    assert "no contract declares the failure" in found[0][1] and "fail(<reason>, <this message>)" in found[0][1]
    # FL309 is opt-in: by default nothing.
    assert codes(lint_sources({"app.py": SERVERS[server] + handler(AUTHORS[shape])})) == []


@pytest.mark.parametrize("server", VERBATIM)
@pytest.mark.parametrize("shape", UNREADABLE)
def test_text_that_is_no_sentence_is_fl300_where_it_is_sent(server: str, shape: str) -> None:
    body, why = UNREADABLE[shape]
    report = lint_sources({"app.py": SERVERS[server] + handler(body)}, extend_select=["FL309"])
    found = codes(report)
    assert [code for code, _ in found] == ["FL300"], found
    assert why in found[0][1]


@pytest.mark.parametrize("server", VERBATIM)
@pytest.mark.parametrize("shape", READABLE_NOT_WRITTEN_HERE)
def test_a_message_built_elsewhere_is_neither_where_it_is_sent(server: str, shape: str) -> None:
    body = READABLE_NOT_WRITTEN_HERE[shape]
    assert codes(lint_sources({"app.py": SERVERS[server] + handler(body)}, extend_select=["FL309"])) == []


@pytest.mark.parametrize("server", MASKING)
@pytest.mark.parametrize(
    "body",
    [*AUTHORS.values(), *(body for body, _ in UNREADABLE.values()), *READABLE_NOT_WRITTEN_HERE.values()],
)
def test_every_builtin_is_fl300_where_the_framework_masks_it(server: str, body: str) -> None:
    report = lint_sources({"app.py": SERVERS[server] + handler(body)}, extend_select=["FL309"])
    found = codes(report)
    assert [code for code, _ in found] == ["FL300"], found
    assert "masks it" in found[0][1] or "(masked)" in found[0][1]


@pytest.mark.parametrize("server", VERBATIM)
def test_a_caught_exception_re_wrapped_is_read_not_reported(server: str) -> None:
    source = (
        SERVERS[server]
        + """
import httpx


@app.tool()
async def fetch(url: str) -> str:
    try:
        return (await httpx.AsyncClient().get(url)).text
    except httpx.HTTPError as error:
        raise RuntimeError(f"Fetching {url} failed: {error}") from error
"""
    )
    # The model reads `Fetching ... failed: <the library's sentence>`: neither rule; FL208 drafts it.
    assert codes(lint_sources({"app.py": source}, extend_select=["FL309"])) == []
    # The same sentence without the caught exception's text is the author's guard: FL309.
    own = source.replace(": {error}", ".")
    assert [code for code, _ in codes(lint_sources({"app.py": own}, extend_select=["FL309"]))] == ["FL309"]
    # Where the framework masks it, it is lost whatever it says: FL300.
    masked = source.replace("FastMCP('billing')", "FastMCP('billing', mask_error_details=True)")
    if server == "fastmcp":
        assert [code for code, _ in codes(lint_sources({"app.py": masked}))] == ["FL300"]


def test_unknown_tool_in_a_dispatcher_is_the_protocols_answer() -> None:
    """mcp 2.x's low-level server answers a handler's exception with a JSON-RPC internal error: the
    missing argument is lost (FL300); the unknown name is the protocol's JSON-RPC error anyway."""
    source = """
from mcp.server import Server, ServerRequestContext
import mcp.types as types


async def handle_call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != "fetch":
        raise ValueError(f"Unknown tool: {params.name}")
    if "url" not in (params.arguments or {}):
        raise ValueError("Missing required argument 'url'")
    return types.CallToolResult(content=[])


app = Server("fetcher", on_call_tool=handle_call_tool)
"""
    found = [(d.code, d.span.line) for d in lint_sources({"app.py": source}).diagnostics if d.code == "FL300"]
    assert found == [("FL300", 10)], found  # the missing argument, not the unknown name (line 8)


def test_under_a_contract_every_builtin_is_masked() -> None:
    source = """
from mcp.server.fastmcp import FastMCP
from mcp_fusion import contract

app = FastMCP("billing")


@app.tool()
@contract(errors=[])
def get_invoice(invoice_id: str) -> str:
    raise ValueError("An invoice id is required.")
"""
    found = codes(lint_sources({"app.py": source}, extend_select=["FL309"]))
    assert [code for code, _ in found] == ["FL300"] and "INTERNAL_ERROR" in found[0][1], found


def test_a_prompts_guard_is_neither() -> None:
    source = """
from mcp.server.fastmcp import FastMCP

app = FastMCP("billing")


@app.prompt()
def summarise(invoice_id: str) -> str:
    if not invoice_id:
        raise ValueError("An invoice id is required.")
    return f"Summarise {invoice_id}."
"""
    assert codes(lint_sources({"app.py": source}, extend_select=["FL309"])) == []
