"""FL310 error-middleware-order: fastmcp's ``ErrorHandlingMiddleware`` added after the fusion integration."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register


@register
class ErrorMiddlewareOrder(Rule):
    code, name, severity = "FL310", "error-middleware-order", "warning"
    summary = (
        "fastmcp's `ErrorHandlingMiddleware` is added to a server after the fusion integration "
        "(`fusion.install(app)`), without `transform_errors=False`."
    )
    why = (
        "fastmcp runs the middleware added last first. Added after `fusion.install(app)`, fastmcp's "
        "`ErrorHandlingMiddleware` sees a call with invalid arguments before the integration does and answers it "
        "itself: the model gets `Internal error: 1 validation error for call[...]` (fastmcp 2.x/3.x) or a -32602 "
        "JSON-RPC error it never reads (4.x, against SEP-1303) instead of the self-healing `<validation_error>` "
        "naming each field. Contracted failures are results, so the middleware never touches them, and "
        "`RetryMiddleware` never retries them (measured on fastmcp 2.14, 3.4 and 4.2): only the order matters."
    )
    limits = (
        "The middleware is read in the module that defines the tools: added in another module (a factory building "
        "the app), it is not seen. Middleware of two fastmcp servers in one module is read as one server's."
    )
    prelude = (
        "from fastmcp import FastMCP\n"
        "from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware, RetryMiddleware\n"
        "from mcp_fusion import contract, fail\n"
        "from mcp_fusion.integrations import fastmcp as fusion\n"
        "from mcp_fusion.integrations.fastmcp import FusionMiddleware\n"
        'mcp = FastMCP("billing")\n'
    )
    VALID = (
        """
mcp.add_middleware(ErrorHandlingMiddleware(include_traceback=False))
fusion.install(mcp)  # added last: it sees a call first


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    return {"id": invoice_id}
""",
        """
fusion.install(mcp)
mcp.add_middleware(ErrorHandlingMiddleware(transform_errors=False))
mcp.add_middleware(RetryMiddleware())


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    return {"id": invoice_id}
""",
        """
mcp.add_middleware(ErrorHandlingMiddleware())  # no fusion integration: nothing to shadow


@mcp.tool()
def list_invoices() -> list:
    return []
""",
    )
    INVALID = (
        Example("""
fusion.install(mcp)
mcp.add_middleware(ErrorHandlingMiddleware(include_traceback=False))  # error: FL310 "<validation_error>"


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    return {"id": invoice_id}
"""),
        Example("""
app = FastMCP("billing", middleware=[FusionMiddleware(), ErrorHandlingMiddleware()])  # error: FL310 "(earlier in the list)"


@app.tool()
def get_invoice(invoice_id: str) -> dict:
    return {"id": invoice_id}
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        server = definition.definition.server
        if server is None or server.framework not in ("fastmcp", "unknown"):
            return
        facts = project.files.get(definition.path)
        if facts is None or not facts.middleware:
            return
        fusion_line = None
        for use in facts.middleware:
            if use.kind == "fusion" and fusion_line is None:
                fusion_line = use.span.line
            elif use.kind == "error_handling" and use.transform_errors and fusion_line is not None:
                where = "earlier in the list" if fusion_line == use.span.line else f"line {fusion_line}"
                yield Finding(
                    use.span,
                    f"fastmcp's ErrorHandlingMiddleware is added after the fusion integration ({where}), "
                    "so it sees each call first: a call with invalid arguments reaches the model as `Internal "
                    "error: ...` (fastmcp 2.x/3.x) or a -32602 JSON-RPC error it never reads (4.x), not the "
                    "<validation_error> naming each field; add it before fusion.install(...), or pass "
                    "transform_errors=False",
                    definition.path,
                )
