"""FL112 error-contract-recovery-min-words: ``recovery`` has too few words."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label


@register
class ErrorContractRecoveryMinWords(Rule):
    code, name, severity = "FL112", "error-contract-recovery-min-words", "warning"
    summary = "`recovery` has fewer words than `recovery-min-words` (default 5)."
    why = "A hint like 'retry' names no capability; a sentence that names the next tool gives the agent a real move."
    options = "`recovery-min-words` (default 5): the fewest whitespace-separated words a recovery may have."
    prelude = SHAPE_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
])
async def get_invoice(invoice_id: str):
    return {}
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Try again"),  # error: FL112 "2 words"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        value = entry.get("recovery")
        if value is None or value.kind != "str" or not str(value.value).strip():
            return
        words = len(str(value.value).split())
        if words < project.recovery_min_words:
            yield Finding(
                value.span,
                f"{entry_label(entry)}: recovery has {words} word{'s' if words != 1 else ''} "
                f"(at least {project.recovery_min_words}); name the tool to call next and how",
                entry.path,
            )
