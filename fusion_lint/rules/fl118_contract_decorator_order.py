"""FL118 contract-decorator-order: ``@contract`` sits above the framework's registration decorator."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from fusion_lint.base.diagnostics import Edit, Fix, Span
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import line_start, valid_span

PRELUDE = "from mcp.server.fastmcp import FastMCP\nfrom mcp_fusion import contract, ErrorContract, JsonRpcErrorCode\n"


@register
class ContractDecoratorOrder(Rule):
    code, name, severity = "FL118", "contract-decorator-order", "error"
    summary = "`@contract` sits above the framework's registration decorator (`@mcp.tool()`)."
    why = (
        "Decorators apply bottom-up: the framework registers the function below it. With `@contract` on top, "
        "the framework registered the unwrapped function, so the contract never runs: declared failures are "
        "not enforced, `fail()` raises RuntimeError, and the model sees the framework's raw text. fastmcp "
        "refuses it at import with a TypeError; mcp's FastMCP and MCPServer accept it silently. The entries "
        "are still shape-checked (FL1xx); the tool is otherwise checked as one without a contract."
    )
    fix = (
        "Moves the `@contract(...)` decorator to just below the registration decorator (unsafe: the contract "
        "starts to run, so the tool's failures change on the wire; that is the point, but review it)."
    )
    fix_safety = "unsafe"
    prelude = PRELUDE
    VALID = (
        """
mcp = FastMCP("billing")


@mcp.tool()
@contract(errors=[])
def get_invoice(invoice_id: str) -> dict:
    return {"id": invoice_id}
""",
    )
    INVALID = (
        Example(
            """
mcp = FastMCP("billing")


@contract(errors=[])  # error: FL118 "never runs"
@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    return {"id": invoice_id}
""",
            fixed="""
mcp = FastMCP("billing")


@mcp.tool()
@contract(errors=[])  # error: FL118 "never runs"
def get_invoice(invoice_id: str) -> dict:
    return {"id": invoice_id}
""",
        ),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        facts = definition.definition
        if facts.server is None or not facts.contract_above or facts.contract_span is None:
            return
        also = " (fastmcp also refuses it at import with a TypeError)" if facts.framework == "fastmcp" else ""
        yield Finding(
            facts.contract_span,
            f"@contract sits above the framework's decorator, so the framework registered the unwrapped function "
            f"and the contract never runs{also}; move @contract below it",
            definition.path,
            partial(move_below, contract=facts.contract_span, registration=facts.span),
        )


def _decorator_lines(text: str, span: Span) -> tuple[int, int] | None:
    """The whole lines of a decorator (``@`` and its expression, then only a comment): (start, end)."""
    if not valid_span(text, span):
        return None
    start = line_start(text, span.start)
    if text[start : span.start].strip() != "@":
        return None
    end = text.find("\n", span.end)
    end = len(text) if end == -1 else end + 1
    rest = text[span.end : end].strip()
    return (start, end) if not rest or rest.startswith("#") else None


def move_below(text: str, *, contract: Span, registration: Span) -> Fix | None:
    """The ``@contract(...)`` lines moved to just after the registration decorator's lines."""
    moved, below = _decorator_lines(text, contract), _decorator_lines(text, registration)
    if moved is None or below is None or moved[1] > below[0]:
        return None
    block = text[moved[0] : moved[1]]
    if not block.endswith("\n"):
        return None
    return Fix(
        "Move @contract below the registration decorator",
        [Edit(moved[0], moved[1], ""), Edit(below[1], below[1], block)],
        "unsafe",
    )
