"""FL205 fail-without-contract: ``ctx.fail``/``fail()`` where the definition declares no contract."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE, fail_sites


@register
class FailWithoutContract(Rule):
    code, name, severity = "FL205", "fail-without-contract", "error"
    summary = "`ctx.fail(...)` or `fail(...)` in a handler whose definition declares no contract."
    why = (
        "With no contract, every `ctx.fail` reason is undeclared and becomes an INTERNAL_ERROR at runtime. "
        "In a framework tool (FastMCP, MCPServer, fastmcp) without a working `@contract`, the runtime's "
        "`fail()` has no contract to take its code from and raises `RuntimeError` instead."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")
""",
        """
from mcp.server.fastmcp import FastMCP
from mcp_fusion import contract, fail

mcp = FastMCP("billing")


@mcp.tool()
@contract(errors=ENTRIES)
def get_invoice(invoice_id: str) -> dict:
    raise fail("no_match")
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice")
async def get_invoice(invoice_id: str, ctx: Context):
    raise ctx.fail("no_match")  # error: FL205 "declares no contract"
"""),
        Example("""
from mcp.server.fastmcp import FastMCP
from mcp_fusion import fail

mcp = FastMCP("billing")


@mcp.tool()
def void_invoice(invoice_id: str) -> dict:
    raise fail("already_void")  # error: FL205 "fail() in a tool with no @contract"
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        contract = definition.contract
        if definition.handler is None or (contract.declared and not contract.inert):
            return
        framework = definition.definition.server is not None
        for site, path in fail_sites(definition):
            if site.method != "fail":
                continue
            if not framework:
                message = (
                    f"{site.written}() in a definition that declares no contract (at runtime an "
                    "INTERNAL_ERROR); declare errors=[ErrorContract(...)] on the definition"
                )
            elif contract.inert:
                message = (
                    f"{site.written}() in a tool whose @contract sits above the framework's decorator, so "
                    "it never runs (FL118): at runtime fail() raises RuntimeError"
                )
            else:
                message = (
                    f"{site.written}() in a tool with no @contract: at runtime fail() raises RuntimeError "
                    "(no contract to take the code from); add @contract(errors=[...]) below the tool "
                    "decorator"
                )
            yield Finding(site.span, message, path)
