"""Serving definitions over MCP with the official SDK's low-level ``Server`` (DESIGN §3.7).

The low-level server is used on purpose: the SDK's high-level ``MCPServer`` masks exception text
and renders its own errors, while the failure boundary must own every byte of a failed result.
This module and ``server_content`` are the only ones of the runtime that import the SDK.

The wire stays spec-clean (DESIGN §3.5): a tool's failure is always a ``CallToolResult``; a
JSON-RPC error is sent only for protocol conditions, with ``-32602`` (an unknown tool, resource
or prompt; invalid prompt arguments; a missing resource) or ``-32603`` (any other resource or
prompt failure), the envelope in its ``data``.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from .boundary import UNEXPECTED_REASON, Failure, HandlerSuccess, is_fatal, log_failure, run_handler, unexpected_failure
from .bounding import bound_text
from .definitions import Definition, PromptDefinition, ResourceDefinition, ToolDefinition
from .envelope import ENVELOPE_FORMATS, ERROR_META_KEY, EnvelopeFormat, ToolErrorEnvelope
from .errors import JsonRpcErrorCode
from .lockfile import Delta, build_lock, deltas_by_definition, diff_locks, load_lock, records_from_definitions
from .server_content import advertised_errors, index_definitions, prompt_messages, resource_contents
from .stdio import fusion_stdio_server
from .wire import (
    DEFAULT_MAX_RESULT_CHARS,
    INVALID_PARAMS,
    ResultProblem,
    ToolResultParts,
    protocol_error,
    result_failure,
    tool_result,
)

logger = logging.getLogger(__name__)

#: ``_meta`` key advertising a definition's declared failures in ``tools/list`` & co.
ERRORS_META_KEY = "fusion/errors"
__all__ = ["ERRORS_META_KEY", "ERROR_META_KEY", "FusionServer"]
#: Default cap on the ``<contract_awareness>`` changes embedded in one failure (issue 11).
DEFAULT_AWARENESS_LIMIT = 5

Transport = Literal["stdio", "streamable-http"]
#: ``lifespan=``: an async context manager, or a factory of one called with the ``FusionServer`` or
#: with nothing (a factory is entered once per connection in memory, an instance only once).
Lifespan = Any


class FusionServer:
    """Serve tools, resources and prompts declared with ``mcp_fusion`` over MCP.

    ``server.sdk_server`` is the SDK's ``Server`` (``mcp.Client(server.sdk_server)`` talks to it in
    memory); ``server.run()`` serves it on stdio, ``server.run(transport="streamable-http")`` over
    HTTP, and ``server.asgi_app()`` is the ASGI app for an ASGI server of your own.
    ``lifespan=`` is an async context manager, or a factory of one (``@asynccontextmanager async def
    lifespan(server): yield pool``), whose value handlers reach as ``ctx.lifespan``.
    ``envelope="json"`` renders failures as the integrators' JSON text instead of XML (the
    structured mirror is the same). With ``contract_lock=path``, failures of a tool whose contract
    moved since the lockfile was written carry a ``<contract_awareness>`` section listing its
    BREAKING and RISKY deltas. A result over ``max_result_chars`` characters of JSON (``None``: no
    limit) is refused with a ``SERIALIZATION_ERROR`` envelope. ``tool_failure_meta=True`` adds the draft
    ``_meta["io.modelcontextprotocol/toolFailure"]`` (MCP PRs #3312/#3313, under review) to every failure.
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
        lifespan: Lifespan | None = None,
        contract_lock: str | os.PathLike[str] | None = None,
        contract_awareness_limit: int = DEFAULT_AWARENESS_LIMIT,
        max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
        tool_failure_meta: bool = False,
    ) -> None:
        if envelope not in ENVELOPE_FORMATS:
            raise ValueError(f"envelope must be one of {ENVELOPE_FORMATS}, got {envelope!r}")
        if contract_awareness_limit < 0:
            raise ValueError("contract_awareness_limit must be >= 0")
        if lifespan is not None and not callable(lifespan) and not hasattr(lifespan, "__aenter__"):
            raise TypeError(
                "lifespan= takes an async context manager (or a factory of one, such as an @asynccontextmanager "
                f"function), got {type(lifespan).__name__}"
            )
        self.name = name
        self.envelope_format: EnvelopeFormat = envelope
        self.max_result_chars = max_result_chars
        self.tool_failure_meta = tool_failure_meta
        self.tools: dict[str, ToolDefinition[Any]] = index_definitions(name, "tool", tools, ToolDefinition)
        self.resources: dict[str, ResourceDefinition[Any]] = index_definitions(
            name, "resource", resources, ResourceDefinition
        )
        self.prompts: dict[str, PromptDefinition[Any]] = index_definitions(name, "prompt", prompts, PromptDefinition)
        self.contract_awareness_limit = contract_awareness_limit
        self.contract_deltas: list[Delta] = self._compare_with_lock(contract_lock) if contract_lock else []
        self._awareness = deltas_by_definition(self.contract_deltas, impacts=("BREAKING", "RISKY"))
        self._lifespan = lifespan

        handlers: dict[str, Any] = {"on_list_tools": self._list_tools, "on_call_tool": self._call_tool}
        if self.resources:
            handlers.update(
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_resource_templates,
                on_read_resource=self._read_resource,
            )
        if self.prompts:
            handlers.update(on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)
        self.sdk_server: Server[Any] = Server(
            name, version=version, instructions=instructions, lifespan=self._sdk_lifespan, **handlers
        )

    # -- running ------------------------------------------------------------------------------

    def run(
        self,
        transport: Transport = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        **http_options: Any,
    ) -> None:
        """Serve until the client disconnects (stdio) or the process is stopped (HTTP). Blocking.

        ``transport="streamable-http"`` serves the SDK's Streamable HTTP transport on
        ``http://host:port/path``; ``http_options`` go to :meth:`asgi_app`. Ctrl-C stops the
        server cleanly (no traceback).
        """
        if transport == "stdio":
            if http_options:
                raise TypeError(f"stdio takes no HTTP options, got {sorted(http_options)}")
            runner: Callable[[], Any] = self.run_stdio_async
        elif transport == "streamable-http":

            def runner() -> Any:
                return self.run_http_async(host=host, port=port, path=path, **http_options)
        else:
            raise ValueError(f"unsupported transport {transport!r}; use 'stdio' or 'streamable-http'")
        try:
            anyio.run(runner)
        except (KeyboardInterrupt, asyncio.CancelledError):
            # Ctrl-C cancels the main task; below Python 3.11 that surfaces as its CancelledError.
            logger.info("%s: stopped (Ctrl-C)", self.name)

    async def run_stdio_async(self) -> None:
        async with fusion_stdio_server() as (read_stream, write_stream):
            await self.sdk_server.run(read_stream, write_stream, self.sdk_server.create_initialization_options())

    async def run_http_async(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        log_level: str = "info",
        **options: Any,
    ) -> None:
        """Serve Streamable HTTP with uvicorn until cancelled."""
        import uvicorn

        app = self.asgi_app(path=path, host=host, **options)
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level)
        await uvicorn.Server(config).serve()

    def asgi_app(self, *, path: str = "/mcp", **options: Any) -> Any:
        """The Streamable HTTP ASGI app (Starlette) serving this server at ``path``.

        ``options`` go to the SDK's ``Server.streamable_http_app`` (``json_response``,
        ``stateless_http``, ``host`` for DNS-rebinding protection, ``transport_security``, auth...).
        Mount it in your own ASGI server; its lifespan runs the session manager and ``lifespan=``.
        """
        return self.sdk_server.streamable_http_app(streamable_http_path=path, **options)

    @asynccontextmanager
    async def _sdk_lifespan(self, _server: Server[Any]) -> AsyncIterator[Any]:
        if self._lifespan is None:
            yield None
            return
        if hasattr(self._lifespan, "__aenter__"):  # an instance: entered once per run (a factory is re-entrant)
            manager = self._lifespan
        else:
            manager = self._lifespan(self) if _accepts_an_argument(self._lifespan) else self._lifespan()
        async with manager as value:
            yield value

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
                self.name,
                contract_lock,
                "; ".join(delta.describe() for delta in moved),
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

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        definition = self.tools.get(params.name)
        if definition is None:
            raise self._unknown("tool", params.name, list(self.tools), "Call one of the tools this server lists.")
        outcome = await run_handler(definition, params.arguments, ctx)
        if not isinstance(outcome, HandlerSuccess):
            outcome = self._with_awareness("tool", definition.name, outcome)
        parts = tool_result(
            definition,
            outcome,
            envelope_format=self.envelope_format,
            output_adapter=definition.signature.output_adapter,
            has_output_schema=definition.output_schema is not None,
            max_chars=self.max_result_chars,
            tool_failure_meta=self.tool_failure_meta,
        )
        return sdk_result(parts)

    def _unknown(self, kind: str, name: str, names: list[str], recovery: str) -> MCPError:
        """The spec's ``-32602 "Unknown tool: <name>"`` (and its resource/prompt siblings)."""
        shown = bound_text(name, 256)  # a 5 MB name is echoed like any other caller value
        suggestions = difflib.get_close_matches(shown, names, n=3, cutoff=0.5) or names[:10]
        failure = ToolErrorEnvelope(
            code=JsonRpcErrorCode.INVALID_PARAMS,
            message=f"This server has no {kind} named {shown!r}",
            recovery=f"{recovery} Names are case-sensitive.",
            available_actions=tuple(suggestions) if kind == "tool" else (),
            details={"reason": f"unknown_{kind}", kind if kind != "resource" else "uri": shown},
        )
        code, _, data = protocol_error(failure, self.envelope_format, code=INVALID_PARAMS)
        if kind != "tool":
            data["available"] = suggestions
        return MCPError(code=code, message=f"Unknown {kind}: {shown}"[:2048], data=data)

    def _protocol_failure(self, failure: Failure) -> MCPError:
        """A resource/prompt failure: a JSON-RPC error (the SDK permits nothing else there)."""
        code, message, data = protocol_error(failure, self.envelope_format)
        return MCPError(code=code, message=message, data=data)

    def _render(self, definition: Definition[Any], render: Callable[[], Any]) -> Any:
        """Turn a resource's/prompt's successful value into wire types, or raise its protocol error."""
        try:
            return render()
        except ResultProblem as problem:
            raise self._protocol_failure(result_failure(definition, problem)) from None
        except BaseException as exc:  # noqa: BLE001 - a value's own code may raise anything
            if is_fatal(exc):
                raise
            failure = unexpected_failure(definition)
            log_failure(
                definition,
                logging.ERROR,
                failure.code_name,
                failure.reason,
                "the result could not be rendered",
                None,
                exc=exc,
            )
            raise self._protocol_failure(failure) from None

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
            raise self._unknown(
                "resource",
                uri,
                [d.uri_template for d in self.resources.values()],
                "List the resources and resource templates of this server, then read one of those URIs.",
            )
        definition, variables = matched
        outcome = await run_handler(definition, variables, ctx)
        if not isinstance(outcome, HandlerSuccess):
            raise self._protocol_failure(self._with_awareness("resource", definition.name, outcome))
        contents = self._render(definition, lambda: resource_contents(uri, outcome.value))
        return types.ReadResourceResult(contents=contents)

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

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        definition = self.prompts.get(params.name)
        if definition is None:
            raise self._unknown(
                "prompt",
                params.name,
                list(self.prompts),
                "List the prompts of this server, then request one of those names.",
            )
        outcome = await run_handler(definition, params.arguments, ctx)
        if not isinstance(outcome, HandlerSuccess):
            raise self._protocol_failure(outcome)
        messages = self._render(definition, lambda: prompt_messages(outcome.value))
        return types.GetPromptResult(description=definition.description, messages=messages)


def sdk_result(parts: ToolResultParts) -> types.CallToolResult:
    """The SDK's ``CallToolResult`` of ``parts`` (also what ``@contract`` returns under ``MCPServer``)."""
    # Text blocks (every envelope, most results) are built directly: cheaper than validating the dump.
    if all(block.keys() == {"type", "text"} and block["type"] == "text" for block in parts.content):
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=block["text"]) for block in parts.content],
            structured_content=parts.structured_content,
            is_error=parts.is_error,
            meta=parts.meta,
        )
    return types.CallToolResult.model_validate(parts.to_wire())


def _accepts_an_argument(factory: Callable[..., Any]) -> bool:
    """Whether a lifespan factory takes the server (``lifespan(server)``) or nothing (``lifespan()``)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return bool(positional)
