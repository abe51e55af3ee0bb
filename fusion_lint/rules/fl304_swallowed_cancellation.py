"""FL304 swallowed-cancellation: an except clause catches cancellation and does not re-raise."""
from __future__ import annotations

from typing import Iterable

from ..diagnostics import Span
from ..facts.model import Except
from . import Example, Finding, Rule, register
from ._shared import HANDLER_PRELUDE

CANCELLATION = {
    "asyncio.CancelledError": "CancelledError",
    "asyncio.exceptions.CancelledError": "CancelledError",
    "concurrent.futures.CancelledError": "CancelledError",
    "CancelledError": "CancelledError",
    "BaseException": "BaseException",
}


def catches_cancellation(clause: Except) -> str:
    """What of cancellation the clause catches: "bare except", "BaseException", "CancelledError" or ""."""
    if not clause.types:
        return "bare except"
    return next((CANCELLATION[qname] for qname in clause.types if qname in CANCELLATION), "")


@register
class SwallowedCancellation(Rule):
    code, name, severity = "FL304", "swallowed-cancellation", "warning"
    summary = "An `except` that catches cancellation (bare, `BaseException`, `CancelledError`) and does not re-raise."
    why = "A swallowed cancellation keeps a cancelled call running and answering; the client asked it to stop."
    prelude = HANDLER_PRELUDE
    VALID = (
        '''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        pass
    except asyncio.CancelledError:
        raise
''',
    )
    INVALID = (
        Example('''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        pass
    except asyncio.CancelledError:  # error: FL304 "CancelledError"
        pass
    try:
        pass
    except:  # error: FL304 "everything"
        return None
'''),
    )

    def check_function(self, function, project) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for clause in function.function.excepts:
            caught = catches_cancellation(clause)
            if not caught or clause.reraises:
                continue
            span, end = clause.span, clause.type_span
            reported = Span(
                span.line, span.col,
                end.end_line if end else span.line, end.end_col if end else span.col + len("except"),
                span.start, end.end if end else span.start + len("except"), span.stmt_line,
            )  # fmt: skip
            what = "everything (cancellation included)" if caught == "bare except" else caught
            yield Finding(
                reported,
                f"this except clause catches {what} and does not re-raise, so cancellation is swallowed; catch "
                "Exception instead, or re-raise",
                function.path,
            )
