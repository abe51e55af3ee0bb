"""DESIGN §12.3 on what surrounds the handler: recovery text (FL400/FL401), closed-then-open codes
(§3.1, issue 16) in the conformance rules, multi-code ``noqa``, ``src/`` layouts, FL000's line.
"""

from __future__ import annotations

import pytest
from test_resolution import IMPORTS, app, found, line, lines

# ----- recovery text ------------------------------------------------------------------------------

RECOVERY_TOOLS = """
    @tool("list_invoices")
    async def list_invoices(customer_id: str) -> list:
        return []

    @tool("get_invoice", errors=[
        ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                      recovery={recovery!r}),
        ErrorContract(reason="locked", code="INVOICE_LOCKED", when="Locked",
                      recovery="Wait a minute, then call get_invoice again."),
    ])
    async def get_invoice(invoice_id: str, ctx: Context):
        if invoice_id:
            raise ctx.fail("no_match")
        raise ctx.fail("locked")
"""

SILENT_RECOVERIES = [
    "Call list_invoices with the customer_id, then retry get_invoice with its invoice_id.",  # arguments
    "On locked or no_match, call list_invoices first, then call get_invoice again.",  # declared reasons
    "On NOT_FOUND, SERVER_BUSY or INVOICE_LOCKED wait, then call get_invoice again.",  # code names
    "See https://status.example.com/billing or docs.example.com, then call get_invoice again.",  # URLs, domains
    "Clients before v2.1.0 (or 1.4.2-beta) must upgrade, then call get_invoice again.",  # version numbers
    "Call another tool, e.g. list_invoices, i.e. the listing, then call get_invoice again.",  # abbreviations
    "Call list_invoices() or `list_invoices(customer_id)` first, then call get_invoice again.",  # a tool as a call
]


@pytest.mark.parametrize("recovery", SILENT_RECOVERIES)
def test_recovery_prose_the_model_can_act_on_is_neither_fl400_nor_fl401(recovery: str) -> None:
    assert found(app(RECOVERY_TOOLS.format(recovery=recovery)), "FL400", "FL401") == []


@pytest.mark.parametrize(
    ("recovery", "code", "fragment"),
    [
        (
            "Set the LEDGER_TOKEN environment variable, then call get_invoice.",
            "FL400",
            "'LEDGER_TOKEN' (an environment variable)",
        ),
        (
            "Export $LEDGER_TOKEN first, then call get_invoice again.",
            "FL400",
            "'$LEDGER_TOKEN' (an environment variable)",
        ),
        ("Set TOKEN in the environment, then call get_invoice again.", "FL400", "'TOKEN' (an environment variable)"),
        (
            "Restart the server with --read-only, then call get_invoice again.",
            "FL400",
            "'--read-only' (a command-line flag)",
        ),
        ("Call list_invoice to find the id, then call get_invoice again.", "FL401", "'list_invoice'"),
        (
            "Call list_invoice() to find the id, then call get_invoice again.",
            "FL400",
            "'list_invoice()' (a function call)",
        ),
    ],
)
def test_recovery_naming_what_the_model_cannot_reach_fires(recovery: str, code: str, fragment: str) -> None:
    [(found_code, _, _, message)] = found(app(RECOVERY_TOOLS.format(recovery=recovery)), "FL400", "FL401")
    assert found_code == code and fragment in message, message


# ----- closed-then-open codes in the conformance rules --------------------------------------------------


