"""FL307 exception-text-to-model: the caught exception's text becomes what the model reads."""
from __future__ import annotations

from typing import Iterable, Optional

from ..facts.model import Except, Uses
from . import Example, Finding, Rule, register
from ._shared import HANDLER_PRELUDE, listing
from .fl303_no_stringify_upstream_error import leaks

# Raises whose message reaches the model (any other exception is masked by the boundary).
MODEL_FACING_RAISES = ("fail", "mcp_error", "factory", "tool_error")


def exception_text(uses: Optional[Uses], clauses: tuple[Except, ...], returned: bool) -> list[str]:
    """How the text of an exception caught by ``clauses`` goes into an expression: ``str(e)``,
    ``f"{e}"``, ``e.args``, and, in a returned value, ``repr(e)`` or ``{e!r}`` (in a raise those
    are FL303's)."""
    caught = {clause.name for clause in clauses if clause.name}
    if uses is None or not caught:
        return []
    found: list[str] = []
    for kind, name, detail in uses.parts:
        if kind == "call" and detail in caught and (name == "str" or (returned and name == "repr")):
            found.append(f"{name}({detail})")
        elif kind == "format" and name in caught and (detail in ("", "s") or (returned and detail == "r")):
            found.append(f'f"{{{name}{"!" + detail if detail else ""}}}"')
        elif kind == "name" and name.partition(".")[0] in caught and name.partition(".")[2] == "args":
            found.append(name)
    return list(dict.fromkeys(found))


@register
class ExceptionTextToModel(Rule):
    code, name, severity = "FL307", "exception-text-to-model", "warning"
    summary = "The caught exception's text (`str(e)`, `f\"{e}\"`, `e.args`) becomes part of what the tool raises or returns."
    why = (
        "An upstream exception's text is written for whoever debugs the server: hosts, SQL, file paths, "
        "internal names. Pasted into a failure or a result, it is what the model reads instead of a reason "
        "and a recovery it can act on, and it may leak what the client should never see. Say what failed in "
        "plain words, keep the exception as the cause, and log the details."
    )
    limits = (
        "The handler's own raises and returns, inside the except clause that binds the exception. A raise "
        "whose message uses `repr(e)`, `json.dumps` or a traceback is FL303's alone."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        '''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        return lookup(invoice_id)
    except KeyError as e:
        raise ctx.fail("no_match", "No invoice has that id") from e
''',
    )
    INVALID = (
        Example('''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        return lookup(invoice_id)
    except KeyError as e:
        raise ctx.fail("no_match", f"Lookup failed: {e}") from e  # error: FL307 "{e}"
    except OSError as e:
        return {"error": str(e)}  # error: FL307 "str(e)"
'''),
    )

    def check_function(self, function, project) -> Iterable[Finding]:
        if not function.handler_of:
            return
        facts = function.function
        for site in facts.raises:
            if site.kind not in MODEL_FACING_RAISES or leaks(site):
                continue
            found = exception_text(site.message, site.clauses, returned=False)
            found += [text for text in exception_text(site.data, site.clauses, returned=False) if text not in found]
            if found:
                yield Finding(site.span, f"the raised failure carries the caught exception's text ({listing(found)}); "
                              "the model reads raw upstream text instead of a reason and a recovery; say what failed "
                              "in plain words and keep the exception as the cause", function.path)  # fmt: skip
        for returned in facts.returns:
            found = exception_text(returned.uses, returned.clauses, returned=True)
            if found:
                yield Finding(returned.span, f"the result is built from the caught exception's text ({listing(found)}); "
                              "the model reads raw upstream text as a success; raise a declared failure "
                              "(ctx.fail) instead", function.path)  # fmt: skip
