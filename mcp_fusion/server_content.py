"""What a resource or prompt handler returns, as the SDK's wire types (sanitised like a tool result).

Only ``FusionServer`` uses this module; it imports the SDK's types.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types as types

from .bounding import clean_text
from .definitions import Definition, ResourceDefinition, ToolDefinition
from .errors import code_name
from .wire import MALFORMED_REASON, ResultProblem, json_data


def resource_contents(uri: str, value: Any) -> list[Any]:
    if isinstance(value, (types.TextResourceContents, types.BlobResourceContents)):
        value = [value]
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(item, (types.TextResourceContents, types.BlobResourceContents)) for item in value)
    ):
        dumped, _ = json_data([item.model_dump(by_alias=True, mode="json", exclude_none=True) for item in value])
        return [_contents_model(item) for item in dumped]
    if isinstance(value, str):
        return [types.TextResourceContents(uri=uri, mime_type="text/plain", text=clean_text(value))]
    if isinstance(value, (bytes, bytearray)):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [types.BlobResourceContents(uri=uri, mime_type="application/octet-stream", blob=blob)]
    if hasattr(type(value), "model_fields") and callable(getattr(value, "model_dump", None)):
        value = value.model_dump(mode="json")
    _, text = json_data(value)
    return [types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]


def _contents_model(item: Mapping[str, Any]) -> Any:
    model = types.BlobResourceContents if "blob" in item else types.TextResourceContents
    return model.model_validate(item)


def prompt_messages(value: Any) -> list[types.PromptMessage]:
    if isinstance(value, types.GetPromptResult):
        value = list(value.messages)
    items = value if isinstance(value, (list, tuple)) else [value]
    messages = [_prompt_message(item) for item in items]
    dumped, _ = json_data([message.model_dump(by_alias=True, mode="json", exclude_none=True) for message in messages])
    return [types.PromptMessage.model_validate(message) for message in dumped]


def _prompt_message(item: Any) -> types.PromptMessage:
    if isinstance(item, types.PromptMessage):
        return item
    if isinstance(item, str):
        return types.PromptMessage(role="user", content=types.TextContent(type="text", text=item))
    if isinstance(item, Mapping):
        content = item.get("content", "")
        if isinstance(content, str):
            content = types.TextContent(type="text", text=content)
        return types.PromptMessage(role=item.get("role", "user"), content=content)
    raise ResultProblem(
        MALFORMED_REASON,
        f"is of type {type(item).__name__!r}; a prompt returns text, messages or dicts with role/content",
    )


def advertised_errors(definition: ToolDefinition[Any] | ResourceDefinition[Any]) -> list[dict[str, Any]]:
    """The declared reasons a client can plan around, as advertised in ``_meta``."""
    return [
        {"reason": entry.reason, "code": code_name(entry.code), "retryable": entry.retryable}
        for entry in definition.errors
    ]


def index_definitions(
    server: str, kind: str, definitions: Iterable[Any], expected: type[Definition[Any]]
) -> dict[str, Any]:
    indexed: dict[str, Any] = {}
    for definition in definitions:
        if not isinstance(definition, expected):
            raise TypeError(f"FusionServer {server!r}: {kind}s= takes objects made by @{kind}(...), got {definition!r}")
        if definition.name in indexed:
            raise ValueError(f"FusionServer {server!r}: two {kind}s are named {definition.name!r}")
        indexed[definition.name] = definition
    return indexed
