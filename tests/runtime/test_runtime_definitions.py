"""Definitions (DESIGN §3.3): decorator and call forms, the injected Context, schemas."""

from __future__ import annotations

import asyncio
import inspect
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

import mcp_fusion as mf
from mcp_fusion import Context, PromptDefinition, ResourceDefinition, ToolDefinition, prompt, resource, tool


class Article(BaseModel):
    pmid: str
    title: str


class Articles(BaseModel):
    items: list[Article]


class SearchQuery(BaseModel):
    text: str = Field(min_length=2)
    limit: int = 10


def test_decorator_and_call_forms_make_the_same_definition() -> None:
    def fetch(pmids: list[str], ctx: Context) -> Articles:
        return Articles(items=[])

    decorated = tool("fetch_articles", description="Fetch articles")(fetch)

    @tool("fetch_articles", description="Fetch articles")
    def fetch_again(pmids: list[str], ctx: Context) -> Articles:
        return Articles(items=[])

    assert isinstance(decorated, ToolDefinition) and isinstance(fetch_again, ToolDefinition)
    assert decorated.input_schema == fetch_again.input_schema
    assert decorated.output_schema == fetch_again.output_schema
    assert decorated.description == "Fetch articles"


def test_the_handler_stays_callable_sync_and_async() -> None:
    @tool("add")
    def add(a: int, b: int) -> int:
        return a + b

    @tool("add_later")
    async def add_later(a: int, b: int) -> int:
        return a + b

    assert add(2, 3) == 5
    assert asyncio.run(add_later(2, b=3)) == 5
    assert add.handler.__name__ == "add" and add.__name__ == "add"
    assert add.signature.is_async is False and add_later.signature.is_async is True
    assert inspect.unwrap(add) is add.handler


def test_description_defaults_to_the_docstring() -> None:
    @tool("documented")
    def documented() -> str:
        """List every invoice.

        More detail.
        """
        return ""

    assert documented.description == "List every invoice.\n\nMore detail."


@pytest.mark.parametrize("parameter", ["ctx", "context", "request_context", "c"])
def test_context_is_found_by_annotation_under_any_name(parameter: str) -> None:
    namespace: dict = {"Context": Context}
    exec(f"def handler(query: str, {parameter}: Context) -> str:\n    return query", namespace)
    definition = tool("search")(namespace["handler"])
    assert definition.signature.context_parameter == parameter
    assert list(definition.input_schema["properties"]) == ["query"]
    assert definition.input_schema["required"] == ["query"]


def test_context_is_found_through_aliases_optional_and_unresolvable_strings() -> None:
    def aliased(q: str, ctx: mf.Context) -> str:  # a string under `from __future__ import annotations`
        return q

    def optional(q: str, ctx: Context | None = None) -> str:
        return q

    def unresolvable(q: str, ctx: vendored.Context) -> str:  # noqa: F821 - never imported on purpose
        return q

    for handler in (aliased, optional, unresolvable):
        definition = tool("t")(handler)
        assert definition.signature.context_parameter == "ctx", handler.__name__
        assert "ctx" not in definition.input_schema["properties"]


def test_a_model_named_like_context_is_an_argument() -> None:
    class SearchContext(BaseModel):
        region: str

    definition = tool("t")(lambda region: region)
    assert definition.signature.context_parameter is None
    assert SearchContext  # the name alone does not make a Context


def test_no_context_parameter_is_fine() -> None:
    @tool("ping")
    def ping() -> str:
        return "pong"

    assert ping.signature.context_parameter is None
    assert ping.input_schema["properties"] == {}
    assert ping.input_schema["type"] == "object"


def test_two_context_parameters_are_rejected() -> None:
    def two(a: Context, b: Context) -> None: ...

    with pytest.raises(TypeError, match=r"tool 't': parameters 'a' and 'b' are both annotated Context"):
        tool("t")(two)


def test_variadic_parameters_are_rejected() -> None:
    def variadic(*pmids: str) -> None: ...

    with pytest.raises(TypeError, match=r"tool 't': parameter 'pmids' is variadic"):
        tool("t")(variadic)


