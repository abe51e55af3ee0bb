"""FL117 prompt-error-contract: a prompt declares ``errors=``."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE


@register
class PromptErrorContract(Rule):
    code, name, severity = "FL117", "prompt-error-contract", "error"
    summary = "A prompt declares `errors=`."
    why = "Prompts declare no contract: `prompt()` takes no `errors` and the definition fails at import."
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@prompt("summarize")
def summarize(text: str) -> str:
    return text
""",
    )
    INVALID = (
        Example("""
@prompt("summarize", errors=[])  # error: FL117 "prompts declare no error contract"
def summarize(text: str) -> str:
    return text
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        facts = definition.definition
        if definition.kind != "prompt":
            return
        if facts.server is not None and facts.contract_span is not None:
            yield Finding(
                facts.contract_span,
                "prompts declare no error contract; remove @contract (model failures in the tools it uses)",
                definition.path,
            )
        elif facts.errors_arg_span is not None:
            yield Finding(
                facts.errors_arg_span,
                "prompts declare no error contract; remove errors= (model failures in the tools it uses)",
                definition.path,
            )
