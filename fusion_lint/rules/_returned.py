"""What a returned value says about failure (FL306 reads it, FL208 counts it as a way to fail)."""

from __future__ import annotations

import re

from fusion_lint.base.diagnostics import Span
from fusion_lint.facts.model import FunctionFacts, Return, Shape

# The first word of a message that reports a failure (DESIGN §12.2), not followed by ``(`` (code).
ERROR_WORDS = re.compile(r"\s*(error|failed|failure|exception|unable|cannot|could not)\b(?!\s*\()", re.IGNORECASE)
# Results that are failures on the wire already: never FL306.
ERROR_RESULTS = ("CallToolResult", "ToolResult")
# A key saying the result is informational (the corpus's ``"status": "info"`` next to an ``error`` key).
INFO_STATUS = frozenset({"info", "ok", "success", "empty", "not_found"})


def error_text(shape: Shape) -> str | None:
    """The text of a string that reads as a failure: its first word is an error word. A whole
    upper-case status word (``"FAILED"``) is data, not a message."""
    if shape.kind not in ("str", "fstring") or not shape.text:
        return None
    text = shape.text.strip()
    if shape.kind == "str" and text.isupper() and " " not in text:
        return None
    return text if ERROR_WORDS.match(text) else None


def _message(shape: Shape) -> bool:
    """A value that holds a message: a non-empty string, ``str(...)``/``repr(...)``/``format``, or
    an object with a ``message``/``detail`` key (never ``[]``, a number, a list or a bare name)."""
    if shape.kind in ("str", "fstring"):
        return bool(shape.text) or shape.kind == "fstring"
    if shape.kind == "call":
        return (shape.callee or "").rpartition(".")[2] in ("str", "repr", "format")
    if shape.kind == "dict":
        return any(key in ("message", "detail", "msg") and _message(value) for key, value in shape.keys)
    return False


def failure(shape: Shape) -> str | None:
    """How ``shape`` reports a failure as a success, for the message, or None."""
    text = error_text(shape)
    if text is not None:
        return f"a string starting {text.split()[0]!r}"
    if shape.kind == "dict":
        keys = dict(shape.keys)
        if informational(shape):
            return None
        for key in ("error", "errors"):
            if key in keys and _message(keys[key]):
                return f"a dict with an {key!r} message"
        return None
    if shape.kind == "call":
        callee = (shape.callee or "").rpartition(".")[2]
        if callee in ERROR_RESULTS or is_error_result(shape):
            return None
        if shape.callee in ("json.dumps", "dumps") and shape.items:
            inner = failure(shape.items[0])
            return f"JSON of {inner}" if inner else None
        if callee == "TextContent":
            texts = [value for key, value in shape.keys if key == "text"] + list(shape.items)
            return next((f"TextContent starting {t.split()[0]!r}" for s in texts if (t := error_text(s))), None)
        return None
    if shape.kind == "list" and shape.items:
        inner = failure(shape.items[0])
        return f"[{inner}]" if inner and inner.startswith("TextContent") else None
    return None


def informational(shape: Shape) -> bool:
    """A dict whose ``status`` says it is informational (``"status": "info"``): its ``error`` key is data."""
    status = dict(shape.keys).get("status")
    return status is not None and status.kind == "str" and (status.text or "").lower() in INFO_STATUS


def is_error_result(shape: Shape) -> bool:
    """An error result on the wire: ``CallToolResult(isError=True, ...)``, fastmcp's
    ``ToolResult(is_error=True, ...)``, or any class built with ``isError=True`` (the corpus
    subclasses ``CallToolResult`` per response type); a plain ``ToolResult`` is a success."""
    if shape.kind != "call":
        return False
    keys = dict(shape.keys)
    flagged = keys.get("isError")
    if flagged is None and (shape.callee or "").rpartition(".")[2] in ERROR_RESULTS:
        flagged = keys.get("is_error")
    return flagged is not None and flagged.text == "True"


def built_from_caught(returned: Return) -> str | None:
    """The caught exception a value returned inside its except clause is built from."""
    caught = {clause.name for clause in returned.clauses if clause.name}
    if (
        not caught
        or returned.value.kind == "call"
        and (returned.value.callee or "").rpartition(".")[2] in ERROR_RESULTS
        or is_error_result(returned.value)
    ):
        return None
    for kind, name, detail in returned.uses.parts:
        root = (detail if kind == "call" else name) or ""
        if root.partition(".")[0] in caught:
            return root.partition(".")[0]
    return None


def caught_through_local(returned: Return, facts: FunctionFacts) -> tuple[str, str] | None:
    """(the caught exception, the local) when ``returned`` is a local last assigned, above it, in an
    except clause from the exception it caught (``message = f"Error: {e}"`` ... ``return message``)."""
    if returned.value.kind != "name" or returned.value.text not in facts.assigned_in_except:
        return None
    local = returned.value.text
    assigned, caught, where = facts.assigned_in_except[local]
    line = returned.span.line
    statement = next((t for t in facts.tries if any(_holds(h.span, where.line) for h in t.handlers)), None)
    if where.line >= line or statement is None:
        return None  # assigned below the return: the value returned here is another one
    clause = next(h for h in statement.handlers if _holds(h.span, where.line))
    after = max(h.span.end_line for h in statement.handlers)
    # Returned in that clause, or by the statement right after the try: nothing between can have
    # assigned the local again (the corpus returns such a local from a later branch too).
    if not (_holds(clause.span, line) or after < line <= after + 2):
        return None
    for kind, name, detail in assigned.parts:
        root = ((detail if kind == "call" else name) or "").partition(".")[0]
        if root in caught:
            return root, local
    return None


def _holds(span: Span, line: int) -> bool:
    return span.line <= line <= span.end_line