def test_string_codes_are_compared_by_name() -> None:
    source = app("""
        from mcp_fusion import tool_error, conflict

        @tool("get_invoice", errors=[
            ErrorContract(reason="no_match", code="NOT_FOUND", when="No invoice",
                          recovery="Call get_invoice again with a real invoice id."),
            ErrorContract(reason="busy", code="SERVER_BUSY", when="Busy",
                          recovery="Wait a few seconds, then call get_invoice again."),
        ])
        async def get_invoice(invoice_id: str, ctx: Context):
            if invoice_id == "a":
                raise not_found("gone")
            if invoice_id == "b":
                raise McpError("SERVER_BUSY", "busy")
            if invoice_id == "c":
                raise tool_error("INVOICE_LOCKED", "locked")
            if invoice_id == "d":
                raise McpError(JsonRpcErrorCode.NOT_FOUND, "gone", {"reason": "busy"})
            raise ctx.fail("no_match")
    """)
    results = found(source, "FL200", "FL201", "FL206")
    at = {
        name: line(source, fragment)
        for name, fragment in (
            ("a", 'raise not_found("gone")'),
            ("b", 'raise McpError("SERVER_BUSY"'),
            ("c", 'raise tool_error("INVOICE_LOCKED"'),
            ("d", "raise McpError(JsonRpcErrorCode.NOT_FOUND"),
        )
    }
    assert sorted(lines(results)) == sorted(
        [
            ("FL201", "app.py", at["a"]),
            ("FL201", "app.py", at["b"]),
            ("FL200", "app.py", at["c"]),
            ("FL201", "app.py", at["d"]),
            ("FL206", "app.py", at["d"]),
        ]
    )
    messages = {(code, where): message for code, _, where, message in results}
    assert 'code="INVOICE_LOCKED"' in messages["FL200", at["c"]]
    assert "'no_match'" in messages["FL201", at["a"]] and "'busy'" in messages["FL201", at["b"]]
    assert "declares it as SERVER_BUSY" in messages["FL206", at["d"]]


def test_a_canonical_code_is_not_baseline_but_its_mirror_member_is() -> None:
    source = app("""
        from mcp_fusion import service_unavailable

        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            if invoice_id:
                raise service_unavailable("down")
            raise McpError("SERVER_BUSY", "busy")
    """)
    assert lines(found(source, "FL200")) == [("FL200", "app.py", line(source, 'raise McpError("SERVER_BUSY"'))]


# ----- multi-code suppressions ----------------------------------------------------------------------------

NOQA_SOURCE = """
    @tool("get_invoice", errors=ENTRIES)
    async def get_invoice(invoice_id: str, ctx: Context):
        try:
            pass
        except KeyError as e:
            raise McpError(JsonRpcErrorCode.FORBIDDEN, "no")  {comment}
"""


@pytest.mark.parametrize(
    ("comment", "left"),
    [
        ("# noqa: FL200, FL302", ["FL301"]),
        ("# noqa: FL200,FL302,FL301", []),
        ("# noqa: FL200 FL302", ["FL301"]),
        ("# NOQA: fl200, preserve-cause-on-rethrow", ["FL301"]),
        ("# noqa: E501, FL200, FL302", ["FL301"]),
        ("# fusion-lint: ignore[FL200, FL302]", ["FL301"]),
        ("# noqa: FL200", ["FL301", "FL302"]),
    ],
)
def test_noqa_with_several_codes_suppresses_each(comment: str, left: list[str]) -> None:
    assert (
        sorted(code for code, *_ in found(app(NOQA_SOURCE.format(comment=comment)), "FL200", "FL301", "FL302")) == left
    )


# ----- src/ layouts ----------------------------------------------------------------------------------


def test_src_is_an_import_root() -> None:
    files = {
        "src/billing/errors.py": (
            "from mcp_fusion import ErrorContract, JsonRpcErrorCode\n"
            'ERRORS = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",\n'
            '                        recovery="Call get_invoice again with a real invoice id.")]\n'
        ),
        "src/billing/service.py": "from mcp_fusion import forbidden\ndef check():\n    raise forbidden('no')\n",
        "src/billing/tools.py": IMPORTS
        + (
            "from billing.errors import ERRORS\nfrom billing.service import check\n"
            '@tool("get_invoice", errors=ERRORS)\nasync def get_invoice(invoice_id: str, ctx: Context):\n'
            "    check()\n    raise ctx.fail('no_match')\n"
        ),
    }
    assert lines(found(files)) == [("FL200", "src/billing/service.py", 3)]


# ----- a file only libcst rejected -------------------------------------------------------------------------


@pytest.mark.parametrize("after", ["", "y = 2\n", "\n\ndef f():\n    pass\n"])
def test_a_file_only_libcst_rejected_is_linted(after: str) -> None:
    """``(x): int`` is valid Python libcst's parser rejects: read from CPython's tree, it is no FL000."""
    source = IMPORTS + "x = 1\n(x): int\n" + after
    assert found({"app.py": source}, "FL000") == []
