"""The conformance suite's server (``@modelcontextprotocol/conformance``'s "everything" scenarios) as a
``FusionServer`` (DESIGN §13.4; issue 33).

    python tests/runtime/conformance_fusion.py PORT     # Streamable HTTP on 127.0.0.1:PORT/mcp

The same scenarios as ``conformance_mcpserver.py``, declared with ``mcp_fusion``'s own ``@tool``,
``@resource`` and ``@prompt``; the failing tool fails with a declared reason. Completion,
logging/setLevel and resources/(un)subscribe are not part of ``FusionServer``'s API: they are added
on the SDK server it exposes (``server.sdk_server.add_request_handler``, the SDK's public way).
"""

from __future__ import annotations

import asyncio
import json
import sys

import mcp_types as types
from conformance_shared import (
    INTENTIONAL,
    MESSAGE,
    NO_CAPABILITY,
    PNG,
    WAV,
    log_three_steps,
    progress_three_steps,
)

from mcp_fusion import Context, FusionServer, prompt, resource, tool


def _embedded(uri: str, mime_type: str, text: str) -> types.EmbeddedResource:
    return types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)
    )


@tool("test_simple_text", description="Tests simple text content response")
def simple_text() -> str:
    return "This is a simple text response for testing."


@tool("test_image_content", description="Tests image content response")
def image_content() -> list[types.ImageContent]:
    return [types.ImageContent(type="image", data=PNG, mime_type="image/png")]


@tool("test_audio_content", description="Tests audio content response")
def audio_content() -> list[types.AudioContent]:
    return [types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


@tool("test_embedded_resource", description="Tests embedded resource content response")
def embedded_resource() -> list[types.EmbeddedResource]:
    return [_embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")]


@tool("test_multiple_content_types", description="Tests a response with text, image and resource content")
def multiple_content_types() -> list[types.TextContent | types.ImageContent | types.EmbeddedResource]:
    return [
        types.TextContent(type="text", text="Multiple content types test:"),
        types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        _embedded("test://mixed-content-resource", "application/json", json.dumps({"test": "data", "value": 123})),
    ]


@tool("test_tool_with_logging", description="Tests a tool that sends log messages while it runs")
async def tool_with_logging(ctx: Context) -> str:
    return await log_three_steps(ctx)


@tool("test_tool_with_progress", description="Tests a tool that reports progress")
async def tool_with_progress(ctx: Context) -> str:
    return await progress_three_steps(ctx)


@tool("test_error_handling", description="Tests error reporting: always fails", errors=[INTENTIONAL])
def error_handling(ctx: Context) -> str:
    raise ctx.fail("intentional_error", MESSAGE)


def _capable(ctx: Context, capability: str) -> None:
    params = ctx.session.client_params
    if params is None or getattr(params.capabilities, capability, None) is None:
        raise ctx.fail("client_capability_missing", f"This tool needs the client's {capability} capability")


@tool("test_sampling", description="Tests server-initiated sampling", errors=[NO_CAPABILITY])
async def sampling(prompt: str, ctx: Context) -> str:
    _capable(ctx, "sampling")
    result = await ctx.session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    text = result.content.text if getattr(result.content, "type", None) == "text" else "No response"
    return f"LLM response: {text}"


def _string(description: str, **more: object) -> dict[str, object]:
    return {"type": "string", "description": description, **more}


def _titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


SCHEMAS = {
    "user": {
        "type": "object",
        "properties": {"username": _string("User's response"), "email": _string("User's email address")},
        "required": ["username", "email"],
    },
    "defaults": {
        "type": "object",
        "properties": {
            "name": _string("User name", default="John Doe"),
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": _string("User status", enum=["active", "inactive", "pending"], default="active"),
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    },
    "enums": {
        "type": "object",
        "properties": {
            "untitledSingle": _string("Untitled single-select", enum=["option1", "option2", "option3"]),
            "titledSingle": _string(
                "Titled single-select",
                oneOf=_titled(("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")),
            ),
            "legacyEnum": _string(
                "Legacy titled enum",
                enum=["opt1", "opt2", "opt3"],
                enumNames=["Option One", "Option Two", "Option Three"],
            ),
            "untitledMulti": {
                "type": "array",
                "description": "Untitled multi-select",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Titled multi-select",
                "items": {
                    "anyOf": _titled(
                        ("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")
                    )
                },
            },
        },
        "required": ["untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"],
    },
}


async def _elicit(ctx: Context, message: str, schema: str, label: str) -> str:
    _capable(ctx, "elicitation")
    result = await ctx.session.elicit_form(message, SCHEMAS[schema], related_request_id=ctx.request_id)
    content = json.dumps(result.content or {}) if result.action == "accept" else "{}"
    return f"{label}: action={result.action}, content={content}"


@tool("test_elicitation", description="Tests server-initiated elicitation", errors=[NO_CAPABILITY])
async def elicitation(message: str, ctx: Context) -> str:
    return await _elicit(ctx, message, "user", "User response")


@tool(
    "test_elicitation_sep1034_defaults",
    description="Tests elicitation with a default for every primitive type (SEP-1034)",
    errors=[NO_CAPABILITY],
)
async def elicitation_defaults(ctx: Context) -> str:
    return await _elicit(ctx, "Please provide user information", "defaults", "Elicitation completed")


@tool(
    "test_elicitation_sep1330_enums",
    description="Tests elicitation with every enum schema form (SEP-1330)",
    errors=[NO_CAPABILITY],
)
async def elicitation_enums(ctx: Context) -> str:
    return await _elicit(
        ctx, "Please select values using different enum schema types", "enums", "Elicitation completed"
    )


@tool("test_reconnection", description="Tests SSE polling (SEP-1699)")
async def reconnection(ctx: Context) -> str:
    await ctx.info("Before disconnect")
    await asyncio.sleep(0.2)
    await ctx.info("After reconnect")
    return "Reconnection test completed"


@resource("test://static-text", name="static_text", description="A static text resource")
def static_text() -> types.TextResourceContents:
    return types.TextResourceContents(
        uri="test://static-text", mime_type="text/plain", text="This is the content of the static text resource."
    )


@resource("test://static-binary", name="static_binary", description="A static binary resource")
def static_binary() -> types.BlobResourceContents:
    return types.BlobResourceContents(uri="test://static-binary", mime_type="image/png", blob=PNG)


@resource("test://template/{id}/data", name="template_data", description="A resource template")
def template_data(id: str) -> types.TextResourceContents:  # noqa: A002 - the template's own parameter name
    text = json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})
    return types.TextResourceContents(uri=f"test://template/{id}/data", mime_type="application/json", text=text)


@resource("test://watched-resource", name="watched_resource", description="A resource that can be subscribed to")
def watched() -> str:
    return "Watched resource content"


def _user(content: object) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=content)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


