"""FL300 prefer-mcp-error-in-handler: the handler raises a plain builtin exception."""
from __future__ import annotations

from typing import Iterable

from . import Example, Finding, Rule, register
from ._shared import HANDLER_PRELUDE

BUILTIN_EXCEPTIONS = frozenset(
    {
        "Exception", "RuntimeError", "ValueError", "KeyError", "LookupError", "OSError", "IOError",
        "PermissionError", "FileNotFoundError", "TimeoutError", "ConnectionError",
    }
)  # fmt: skip


@register
class PreferMcpErrorInHandler(Rule):
    code, name, severity = "FL300", "prefer-mcp-error-in-handler", "warning"
    summary = "The handler raises a plain builtin exception (`ValueError`, `KeyError`, `RuntimeError`, ...)."
    why = (
        "The boundary masks any non-McpError as INTERNAL_ERROR so internals do not leak: the model learns "
        "nothing. Programming-error guards (`TypeError`, `AssertionError`, `NotImplementedError`) are fine."
    )
    limits = "Re-raising what was caught (`raise`, `raise e`) is never reported."
    prelude = HANDLER_PRELUDE
    VALID = (
        '''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    if not invoice_id:
        raise NotImplementedError
    try:
        return lookup(invoice_id)
    except ValueError as e:
        raise
''',
    )
    INVALID = (
        Example('''
@tool("get_invoice", errors=ENTRIES)
async def get_invoice(invoice_id: str, ctx: Context):
    raise ValueError("bad invoice id")  # error: FL300 "ValueError"
'''),
    )

    def check_function(self, function, project) -> Iterable[Finding]:
        if not function.handler_of:
            return
        for site in function.function.raises:
            if site.kind in ("call", "name") and site.exception in BUILTIN_EXCEPTIONS:
                yield Finding(
                    site.span,
                    f"raise {site.exception} reaches the model as a masked INTERNAL_ERROR; raise ctx.fail(<reason>) "
                    "or an error factory (invalid_params, not_found, ...) instead",
                    function.path,
                )
