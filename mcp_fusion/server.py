"""Serving definitions over MCP with the official SDK's low-level ``Server`` (DESIGN §3.7).

The low-level server is used on purpose: the SDK's high-level ``MCPServer`` masks exception text
and renders its own errors, while the failure boundary must own every byte of a failed result.
This is the only module of the runtime that imports the SDK.
"""
from __future__ import annotations

import base64
import difflib
import json
import logging
import os
from typing import Any, Iterable, Mapping, Sequence

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from .boundary import UNEXPECTED_REASON, HandlerSuccess, Outcome, run_handler
from .definitions import Definition, PromptDefinition, ResourceDefinition, ToolDefinition
from .envelope import ENVELOPE_FORMATS, EnvelopeFormat, ToolErrorEnvelope
from .errors import JsonRpcErrorCode
from .lockfile import (
    Delta,
    build_lock,
    deltas_by_definition,
    diff_locks,
    load_lock,
    records_from_definitions,
)
from .validation import ValidationEnvelope

logger = logging.getLogger(__name__)

#: ``_meta`` key advertising a definition's declared failures in ``tools/list`` & co.
ERRORS_META_KEY = "fusion/errors"
#: ``_meta`` key of the structured mirror when ``structured_content`` belongs to the output schema.
ERROR_META_KEY = "fusion/error"
#: Default cap on the ``<contract_awareness>`` changes embedded in one failure (issue 11).
DEFAULT_AWARENESS_LIMIT = 5

Failure = ToolErrorEnvelope | ValidationEnvelope


