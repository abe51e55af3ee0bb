"""Self-healing validation errors, phrased per pydantic error type (DESIGN §3.6)."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from mcp_fusion import tool
from mcp_fusion.validation import VALIDATION_RECOVERY, validation_envelope


class Line(BaseModel):
    sku: str
    quantity: Annotated[int, Field(gt=0)]


@tool("create_invoice")
def create_invoice(
    customer_id: Annotated[str, Field(min_length=4, max_length=12, pattern=r"^cus_")],
    lines: Annotated[list[Line], Field(min_length=1)],
    currency: Literal["EUR", "USD"] = "EUR",
    pmids: list[str] | None = None,
    amount: float | int | None = None,
) -> None: ...


def problems(arguments: dict) -> dict[str, str]:
    with pytest.raises(ValidationError) as caught:
        create_invoice.signature.arguments_model.model_validate(arguments)
    envelope = validation_envelope("create_invoice", caught.value, create_invoice.input_schema)
    return {problem.name: problem.problem for problem in envelope.fields}


VALID = {"customer_id": "cus_1", "lines": [{"sku": "A", "quantity": 1}]}


def test_design_sample_shape() -> None:
    @tool("fetch_articles")
    def fetch_articles(pmids: list[str]) -> None: ...

    with pytest.raises(ValidationError) as caught:
        fetch_articles.signature.arguments_model.model_validate({"pmids": "abc"})
    assert validation_envelope("fetch_articles", caught.value, fetch_articles.input_schema).to_xml() == (
        '<validation_error action="fetch_articles" code="INVALID_PARAMS" reason="invalid_arguments">\n'
        "  <field name=\"pmids\">Expected a list of strings. You sent: 'abc'.</field>\n"
        "  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n"
        "</validation_error>"
    )


@pytest.mark.parametrize(
    "arguments, field, problem",
    [
        ({"lines": VALID["lines"]}, "customer_id", "Missing required field: expected a string. You sent nothing."),
        (
            {**VALID, "customer_id": "cu"},
            "customer_id",
            "Expected a string of at least 4 characters. You sent: 'cu' (2 characters).",
        ),
        (
            {**VALID, "customer_id": "cus_" + "x" * 20},
            "customer_id",
            "Expected a string of at most 12 characters. You sent: 'cus_xxxxxxxxxxxxxxxxxxxx' (24 characters).",
        ),
        (
            {**VALID, "customer_id": "abcd1"},
            "customer_id",
            "Expected a string matching the pattern '^cus_'. You sent: 'abcd1'.",
        ),
        ({**VALID, "customer_id": 1234}, "customer_id", "Expected a string. You sent: 1234."),
        ({**VALID, "lines": []}, "lines", "Expected at least 1 item. You sent 0 items."),
        ({**VALID, "lines": {"sku": "A"}}, "lines", 'Expected a list of objects. You sent: {"sku": "A"}.'),
        (
            {**VALID, "lines": [{"sku": "A", "quantity": 0}]},
            "lines[0].quantity",
            "Expected a number greater than 0. You sent: 0.",
        ),
        (
            {**VALID, "lines": [{"sku": "A", "quantity": "many"}]},
            "lines[0].quantity",
            "Expected an integer. You sent: 'many'.",
        ),
        (
            {**VALID, "lines": [{"quantity": 1}]},
            "lines[0].sku",
            "Missing required field: expected a string. You sent nothing.",
        ),
        ({**VALID, "currency": "GBP"}, "currency", "Expected 'EUR' or 'USD'. You sent: 'GBP'."),
        ({**VALID, "pmids": [1]}, "pmids[0]", "Expected a string. You sent: 1."),
        ({**VALID, "amount": "lots"}, "amount", "Expected a number or an integer or null. You sent: 'lots'."),
        (
            {**VALID, "customr": "x"},
            "customr",
            "Unknown field; accepted fields are: amount, currency, customer_id, lines, pmids. You sent: 'x'.",
        ),
    ],
)
def test_one_phrase_per_error_type(arguments: dict, field: str, problem: str) -> None:
    found = problems(arguments)
    assert found[field] == problem


def test_one_field_element_per_problem() -> None:
    found = problems({"customer_id": "x", "lines": [], "extra": 1})
    assert list(found) == ["customer_id", "lines", "extra"]


def test_what_was_sent_is_bounded() -> None:
    found = problems({**VALID, "customer_id": "c" * 5000})
    assert "… [truncated from 5000 characters]" in found["customer_id"]
    assert len(found["customer_id"]) < 1200


def test_mirror_and_recovery_line() -> None:
    with pytest.raises(ValidationError) as caught:
        create_invoice.signature.arguments_model.model_validate({})
    envelope = validation_envelope("create_invoice", caught.value, create_invoice.input_schema)
    mirror = envelope.to_structured()["error"]
    assert mirror["code"] == -32602
    assert mirror["data"]["reason"] == "invalid_arguments"
    assert mirror["data"]["recovery"] == {"hint": VALIDATION_RECOVERY}
    assert [field["name"] for field in mirror["data"]["fields"]] == ["customer_id", "lines"]
