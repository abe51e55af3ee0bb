"""FL101 error-contract-empty: ``errors=[]`` declares nothing."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial

from fusion_lint.base.diagnostics import Fix
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import CallText
from fusion_lint.rules._shared import SHAPE_PRELUDE

EMPTY_LIST = re.compile(r"[\[(]\s*[\])]")


@register
class ErrorContractEmpty(Rule):
    code, name, severity = "FL101", "error-contract-empty", "warning"
    summary = "`errors=[]` declares nothing."
    why = (
        "An empty contract claims the tool never fails in a modeled way; an agent then gets no "
        "reason or recovery hint when it does. Declare the real failure modes, or drop the argument."
    )
    fix = "Drops the empty `errors=[]` argument."
    fix_safety = "safe"
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice")
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example(
            """
@tool("get_invoice", errors=[])  # error: FL101 "declares no failure modes"
async def get_invoice(invoice_id: str):
    return {}
""",
            fixed="""
@tool("get_invoice")  # error: FL101 "declares no failure modes"
async def get_invoice(invoice_id: str):
    return {}
""",
        ),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        expr = definition.definition.errors
        if definition.contract.empty_literal and expr is not None:
            yield Finding(
                expr.span,
                "errors=[] declares no failure modes; declare the real ones or drop it",
                definition.path,
                partial(self.drop_errors, definition),
            )

    @staticmethod
    def drop_errors(definition: ResolvedDefinition, text: str) -> Fix | None:
        """The ``errors=[]`` argument dropped with its comma, leaving the call well-formatted."""
        call = CallText.of(text, definition.definition.call)
        if call is None:
            return None
        for index, argument in enumerate(call.arguments):
            if argument.keyword == "errors":
                # The written value, parentheses included (an empty tuple's own span is empty).
                value = call.text[argument.span.start : argument.span.end].partition("=")[2].strip()
                if not EMPTY_LIST.fullmatch(value):
                    return None
                edit = call.drop_argument(index).edit()
                return Fix("Drop the empty errors=[]", [edit]) if edit is not None else None
        return None
