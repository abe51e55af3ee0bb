"""FL304 swallowed-cancellation: an except clause catches cancellation and does not re-raise."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.base.diagnostics import Span
from fusion_lint.facts.model import Except
from fusion_lint.project.view import FunctionView, ProjectView
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import HANDLER_PRELUDE

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
    limits = (
        "Only where cancellation can arrive: the `try` body (or the `with contextlib.suppress(...)` body) awaits "
        "(`await`, `async with`, `async for`). A clause that raises a different error still swallows it. "
        "Checked in handlers' own bodies."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        """
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:
        raise
    try:
        lookup(invoice_id)
    except BaseException:
        return None
""",
    )
    INVALID = (
        Example("""
import contextlib


@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:  # error: FL304 "CancelledError"
        pass
    try:
        await asyncio.sleep(1)
    except:  # error: FL304 "everything"
        return None
    try:
        await asyncio.sleep(1)
    except BaseException as e:  # error: FL304 "BaseException"
        raise RuntimeError("stopped") from e
    with contextlib.suppress(asyncio.CancelledError):  # error: FL304 "suppress(CancelledError)"
        await asyncio.sleep(1)
"""),
    )

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for clause in function.function.excepts:
            caught = catches_cancellation(clause)
            # Only where cancellation can arrive: the try body awaits. A clause that raises
            # something else still turns the cancellation into that error.
            if not caught or clause.rethrows or not clause.try_awaits:
                continue
            span, end = clause.span, clause.type_span
            reported = Span(
                span.line,
                span.col,
                end.end_line if end else span.line,
                end.end_col if end else span.col + len("except"),
                span.start,
                end.end if end else span.start + len("except"),
                span.stmt_line,
            )
            what = "everything (cancellation included)" if caught == "bare except" else caught
            yield Finding(
                reported,
                f"this except clause catches {what} around an await and does not re-raise it, so cancellation "
                "is swallowed; catch Exception instead, or re-raise",
                function.path,
            )
        for suppressing in function.function.suppressing:
            caught = next((CANCELLATION[qname] for qname in suppressing.types if qname in CANCELLATION), "")
            if caught and suppressing.awaits:
                yield Finding(
                    suppressing.span,
                    f"suppress({caught}) around an await swallows cancellation; suppress the exceptions you expect "
                    "instead",
                    function.path,
                )
