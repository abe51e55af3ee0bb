"""The conformance suite's server (``@modelcontextprotocol/conformance``'s "everything" scenarios) on mcp 2.x
``MCPServer``, every tool under ``@contract`` (DESIGN §13.4; issue 33).

    python tests/runtime/conformance_mcpserver.py PORT     # Streamable HTTP on 127.0.0.1:PORT/mcp

Written from the scenarios' own requirements (``conformance list``; each scenario's description names
the tool, resource or prompt and what it returns). The one failing tool fails the contract's way: a
declared reason, which reaches the client as an ``isError`` result whose first text block is the
envelope. logging/setLevel and resources/(un)subscribe have no MCPServer API yet: they are added
on its low-level server, as the SDK's own conformance server does.
"""

from __future__ import annotations

import asyncio
import json
import sys

from conformance_shared import (
    INTENTIONAL,
    MESSAGE,
    NO_CAPABILITY,
    PNG,
    WAV,
    log_three_steps,
    progress_three_steps,
)
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.types import (
    AudioContent,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, Field

from mcp_fusion import contract, fail
from mcp_fusion.integrations import mcpserver as fusion

app = MCPServer("fusion-conformance", version="1.0.0")
fusion.install(app)
subscriptions: set[str] = set()


@app.tool(description="Tests simple text content response")
@contract(errors=[])
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@app.tool(description="Tests image content response")
@contract(errors=[])
def test_image_content() -> list[ImageContent]:
    return [ImageContent(type="image", data=PNG, mime_type="image/png")]


@app.tool(description="Tests audio content response")
@contract(errors=[])
def test_audio_content() -> list[AudioContent]:
    return [AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


def _resource(uri: str, mime_type: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=TextResourceContents(uri=uri, mime_type=mime_type, text=text))


@app.tool(description="Tests embedded resource content response")
@contract(errors=[])
def test_embedded_resource() -> list[EmbeddedResource]:
    return [_resource("test://embedded-resource", "text/plain", "This is an embedded resource content.")]


@app.tool(description="Tests a response with text, image and resource content")
@contract(errors=[])
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    return [
        TextContent(type="text", text="Multiple content types test:"),
        ImageContent(type="image", data=PNG, mime_type="image/png"),
        _resource("test://mixed-content-resource", "application/json", json.dumps({"test": "data", "value": 123})),
    ]


@app.tool(description="Tests a tool that sends log messages while it runs")
@contract(errors=[])
async def test_tool_with_logging(ctx: Context) -> str:
    return await log_three_steps(ctx)


@app.tool(description="Tests a tool that reports progress")
@contract(errors=[])
async def test_tool_with_progress(ctx: Context) -> str:
    return await progress_three_steps(ctx)


@app.tool(description="Tests error reporting: always fails")
@contract(errors=[INTENTIONAL])
def test_error_handling() -> str:
    raise fail("intentional_error", MESSAGE)


@app.tool(description="Tests server-initiated sampling")
@contract(errors=[NO_CAPABILITY])
async def test_sampling(prompt: str, ctx: Context) -> str:
    capabilities = ctx.session.client_params.capabilities if ctx.session.client_params else None
    if capabilities is None or capabilities.sampling is None:
        raise fail("client_capability_missing", "This tool needs the client's sampling capability")
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    text = result.content.text if getattr(result.content, "type", None) == "text" else "No response"
    return f"LLM response: {text}"


class UserResponse(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


async def _elicit(ctx: Context, message: str, schema: type[BaseModel], label: str) -> str:
    capabilities = ctx.session.client_params.capabilities if ctx.session.client_params else None
    if capabilities is None or capabilities.elicitation is None:
        raise fail("client_capability_missing", "This tool needs the client's elicitation capability")
    result = await ctx.elicit(message=message, schema=schema)
    content = result.data.model_dump_json() if result.action == "accept" else "{}"
    return f"{label}: action={result.action}, content={content}"


@app.tool(description="Tests server-initiated elicitation")
@contract(errors=[NO_CAPABILITY])
async def test_elicitation(message: str, ctx: Context) -> str:
    return await _elicit(ctx, message, UserResponse, "User response")


class Defaults(BaseModel):
    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: str = Field(
        default="active", description="User status", json_schema_extra={"enum": ["active", "inactive", "pending"]}
    )
    verified: bool = Field(default=True, description="Verification status")


@app.tool(description="Tests elicitation with a default for every primitive type (SEP-1034)")
@contract(errors=[NO_CAPABILITY])
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    return await _elicit(ctx, "Please provide user information", Defaults, "Elicitation completed")


def _titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


class Enums(BaseModel):
    untitledSingle: str = Field(
        description="Untitled single-select", json_schema_extra={"enum": ["option1", "option2", "option3"]}
    )
    titledSingle: str = Field(
        description="Titled single-select",
        json_schema_extra={
            "oneOf": _titled(("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option"))
        },
    )
    legacyEnum: str = Field(
        description="Legacy titled enum",
        json_schema_extra={
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
    )
    untitledMulti: list[str] = Field(
        description="Untitled multi-select",
        json_schema_extra={"items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
    )
    titledMulti: list[str] = Field(
        description="Titled multi-select",
        json_schema_extra={
            "items": {
                "anyOf": _titled(("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice"))
            }
        },
    )


@app.tool(description="Tests elicitation with every enum schema form (SEP-1330)")
@contract(errors=[NO_CAPABILITY])
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    return await _elicit(ctx, "Please select values using different enum schema types", Enums, "Elicitation completed")


class Address(BaseModel):
    street: str
    city: str


@app.tool(name="json_schema_2020_12_tool", description="Tool with JSON Schema 2020-12 features")
@contract(errors=[])
def json_schema_2020_12_tool(name: str | None = None, address: Address | None = None) -> str:
    return "json_schema_2020_12_tool"


# SEP-1613: the listed input schema keeps $schema, $defs and additionalProperties. MCPServer has no
# public way to pass a schema of one's own; its tool table does (the SDK's conformance server does the same).
app._tool_manager._tools["json_schema_2020_12_tool"].parameters = {  # noqa: SLF001
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


@app.tool(description="Tests SSE polling: closes the stream mid-call (SEP-1699)")
@contract(errors=[])
async def test_reconnection(ctx: Context) -> str:
    await ctx.info("Before disconnect")
    close = getattr(ctx, "close_sse_stream", None)
    if close is not None:
        await close()
    await asyncio.sleep(0.2)
    await ctx.info("After reconnect")
    return "Reconnection test completed"


@app.resource("test://static-text", description="A static text resource", mime_type="text/plain")
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource("test://static-binary", description="A static binary resource", mime_type="image/png")
def static_binary() -> bytes:
    import base64

    return base64.b64decode(PNG)


@app.resource("test://template/{id}/data", description="A resource template", mime_type="application/json")
def template_data(id: str) -> str:  # noqa: A002 - the template's own parameter name
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@app.resource("test://watched-resource", description="A resource that can be subscribed to", mime_type="text/plain")
def watched() -> str:
    return "Watched resource content"


@app.prompt(description="A simple prompt without arguments")
def test_simple_prompt() -> list[UserMessage]:
    return [UserMessage(role="user", content=TextContent(type="text", text="This is a simple prompt for testing."))]


@app.prompt(description="A prompt with two arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
    text = f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
    return [UserMessage(role="user", content=TextContent(type="text", text=text))]


@app.prompt(description="A prompt embedding a resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:  # noqa: N803 - the scenario's name
    return [
        UserMessage(
            role="user", content=_resource(resourceUri, "text/plain", "Embedded resource content for testing.")
        ),
        UserMessage(role="user", content=TextContent(type="text", text="Please process the embedded resource above.")),
    ]


@app.prompt(description="A prompt with an image")
def test_prompt_with_image() -> list[UserMessage]:
    return [
        UserMessage(role="user", content=ImageContent(type="image", data=PNG, mime_type="image/png")),
        UserMessage(role="user", content=TextContent(type="text", text="Please analyze the image above.")),
    ]


@app.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
) -> Completion:
    values = [value for value in ("paris", "park", "party") if value.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


async def set_level(ctx: object, params: SetLevelRequestParams) -> EmptyResult:
    return EmptyResult()


async def subscribe(ctx: object, params: SubscribeRequestParams) -> EmptyResult:
    subscriptions.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(ctx: object, params: UnsubscribeRequestParams) -> EmptyResult:
    subscriptions.discard(str(params.uri))
    return EmptyResult()


lowlevel = app._lowlevel_server  # noqa: SLF001 - MCPServer has no public API for these three yet
lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


if __name__ == "__main__":
    app.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