class FusionServer:
    """Serve tools, resources and prompts declared with ``mcp_fusion`` over MCP.

    ``server.sdk_server`` is the SDK's ``Server`` (``mcp.Client(server.sdk_server)`` talks to it in
    memory); ``server.run()`` serves it on stdio. ``envelope="json"`` renders failures as the
    integrators' JSON text instead of XML (the structured mirror is the same). With
    ``contract_lock=path``, failures of a tool whose contract moved since the lockfile was written
    carry a ``<contract_awareness>`` section listing its BREAKING and RISKY deltas.
    """

    def __init__(
        self,
        name: str,
        tools: Sequence[ToolDefinition[Any]] = (),
        resources: Sequence[ResourceDefinition[Any]] = (),
        prompts: Sequence[PromptDefinition[Any]] = (),
        *,
        version: str = "",
        instructions: str | None = None,
        envelope: EnvelopeFormat = "xml",
        contract_lock: str | os.PathLike[str] | None = None,
        contract_awareness_limit: int = DEFAULT_AWARENESS_LIMIT,
    ) -> None:
        if envelope not in ENVELOPE_FORMATS:
            raise ValueError(f"envelope must be one of {ENVELOPE_FORMATS}, got {envelope!r}")
        if contract_awareness_limit < 0:
            raise ValueError("contract_awareness_limit must be >= 0")
        self.name = name
        self.envelope_format: EnvelopeFormat = envelope
        self.tools: dict[str, ToolDefinition[Any]] = _index(name, "tool", tools, ToolDefinition)
        self.resources: dict[str, ResourceDefinition[Any]] = _index(name, "resource", resources, ResourceDefinition)
        self.prompts: dict[str, PromptDefinition[Any]] = _index(name, "prompt", prompts, PromptDefinition)
        self.contract_awareness_limit = contract_awareness_limit
        self.contract_deltas: list[Delta] = self._compare_with_lock(contract_lock) if contract_lock else []
        self._awareness = deltas_by_definition(self.contract_deltas, impacts=("BREAKING", "RISKY"))

        handlers: dict[str, Any] = {"on_list_tools": self._list_tools, "on_call_tool": self._call_tool}
        if self.resources:
            handlers.update(
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_resource_templates,
                on_read_resource=self._read_resource,
            )
        if self.prompts:
            handlers.update(on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)
        self.sdk_server: Server[Any] = Server(name, version=version, instructions=instructions, **handlers)

    # -- running ------------------------------------------------------------------------------

    def run(self, transport: str = "stdio") -> None:
        """Serve until the client disconnects (blocking). Only stdio is built in."""
        if transport != "stdio":
            raise ValueError(f"unsupported transport {transport!r}; FusionServer.run() serves stdio")
        anyio.run(self.run_stdio_async)

    async def run_stdio_async(self) -> None:
        async with stdio_server() as (read_stream, write_stream):
            await self.sdk_server.run(read_stream, write_stream, self.sdk_server.create_initialization_options())

    # -- contract awareness (issue 11) ----------------------------------------------------------

    def _compare_with_lock(self, contract_lock: str | os.PathLike[str]) -> list[Delta]:
        if not os.path.exists(contract_lock):
            logger.info("no contract lockfile at %s; contract awareness is off", contract_lock)
            return []
        locked = load_lock(contract_lock)  # a corrupt lockfile is a deployment error: fail loudly
        live = build_lock(records_from_definitions(self.tools.values(), self.resources.values()))
        deltas = diff_locks(locked, live)
        moved = [delta for delta in deltas if delta.severity != "SAFE"]
        if moved:
            logger.warning(
                "%s: the contracts moved since %s: %s",
                self.name, contract_lock, "; ".join(delta.describe() for delta in moved),
            )
        return deltas

    def awareness_for(self, kind: str, name: str) -> list[Delta]:
        """The BREAKING and RISKY deltas of one definition, capped at ``contract_awareness_limit``."""
        return self._awareness.get((kind, name), [])[: self.contract_awareness_limit]

    def _with_awareness(self, kind: str, name: str, failure: Failure) -> Failure:
        # An unexpected exception is not a contract failure: the agent learns nothing from deltas there.
        if isinstance(failure, ToolErrorEnvelope) and failure.reason == UNEXPECTED_REASON:
            return failure
        deltas = self.awareness_for(kind, name)
        return failure.with_contract_awareness(deltas) if deltas else failure

    # -- tools --------------------------------------------------------------------------------

    def list_tool_models(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=definition.name,
                title=definition.title,
                description=definition.description,
                input_schema=definition.input_schema,
                output_schema=definition.output_schema,
                annotations=types.ToolAnnotations.model_validate(definition.annotations)
                if definition.annotations is not None
                else None,
                meta={ERRORS_META_KEY: advertised_errors(definition)},
            )
            for definition in self.tools.values()
        ]

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.list_tool_models())

    async def _call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        definition = self.tools.get(params.name)
        if definition is None:
            return self._failure_result(self._unknown_tool(params.name), has_output_schema=False)
        outcome = await run_handler(definition, params.arguments, ctx)
        return self._tool_result(definition, outcome)

    def _unknown_tool(self, name: str) -> ToolErrorEnvelope:
        names = list(self.tools)
        suggestions = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        return ToolErrorEnvelope(
            code=JsonRpcErrorCode.METHOD_NOT_FOUND,
            message=f"This server has no tool named {name!r}",
            recovery="Call one of the tools listed in available_actions instead; tool names are case-sensitive.",
            available_actions=tuple(suggestions or names[:10]),
            details={"reason": "unknown_tool"},
        )

    def _tool_result(self, definition: ToolDefinition[Any], outcome: Outcome) -> types.CallToolResult:
        has_output_schema = definition.output_schema is not None
        if not isinstance(outcome, HandlerSuccess):
            failure = self._with_awareness("tool", definition.name, outcome)
            return self._failure_result(failure, has_output_schema=has_output_schema)
        try:
            content, structured = _success_payload(definition, outcome)
        except Exception:
            return self._failure_result(_unserialisable(definition), has_output_schema=has_output_schema)
        if outcome.warning is None:
            return types.CallToolResult(content=content, structured_content=structured, is_error=False)
        # A warning is guidance on the success path: the envelope leads, the payload follows.
        warning = outcome.warning
        mirror = warning.to_structured()
        meta = None
        if structured is None and not has_output_schema:
            structured = mirror
        else:
            meta = {ERROR_META_KEY: mirror["error"]}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=warning.render(self.envelope_format)), *content],
            structured_content=structured,
            is_error=False,
            meta=meta,
        )

    def _failure_result(self, failure: Failure, *, has_output_schema: bool) -> types.CallToolResult:
        mirror = failure.to_structured()
        text = types.TextContent(type="text", text=failure.render(self.envelope_format))
        if has_output_schema:
            # structured_content is reserved for the output schema; the mirror travels in _meta.
            return types.CallToolResult(content=[text], is_error=failure.is_error, meta={ERROR_META_KEY: mirror["error"]})
        return types.CallToolResult(content=[text], structured_content=mirror, is_error=failure.is_error)

    # -- resources ----------------------------------------------------------------------------

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=definition.resource_name,
                    uri=definition.uri_template,
                    description=definition.description,
                    meta={ERRORS_META_KEY: advertised_errors(definition)},
                )
                for definition in self.resources.values()
                if not definition.is_template
            ]
        )

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    name=definition.resource_name,
                    uri_template=definition.uri_template,
                    description=definition.description,
                    meta={ERRORS_META_KEY: advertised_errors(definition)},
                )
                for definition in self.resources.values()
                if definition.is_template
            ]
        )

    def _match_resource(self, uri: str) -> tuple[ResourceDefinition[Any], dict[str, str]] | None:
        exact = self.resources.get(uri)
        if exact is not None and not exact.is_template:
            return exact, {}
        for definition in self.resources.values():
            variables = definition.match(uri) if definition.is_template else None
            if variables is not None:
                return definition, variables
        return None

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        matched = self._match_resource(uri)
        if matched is None:
            raise self._protocol_failure(
                ToolErrorEnvelope(
                    code=JsonRpcErrorCode.NOT_FOUND,
                    message=f"This server has no resource at {uri!r}",
                    recovery="List the resources and resource templates of this server, then read one of those URIs.",
                    details={"reason": "unknown_resource", "uri": uri},
                )
            )
        definition, variables = matched
        outcome = await run_handler(definition, variables, ctx)
        if not isinstance(outcome, HandlerSuccess):
            raise self._protocol_failure(self._with_awareness("resource", definition.name, outcome))
        try:
            contents = _resource_contents(uri, outcome.value)
        except Exception:
            raise self._protocol_failure(_unserialisable(definition)) from None
        return types.ReadResourceResult(contents=contents)

    def _protocol_failure(self, failure: Failure) -> MCPError:
        """A resource/prompt failure: the SDK only permits a JSON-RPC error there.

        Its message is the rendered envelope (what a client shows the model) and its data the
        structured mirror's error object, so both readings of a tool failure exist here too.
        """
        return MCPError(code=int(failure.code), message=failure.render(self.envelope_format), data=failure.to_structured()["error"])

    # -- prompts ------------------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompts = []
        for definition in self.prompts.values():
            schema = definition.signature.input_schema
            required = set(schema.get("required", ()))
            arguments = [
                types.PromptArgument(
                    name=argument,
                    description=schema.get("properties", {}).get(argument, {}).get("description"),
                    required=argument in required,
                )
                for argument in definition.signature.argument_names
            ]
            prompts.append(types.Prompt(name=definition.name, description=definition.description, arguments=arguments))
        return types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        definition = self.prompts.get(params.name)
        if definition is None:
            raise self._protocol_failure(
                ToolErrorEnvelope(
                    code=JsonRpcErrorCode.INVALID_PARAMS,
                    message=f"This server has no prompt named {params.name!r}",
                    recovery="List the prompts of this server, then request one of those names.",
                    available_actions=tuple(self.prompts)[:10],
                    details={"reason": "unknown_prompt"},
                )
            )
        outcome = await run_handler(definition, params.arguments, ctx)
        if not isinstance(outcome, HandlerSuccess):
            raise self._protocol_failure(outcome)
        try:
            messages = _prompt_messages(outcome.value)
        except Exception:
            raise self._protocol_failure(_unserialisable(definition)) from None
        return types.GetPromptResult(description=definition.description, messages=messages)


