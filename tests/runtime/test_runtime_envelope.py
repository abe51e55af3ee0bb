"""The <tool_error> envelope, its mirror and the builder, without a server (DESIGN §3.5)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pytest

from mcp_fusion import JsonRpcErrorCode, McpError, rate_limited, tool_error
from mcp_fusion.envelope import ToolErrorEnvelope, escape_attribute, escape_text

DESIGN_SAMPLE = """\
<tool_error code="NOT_FOUND" severity="error">
  <message>No invoice with that ID</message>
  <recovery>List invoices first, then retry with a real ID</recovery>
  <available_actions>
    <action>billing_list_invoices</action>
  </available_actions>
  <details>
    <detail key="requestedId">inv_2026_9999</detail>
  </details>
  <retry_after>30 seconds</retry_after>
</tool_error>"""


def test_builder_renders_the_design_sample_exactly() -> None:
    built = (
        tool_error(JsonRpcErrorCode.NOT_FOUND, "No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions("billing_list_invoices")
        .details(requestedId="inv_2026_9999")
        .retry_after(30)
    )
    assert built.envelope().to_xml() == DESIGN_SAMPLE


def test_optional_sections_appear_only_when_set() -> None:
    assert tool_error("CONFLICT", "Invoice already paid").envelope().to_xml() == (
        '<tool_error code="CONFLICT" severity="error">\n  <message>Invoice already paid</message>\n</tool_error>'
    )


def test_text_escapes_only_ampersand_and_less_than() -> None:
    assert escape_text("""a & b < c > d "e" 'f'""") == """a &amp; b &lt; c > d "e" 'f'"""


def test_attributes_escape_all_five() -> None:
    assert escape_attribute("""a & b < c > d "e" 'f'""") == "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;"


def test_escaping_in_a_rendered_envelope_and_it_still_parses() -> None:
    xml = (
        tool_error("NOT_FOUND", 'No <invoice> & no "quote" > here')
        .details({"key\"<>&'": "v < & > ]]> end"})
        .envelope()
        .to_xml()
    )
    assert '<message>No &lt;invoice> &amp; no "quote" > here</message>' in xml
    assert '<detail key="key&quot;&lt;&gt;&amp;&apos;">v &lt; &amp; > ]]&gt; end</detail>' in xml
    root = ElementTree.fromstring(xml)
    assert root.find("message").text == 'No <invoice> & no "quote" > here'
    assert root.find("details/detail").get("key") == "key\"<>&'"
    assert root.find("details/detail").text == "v < & > ]]> end"


def test_characters_xml_cannot_carry_are_replaced_so_the_envelope_stays_parseable() -> None:
    xml = tool_error("NOT_FOUND", "nul\x00 and bell\x07").envelope().to_xml()
    assert ElementTree.fromstring(xml).find("message").text == "nul\ufffd and bell\ufffd"


def test_mcp_error_envelope_reason_leads_the_details_and_sections_are_lifted() -> None:
    error = McpError(
        JsonRpcErrorCode.NOT_FOUND,
        "No invoice with that ID",
        {
            "requestedId": "inv_9",
            "available_actions": ["billing_list_invoices"],
            "recovery": {"hint": "List invoices first"},
            "retryable": False,
            "reason": "invoice_missing",
        },
    )
    envelope = ToolErrorEnvelope.from_mcp_error(error)
    assert envelope.to_xml() == (
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "  <message>No invoice with that ID</message>\n"
        "  <recovery>List invoices first</recovery>\n"
        "  <available_actions>\n"
        "    <action>billing_list_invoices</action>\n"
        "  </available_actions>\n"
        "  <details>\n"
        '    <detail key="reason">invoice_missing</detail>\n'
        '    <detail key="requestedId">inv_9</detail>\n'
        '    <detail key="retryable">false</detail>\n'
        "  </details>\n"
        "</tool_error>"
    )
    assert envelope.to_structured() == {
        "error": {
            "code": -32001,
            "code_name": "NOT_FOUND",
            "message": "No invoice with that ID",
            "data": {
                "reason": "invoice_missing",
                "requestedId": "inv_9",
                "retryable": False,
                "recovery": {"hint": "List invoices first"},
                "available_actions": ["billing_list_invoices"],
            },
        }
    }


def test_rate_limited_carries_retry_after_in_seconds() -> None:
    envelope = ToolErrorEnvelope.from_mcp_error(rate_limited("Slow down", {"retry_after": 1, "reason": "too_fast"}))
    assert "  <retry_after>1 second</retry_after>\n" in envelope.to_xml()
    assert envelope.to_structured()["error"]["data"]["retry_after"] == 1
    assert (
        "<retry_after>2.5 seconds</retry_after>" in tool_error("RATE_LIMITED", "x").retry_after(2.5).envelope().to_xml()
    )


def test_severity_warning_and_critical() -> None:
    warning = tool_error("VALIDATION_ERROR", "Parameter 'limit' is deprecated").severity("warning").envelope()
    critical = tool_error("DATABASE_ERROR", "Ledger corrupted").severity("critical").envelope()
    assert warning.is_error is False and critical.is_error is True
    assert warning.to_xml().startswith('<tool_error code="VALIDATION_ERROR" severity="warning">')
    assert critical.to_xml().startswith('<tool_error code="DATABASE_ERROR" severity="critical">')
    assert warning.to_structured()["error"]["data"]["severity"] == "warning"
    assert "severity" not in tool_error("NOT_FOUND", "x").envelope().to_structured()["error"]["data"]


def test_an_mcp_error_can_be_critical() -> None:
    envelope = ToolErrorEnvelope.from_mcp_error(
        McpError(JsonRpcErrorCode.DATABASE_ERROR, "x", {"severity": "critical"})
    )
    assert envelope.severity == "critical" and "severity" not in envelope.details


def test_builder_is_raisable_and_fluent() -> None:
    built = tool_error("NOT_FOUND", "gone")
    assert built.suggest("Call list_invoices first.") is built
    with pytest.raises(type(built)) as caught:
        raise built
    assert str(caught.value) == "gone"
    assert built.actions(["a", "b"], "c").envelope().available_actions == ("a", "b", "c")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda b: b.severity("fatal"), "severity must be one of"),
        (lambda b: b.retry_after(-1), "non-negative number of seconds"),
        (lambda b: b.details(recovery="x"), "'recovery' cannot be a detail"),
    ],
)
def test_builder_rejects_bad_input(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(tool_error("NOT_FOUND", "x"))


def test_builder_code_spellings() -> None:
    assert tool_error(-32001, "x").code is tool_error("NOT_FOUND", "x").code is JsonRpcErrorCode.NOT_FOUND
    assert tool_error("NOPE", "x").code == "NOPE"  # a custom UPPER_SNAKE_CASE code
    with pytest.raises(ValueError, match="'nope' is not an error code"):
        tool_error("nope", "x")


def test_builder_details_never_carry_credentials() -> None:
    built = tool_error("FORBIDDEN", "x").details(auth="token", password="p", user="ada", nested={"session": "s"})
    assert built.envelope().details == {"user": "ada", "nested": {}}


def test_details_echoing_caller_values_are_bounded() -> None:
    envelope = ToolErrorEnvelope.from_mcp_error(McpError(JsonRpcErrorCode.NOT_FOUND, "x", {"query": "q" * 3000}))
    assert envelope.details["query"].endswith("… [truncated from 3000 characters]")


def test_json_text_envelope_for_integrators() -> None:
    envelope = ToolErrorEnvelope.from_mcp_error(
        McpError(
            JsonRpcErrorCode.NOT_FOUND, "No invoice", {"reason": "invoice_missing", "recovery": {"hint": "List them"}}
        )
    )
    assert json.loads(envelope.to_json_text()) == {
        "error": True,
        "type": "NotFoundError",
        "code": "NOT_FOUND",
        "message": "No invoice",
        "reason": "invoice_missing",
        "recovery": "List them",
    }


@pytest.mark.parametrize(
    "code, type_name",
    [
        ("FORBIDDEN", "PermissionError"),
        ("NOT_FOUND", "NotFoundError"),
        ("CONFLICT", "ConflictError"),
        ("VALIDATION_ERROR", "ValidationError"),
        ("INVALID_PARAMS", "ValidationError"),
        ("UNAUTHORIZED", "Error"),
        ("INTERNAL_ERROR", "Error"),
    ],
)
def test_json_envelope_type_by_code(code: str, type_name: str) -> None:
    assert json.loads(tool_error(code, "x").envelope().to_json_text())["type"] == type_name
