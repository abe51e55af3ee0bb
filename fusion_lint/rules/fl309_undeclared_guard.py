"""FL309 undeclared-guard: a builtin raised with the author's own message, sent verbatim, declared nowhere (opt-in)."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.facts.frameworks import FRAMEWORK_LABELS
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._builtin_raises import builtin_raises, unreadable_text, written_here
from fusion_lint.rules._shared import HANDLER_PRELUDE


@register
class UndeclaredGuard(Rule):
    code, name, severity = "FL309", "undeclared-guard", "warning"
    default_enabled = False
    summary = (
        "A tool or resource raises a builtin exception with its own message, which its framework sends "
        "verbatim, but no contract declares the failure (opt-in)."
    )
    why = (
        '`raise ValueError("url is required.")` on mcp 1.x FastMCP or fastmcp reaches the model as that '
        "sentence, which it can act on, so FL300 leaves it alone. It is still a failure nothing declares: no "
        "code to branch on, no stable reason, no recovery naming the next step, and it disappears behind a "
        "masked INTERNAL_ERROR the day the server moves to MCPServer, turns on `mask_error_details`, or puts "
        "the tool under `@contract`. Declaring it keeps the sentence and adds the rest."
    )
    limits = (
        "Only what FL300 does not report: a builtin (`ValueError`, `RuntimeError`, `KeyError`, ...) with "
        "a literal message, an f-string of words around the values it names or an `UPPER_CASE` constant (not a caught exception's text re-wrapped: that is no guard), escaping to a tool or a "
        "resource whose framework sends the text. Prompts take no contract and are not reported. "
        "`--extend-select FL208 --fix --unsafe-fixes` drafts the contract and rewrites the raise."
    )
    options = "Opt-in: `--extend-select FL309`."
    prelude = HANDLER_PRELUDE
    VALID = (
        """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> dict:
    if not invoice_id:
        raise TypeError("invoice_id must be a string")  # a programming-error guard
    return {"id": invoice_id}
""",
        """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.prompt()
def summarise(invoice_id: str) -> str:
    if not invoice_id:
        raise ValueError("An invoice id is required.")  # a prompt takes no contract
    return f"Summarise invoice {invoice_id}."
""",
    )
    INVALID = (
        Example("""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("fetch")


@mcp.tool()
def fetch(url: str) -> str:
    if not url:
        raise ValueError("url is required.")  # error: FL309 "'url is required.'"
    return url
"""),
        Example("""
from fastmcp import FastMCP

mcp = FastMCP("billing")


def parse_id(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"Invoice ids are digits; {text} is not.")  # error: FL309 "tool 'get_invoice'"
    return int(text)


@mcp.tool
def get_invoice(invoice_id: str) -> dict:
    return {"id": parse_id(invoice_id)}
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        for site, groups in builtin_raises(function):
            if unreadable_text(site) is not None or not written_here(site):
                continue  # FL300's (the model misreads it), or no sentence of the author's to declare
            for group in groups:
                if group.loses_the_text or group.kind == "prompt":
                    continue
                label = FRAMEWORK_LABELS.get(group.framework, "the server's framework")
                reader = "the model" if group.kind == "tool" else "the client"
                text = site.sentence or site.text
                written = f"'{text}'" if text else "its constant"
                yield Finding(
                    site.span,
                    f"raise {site.exception}({written}) reaches {reader} with its text ({label}), but no contract "
                    f"declares the failure: no code, no reason, no recovery; declare it with "
                    f"@contract(errors=[...]) and raise fail(<reason>, <this message>)",
                    function.path,
                    subjects=group.subjects,
                )