def test_input_schema_from_plain_params_and_pydantic_models() -> None:
    @tool("search_articles")
    def search(
        query: SearchQuery, pmids: Annotated[list[str], Field(max_length=5)], ctx: Context, page: int = 1
    ) -> Articles:
        return Articles(items=[])

    schema = search.input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"query", "pmids", "page"}
    assert schema["required"] == ["query", "pmids"]
    assert schema["properties"]["pmids"] == {
        "items": {"type": "string"},
        "maxItems": 5,
        "title": "Pmids",
        "type": "array",
    }
    assert schema["properties"]["page"]["default"] == 1
    assert schema["properties"]["query"] == {"$ref": "#/$defs/SearchQuery"}
    assert schema["$defs"]["SearchQuery"]["properties"]["text"]["minLength"] == 2
    validated = search.signature.arguments_model.model_validate({"query": {"text": "egfr"}, "pmids": ["1"]})
    args, kwargs = search.signature.call_arguments(validated)
    assert args == [] and kwargs["query"] == SearchQuery(text="egfr") and kwargs["page"] == 1


def test_output_schema_only_for_structured_returns() -> None:
    @tool("structured")
    def structured() -> Articles:
        return Articles(items=[])

    @tool("plain")
    def plain() -> str:
        return ""

    assert structured.output_schema is not None
    assert structured.output_schema["properties"]["items"]["type"] == "array"
    assert plain.output_schema is None


def test_parameters_named_like_model_attributes_still_work() -> None:
    @tool("odd_names")
    def odd_names(json: str, schema: int = 1) -> str:
        return json * schema

    assert set(odd_names.input_schema["properties"]) == {"json", "schema"}
    validated = odd_names.signature.arguments_model.model_validate({"json": "ab", "schema": 2})
    args, kwargs = odd_names.signature.call_arguments(validated)
    assert odd_names(*args, **kwargs) == "abab"


def test_an_unresolvable_argument_annotation_names_the_parameter() -> None:
    def handler(pmids: NoSuchType) -> None:  # noqa: F821
        ...

    with pytest.raises(TypeError, match=r"tool 't': cannot resolve the annotation 'NoSuchType' of parameter 'pmids'"):
        tool("t")(handler)


def test_tool_requires_a_name() -> None:
    with pytest.raises(TypeError, match=r"@tool needs a name"):
        tool(lambda: None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"non-empty string"):
        tool("  ")


def test_annotations_accept_dicts_and_sdk_models() -> None:
    from mcp_types import ToolAnnotations

    as_dict = tool("a", annotations={"readOnlyHint": True})(lambda: None)
    as_model = tool("b", annotations=ToolAnnotations(read_only_hint=True))(lambda: None)
    assert as_dict.annotations == as_model.annotations == {"readOnlyHint": True}
    with pytest.raises(TypeError, match=r"tool 'c': annotations= must be a dict"):
        tool("c", annotations=["readOnly"])


def test_resource_template_variables_are_parameters() -> None:
    @resource("billing://invoices/{invoice_id}", description="One invoice")
    def invoice(invoice_id: str, ctx: Context) -> dict:
        return {"id": invoice_id}

    assert isinstance(invoice, ResourceDefinition)
    assert invoice.resource_name == "invoice" and invoice.is_template
    assert invoice.match("billing://invoices/inv_1") == {"invoice_id": "inv_1"}
    assert invoice.match("billing://invoices/a/b") is None
    assert invoice.match("billing://customers/inv_1") is None

    with pytest.raises(
        TypeError, match=r"resource 'billing://invoices/\{invoice_id\}': template variables \['invoice_id'\]"
    ):
        resource("billing://invoices/{invoice_id}")(lambda: None)
    with pytest.raises(TypeError, match=r"handler parameters \['limit'\] are required but not template variables"):
        resource("billing://invoices")(lambda limit: None)


def test_static_resource_and_prompt() -> None:
    @resource("billing://currencies", name="currencies")
    def currencies() -> list[str]:
        return ["EUR"]

    @prompt("summarize", description="Summarize a topic")
    def summarize(topic: str) -> str:
        return f"Summarize {topic}"

    assert not currencies.is_template and currencies.match("billing://currencies") == {}
    assert isinstance(summarize, PromptDefinition)
    assert summarize("x") == "Summarize x"
    assert not hasattr(summarize, "errors")
