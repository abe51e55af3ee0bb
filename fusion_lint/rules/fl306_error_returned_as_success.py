"""FL306 error-returned-as-success: a tool returns a failure as a successful result."""
from __future__ import annotations

import re
from typing import Iterable, Optional

from ..facts.model import Return, Shape
from . import Example, Finding, Rule, register
from ._shared import HANDLER_PRELUDE

# The first word of a message that reports a failure (DESIGN §12.2), not followed by ``(`` (code).
ERROR_WORDS = re.compile(r"\s*(error|failed|failure|exception|unable|cannot|could not)\b(?!\s*\()", re.IGNORECASE)
# Results that are failures on the wire already: never FL306.
ERROR_RESULTS = ("CallToolResult", "ToolResult")
# A key saying the result is informational (the corpus's ``"status": "info"`` next to an ``error`` key).
INFO_STATUS = frozenset({"info", "ok", "success", "empty", "not_found"})


def error_text(shape: Shape) -> Optional[str]:
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


def failure(shape: Shape) -> Optional[str]:
    """How ``shape`` reports a failure as a success, for the message, or None."""
    text = error_text(shape)
    if text is not None:
        return f"a string starting {text.split()[0]!r}"
    if shape.kind == "dict":
        keys = dict(shape.keys)
        status = keys.get("status")
        if status is not None and status.kind == "str" and (status.text or "").lower() in INFO_STATUS:
            return None
        for key in ("error", "errors"):
            if key in keys and _message(keys[key]):
                return f"a dict with an {key!r} message"
        return None
    if shape.kind == "call":
        callee = (shape.callee or "").rpartition(".")[2]
        if callee in ERROR_RESULTS:
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


def built_from_caught(returned: Return) -> Optional[str]:
    """The caught exception a value returned inside its except clause is built from."""
    caught = {clause.name for clause in returned.clauses if clause.name}
    if not caught or returned.value.kind == "call" and (returned.value.callee or "").rpartition(".")[2] in ERROR_RESULTS:
        return None
    for kind, name, detail in returned.uses.parts:
        root = (detail if kind == "call" else name) or ""
        if root.partition(".")[0] in caught:
            return root.partition(".")[0]
    return None


@register
class ErrorReturnedAsSuccess(Rule):
    code, name, severity = "FL306", "error-returned-as-success", "warning"
    summary = "A tool returns a failure (`\"Error: ...\"`, `{\"error\": ...}`, the caught exception) as a successful result."
    why = (
        "A returned value is a success on the wire: `is_error` is false, there is no code, no reason and no "
        "recovery. The model reads \"Error: not found\" as the tool's answer, and may carry on as if it had "
        "worked, or retry blindly. Raise a declared failure instead: `raise fail(<reason>)` under `@contract` "
        "(or `ctx.fail` in a FusionServer tool), or an error factory."
    )
    limits = (
        "The handler's own returns (resources and prompts included). A string counts when its first word is "
        "Error, Failed, Failure, Exception, Unable, Cannot or Could not (any case; not `Exception(`); a whole "
        "upper-case status word (`\"FAILED\"`) is data. A dict counts when its `error`/`errors` key holds a "
        "message (a string, `str(e)`, an object with a `message`), never `[]`, a number or a list of findings, "
        "and not next to `\"status\": \"info\"`. `CallToolResult(isError=True)` and fastmcp's `ToolResult` are "
        "proper failures. A failure returned by a helper the handler delegates to is not followed."
    )
    prelude = HANDLER_PRELUDE
    VALID = (
        '''
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def validate_invoice(invoice_id: str) -> dict:
    errors = check(invoice_id)
    if not errors:
        return {"valid": True, "errors": []}
    return {"valid": False, "errors": errors, "error_count": len(errors)}


@mcp.tool()
def job_errors(job_id: str) -> dict:
    return {"status": "info", "error": "No error details found for this job"}
''',
    )
    INVALID = (
        Example('''
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> str:
    try:
        return lookup(invoice_id)
    except KeyError as e:
        return f"Error: no invoice {e}"  # error: FL306 "a string starting 'Error:'"


@mcp.tool()
def void_invoice(invoice_id: str) -> dict:
    if not invoice_id:
        return {"error": "An invoice ID is required"}  # error: FL306 "'error' message"
    return {"voided": invoice_id}
'''),
    )

    def check_function(self, function, project) -> Iterable[Finding]:
        if not function.handler_of:
            return
        framework = any(d.definition.server is not None for d in function.handler_of)
        advice = "raise fail(<reason>) under @contract" if framework else "raise ctx.fail(<reason>)"
        for returned in function.function.returns:
            how = failure(returned.value)
            if how is None:
                caught = built_from_caught(returned)
                how = f"a value built from the caught exception {caught!r}" if caught else None
            if how is not None:
                yield Finding(
                    returned.span,
                    f"returns a failure as a successful result ({how}): the model reads it as the tool's answer, "
                    f"with no error flag, code or recovery; {advice} or an error factory instead",
                    function.path,
                )