# -- helpers ----------------------------------------------------------------------------------


def _unserialisable(definition: Definition[Any]) -> ToolErrorEnvelope:
    """A handler returned something the wire cannot carry: a server bug, masked like any other."""
    logger.exception(
        "Error in %s:%s [SERIALIZATION_ERROR] the result could not be serialised", definition.kind, definition.name
    )
    return ToolErrorEnvelope(
        code=JsonRpcErrorCode.SERIALIZATION_ERROR,
        message=f"{definition.owner} produced a result that could not be serialised",
        recovery="Do not blindly retry: the same call will produce the same result. Try different arguments.",
        details={"reason": "unserialisable_result", "retryable": False},
    )


def advertised_errors(definition: ToolDefinition[Any] | ResourceDefinition[Any]) -> list[dict[str, Any]]:
    """The declared reasons a client can plan around, as advertised in ``_meta``."""
    return [
        {"reason": entry.reason, "code": entry.code.name, "retryable": entry.retryable}
        for entry in definition.errors
    ]


def _index(server: str, kind: str, definitions: Iterable[Any], expected: type) -> dict[str, Any]:
    indexed: dict[str, Any] = {}
    for definition in definitions:
        if not isinstance(definition, expected):
            raise TypeError(
                f"FusionServer {server!r}: {kind}s= takes objects made by @{kind}(...), got {definition!r}"
            )
        if definition.name in indexed:
            raise ValueError(f"FusionServer {server!r}: two {kind}s are named {definition.name!r}")
        indexed[definition.name] = definition
    return indexed


