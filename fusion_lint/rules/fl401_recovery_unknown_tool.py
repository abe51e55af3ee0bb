"""FL401 recovery-unknown-tool: the recovery names a tool no definition registers."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import ProjectView, ResolvedEntry, Vocabulary
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._recovery_text import scan_recovery
from fusion_lint.rules._shared import RECOVERY_PRELUDE, entry_label, listing, recovery


@register
class RecoveryUnknownTool(Rule):
    code, name, severity = "FL401", "recovery-unknown-tool", "warning"
    summary = "The recovery names a tool (backticked or snake_case) that no definition of the project registers."
    why = (
        "An agent told to call a tool that does not exist will try it anyway and get a protocol error, or "
        "hallucinate its arguments: a typo or a renamed tool in a recovery hint turns one failure into two. "
        "Tools are collected across every file of the project. Only backticked identifiers and identifiers "
        "with an underscore are candidates, never plain words; the tools' argument names, declared reasons "
        "and error code names (declared custom codes included) are known, a registered tool written as a "
        "call (`list_invoices()`) is the tool, URLs, domains, version numbers and abbreviations (`e.g.`) "
        "are prose, and so is a word the hint calls an argument or field "
        '(`page_size=50`, "the sort_order field"). A tool whose name is computed is known by the function it '
        "registers: a mention holding that function's name, or held in it, is taken for it "
        '(`f"{ns}_list_instances"`), and the '
        "message says which names were not checked. When a computed name registers a function the project "
        "cannot follow, the set of tools is unknown and the rule stays silent rather than guess."
    )
    prelude = RECOVERY_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id, then call get_invoice again."),
    ErrorContract(reason="bad_id", code=JsonRpcErrorCode.INVALID_PARAMS, when="Malformed id",
                  recovery="Check the `invoice_id` argument, then retry; it must come from `list_invoices`."),
    ErrorContract(reason="locked", code="INVOICE_LOCKED", when="The invoice is locked",
                  recovery="INVOICE_LOCKED clears after a minute: call list_invoices() (see docs.example.com), then retry."),
])
async def get_invoice(invoice_id: str, ctx: Context) -> dict:
    raise ctx.fail("no_match")
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoice to find a valid invoice id, then retry."),  # error: FL401 "'list_invoice' (did you mean 'list_invoices'?)"
    ErrorContract(reason="bad_id", code=JsonRpcErrorCode.INVALID_PARAMS, when="Malformed id",
                  recovery="Call `search` or find_customer first, then call get_invoice again."),  # error: FL401 "'search' and 'find_customer'"
])
async def get_invoice(invoice_id: str, ctx: Context) -> dict:
    raise ctx.fail("no_match")
"""),
    )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        vocabulary = project.vocabulary
        value = recovery(entry)
        if value is None or vocabulary.unknowable_tools:
            return  # a computed name registers a function the project cannot follow: any name may be it
        unknown = scan_recovery(str(value.value), vocabulary).tool_mentions
        computed = vocabulary.computed_tools
        # A computed name is usually built from the function's (``f"{ns}_list_instances"``, an
        # environment variable defaulting to it): a mention sharing it may be that tool.
        unknown = [token for token in unknown if not any(name in token or token in name for name in computed)]
        if not unknown:
            return
        message = (
            f"{entry_label(entry)}: recovery names {_with_suggestions(unknown, vocabulary)}, which no tool of "
            f"this project registers; {_known_tools(vocabulary)}"
        )
        if computed:
            shown = ", ".join(sorted(computed)[:5]) + (f" and {len(computed) - 5} more" if len(computed) > 5 else "")
            message += f" (the names of the tools registering {shown} are computed and were not checked)"
        yield Finding(value.span, message, entry.path)


def _with_suggestions(unknown: list[str], vocabulary: Vocabulary) -> str:
    shown = []
    for token in unknown:
        close = vocabulary.tool_index.close_match(token)  # from an index: a project may have thousands
        shown.append(f"'{token}' (did you mean '{close}'?)" if close else f"'{token}'")
    return listing(shown)


def _known_tools(vocabulary: Vocabulary, limit: int = 8) -> str:
    if not vocabulary.tools:
        return "the project registers no tool by a literal name"
    names = vocabulary.sorted_tools
    listed = ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
    return f"name one of its tools ({listed})"