@prompt("test_simple_prompt", description="A simple prompt without arguments")
def simple_prompt() -> list[types.PromptMessage]:
    return [_user(_text("This is a simple prompt for testing."))]


@prompt("test_prompt_with_arguments", description="A prompt with two arguments")
def prompt_with_arguments(arg1: str, arg2: str) -> list[types.PromptMessage]:
    return [_user(_text(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]


@prompt("test_prompt_with_embedded_resource", description="A prompt embedding a resource")
def prompt_with_embedded_resource(resourceUri: str) -> list[types.PromptMessage]:  # noqa: N803 - the scenario's name
    return [
        _user(_embedded(resourceUri, "text/plain", "Embedded resource content for testing.")),
        _user(_text("Please process the embedded resource above.")),
    ]


@prompt("test_prompt_with_image", description="A prompt with an image")
def prompt_with_image() -> list[types.PromptMessage]:
    return [
        _user(types.ImageContent(type="image", data=PNG, mime_type="image/png")),
        _user(_text("Please analyze the image above.")),
    ]


server = FusionServer(
    "fusion-conformance",
    tools=[
        simple_text,
        image_content,
        audio_content,
        embedded_resource,
        multiple_content_types,
        tool_with_logging,
        tool_with_progress,
        error_handling,
        sampling,
        elicitation,
        elicitation_defaults,
        elicitation_enums,
        reconnection,
    ],
    resources=[static_text, static_binary, template_data, watched],
    prompts=[simple_prompt, prompt_with_arguments, prompt_with_embedded_resource, prompt_with_image],
    version="1.0.0",
)
subscriptions: set[str] = set()


async def complete(ctx: object, params: types.CompleteRequestParams) -> types.CompleteResult:
    values = [value for value in ("paris", "park", "party") if value.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


async def set_level(ctx: object, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def subscribe(ctx: object, params: types.SubscribeRequestParams) -> types.EmptyResult:
    subscriptions.add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx: object, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    subscriptions.discard(str(params.uri))
    return types.EmptyResult()


sdk = server.sdk_server
sdk.add_request_handler("completion/complete", types.CompleteRequestParams, complete)
sdk.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
sdk.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
sdk.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