_CONTENT_TYPES = (types.TextContent, types.ImageContent, types.AudioContent, types.ResourceLink, types.EmbeddedResource)


def _success_payload(
    definition: ToolDefinition[Any], outcome: HandlerSuccess
) -> tuple[list[Any], dict[str, Any] | None]:
    """``(content, structured_content)`` of a handler's return value."""
    if not outcome.has_value or outcome.value is None:
        return [], None
    value = outcome.value
    adapter = definition.signature.output_adapter
    if adapter is not None:
        structured = adapter.dump_python(value, mode="json")
        return [_json_text(structured)], structured
    if isinstance(value, types.CallToolResult):
        return list(value.content), value.structured_content
    if isinstance(value, _CONTENT_TYPES):
        return [value], None
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, _CONTENT_TYPES) for item in value):
        return list(value), None
    if isinstance(value, str):
        return [types.TextContent(type="text", text=value)], None
    jsonable = value.model_dump(mode="json") if isinstance(value, BaseModel) else to_jsonable_python(value)
    structured = jsonable if isinstance(jsonable, dict) else None
    return [_json_text(jsonable)], structured


def _json_text(value: Any) -> types.TextContent:
    return types.TextContent(type="text", text=json.dumps(value, ensure_ascii=False, indent=2))


def _resource_contents(uri: str, value: Any) -> list[Any]:
    if isinstance(value, (types.TextResourceContents, types.BlobResourceContents)):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(
        isinstance(item, (types.TextResourceContents, types.BlobResourceContents)) for item in value
    ):
        return list(value)
    if isinstance(value, str):
        return [types.TextResourceContents(uri=uri, mime_type="text/plain", text=value)]
    if isinstance(value, (bytes, bytearray)):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [types.BlobResourceContents(uri=uri, mime_type="application/octet-stream", blob=blob)]
    jsonable = value.model_dump(mode="json") if isinstance(value, BaseModel) else to_jsonable_python(value)
    text = json.dumps(jsonable, ensure_ascii=False, indent=2)
    return [types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]


def _prompt_messages(value: Any) -> list[types.PromptMessage]:
    if isinstance(value, types.GetPromptResult):
        return list(value.messages)
    items = value if isinstance(value, (list, tuple)) else [value]
    return [_prompt_message(item) for item in items]


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
    raise TypeError(f"a prompt returns text, messages or dicts with role/content; got {type(item).__name__}")
