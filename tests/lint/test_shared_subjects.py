"""A finding about code several definitions share is one diagnostic naming every one of them
(DESIGN §2.1 "function-level rules once per function", §12.3 "one diagnostic per location"):
never two copies, never one that names a single tool."""

from __future__ import annotations

from harness import lint_sources

PRELUDE = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context\n"
SHARED = (
    'SHARED = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",\n'
    '                        recovery="Try again")]\n'
)


def _findings(source: str, code: str) -> list[str]:
    report = lint_sources({"app.py": PRELUDE + source})
    return [d.message for d in report.diagnostics if d.code == code]


def test_a_handler_shared_by_two_tools_is_checked_once_and_names_both() -> None:
    source = (
        "async def lookup(invoice_id: str, ctx: Context):\n"
        "    raise ValueError('bad id')\n"
        "get_invoice = tool('get_invoice')(lookup)\n"
        "find_invoice = tool('find_invoice')(lookup)\n"
    )
    [message] = _findings(source, "FL300")
    assert message.startswith("tool 'get_invoice', tool 'find_invoice': raise ValueError")


def test_a_shared_contract_entry_is_reported_once_naming_every_tool() -> None:
    source = SHARED + "".join(
        f"@tool('{name}', errors=SHARED)\nasync def {name}(invoice_id: str, ctx: Context):\n    raise ctx.fail('no_match')\n"
        for name in ("get_invoice", "pay_invoice", "void_invoice")
    )
    [message] = _findings(source, "FL112")
    assert message.startswith("tool 'get_invoice', tool 'pay_invoice', tool 'void_invoice': entry 'no_match': ")


def test_the_same_location_with_different_messages_is_one_diagnostic_saying_each() -> None:
    """Two tools with different contracts reaching one service raise: one diagnostic at the raise
    (one finding per location, issue 31), each tool's message after its label."""
    source = (
        "from mcp_fusion import conflict\n"
        "def lock():\n    raise conflict('locked')\n"
        "@tool('a', errors=[ErrorContract(reason='x', code=JsonRpcErrorCode.NOT_FOUND, when='w', "
        "recovery='Call b to find the right one.')])\n"
        "async def a(ctx: Context):\n    lock()\n    raise ctx.fail('x')\n"
        "@tool('b', errors=[ErrorContract(reason='y', code=JsonRpcErrorCode.FORBIDDEN, when='w', "
        "recovery='Call a to find the right one.')])\n"
        "async def b(ctx: Context):\n    lock()\n    raise ctx.fail('y')\n"
    )
    [message] = _findings(source, "FL200")
    for_a, for_b = message.split("; and for ")
    assert for_a.startswith("tool 'a': ") and "declared: NOT_FOUND" in for_a
    assert for_b.startswith("tool 'b': ") and "declared: FORBIDDEN" in for_b


def test_a_long_list_of_tools_is_cut_after_ten() -> None:
    source = SHARED + "".join(
        f"@tool('t{n}', errors=SHARED)\nasync def t{n}(ctx: Context):\n    raise ctx.fail('no_match')\n"
        for n in range(12)
    )
    [message] = _findings(source, "FL112")
    assert message.startswith(", ".join(f"tool 't{n}'" for n in range(10)) + " and 2 more: entry 'no_match'")
