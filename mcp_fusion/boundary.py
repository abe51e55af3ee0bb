"""The one failure boundary every tool call, resource read and prompt render runs inside (DESIGN §3.5).

It turns any outcome of a handler into a value the server renders, and writes the one log record
of a failure. It knows nothing about the SDK's wire types, so it is tested directly too.

* ``McpError`` (``ctx.fail``, a factory, a service): when ``data["reason"]`` names a declared entry,
  the entry's recovery (and ``retryable``) fill what the throw site left unset; logged at the
  entry's ``severity`` (default error).
* ``tool_error(...)`` returned or raised: rendered as built (a ``warning`` is the success path).
* Any other exception: ``INTERNAL_ERROR`` with a masked message; the traceback goes to the log only.
* Cancellation: logged at info as ``REQUEST_CANCELLED`` and re-raised, never swallowed.
* Arguments that do not validate: the handler never runs; a ``<validation_error>``.
"""
from __future__ import annotations

import functools
import inspect
import logging
from dataclasses import dataclass, replace
from typing import Any, Mapping, Union

import anyio
import anyio.to_thread
from pydantic import ValidationError

from .bounding import render_bounded
from .context import Context, python_log_level
from .contract import ErrorContract
from .definitions import Definition, ContractDefinition
from .envelope import ToolErrorBuilder, ToolErrorEnvelope
from .errors import JsonRpcErrorCode, McpError
from .signature import bind_context
from .validation import ValidationEnvelope, validation_envelope

#: Logger of the one record written per failure (``Error in tool:<name> ...``).
failure_logger = logging.getLogger("mcp_fusion.boundary")

#: Reason of a masked unexpected exception; clients can switch on it like any other.
UNEXPECTED_REASON = "unexpected_error"
UNEXPECTED_RECOVERY = (
    "Do not blindly retry: this failure was unexpected and the same call is likely to fail the same way. "
    "Try a different approach, or report the problem to the server's maintainers."
)


@dataclass(frozen=True)
class HandlerSuccess:
    """The handler returned normally; ``warning`` is a ``tool_error(...).severity("warning")``."""

    value: Any
    warning: ToolErrorEnvelope | None = None
    has_value: bool = True


Outcome = Union[HandlerSuccess, ToolErrorEnvelope, ValidationEnvelope]


def unexpected_failure(definition: Definition[Any]) -> ToolErrorEnvelope:
    """What the client reads instead of an unexpected exception's text (which may hold internals)."""
    return ToolErrorEnvelope(
        code=JsonRpcErrorCode.INTERNAL_ERROR,
        message=f"{definition.owner} failed unexpectedly; the details were logged on the server",
        recovery=UNEXPECTED_RECOVERY,
        details={"reason": UNEXPECTED_REASON, "retryable": False},
    )


def fill_from_contract(envelope: ToolErrorEnvelope, entry: ErrorContract | None) -> ToolErrorEnvelope:
    """Fill recovery/retryable from the entry the failure's reason names; the throw site always wins."""
    if entry is None:
        return envelope
    recovery = envelope.recovery or entry.recovery
    details = dict(envelope.details)
    if "retryable" not in details and entry.retryable is not None:
        details["retryable"] = entry.retryable
    return replace(envelope, recovery=recovery, details=details)


async def run_handler(
    definition: Definition[Any],
    arguments: Mapping[str, Any] | None,
    request_context: Any = None,
) -> Outcome:
    """Validate ``arguments``, call the handler with its ``Context``, and classify what happened."""
    arguments = dict(arguments or {})
    signature = definition.signature
    try:
        validated = signature.arguments_model.model_validate(arguments)
    except ValidationError as exc:
        envelope = validation_envelope(definition.name, exc, signature.input_schema)
        _log_failure(definition, logging.WARNING, envelope.code.name, envelope.reason, envelope.message, arguments)
        return envelope

    context = _context_for(definition, request_context)
    args, kwargs = signature.call_arguments(validated)
    bind_context(signature, kwargs, context)
    try:
        if signature.is_async:
            result = await definition.handler(*args, **kwargs)
        else:
            # A sync handler may block (I/O, CPU); a worker thread keeps the event loop serving.
            result = await anyio.to_thread.run_sync(functools.partial(definition.handler, *args, **kwargs))
        if inspect.isawaitable(result):
            result = await result
    except anyio.get_cancelled_exc_class():
        _log_failure(
            definition, logging.INFO, JsonRpcErrorCode.REQUEST_CANCELLED.name, None,
            "Request cancelled by the client", arguments,
        )
        raise
    except ToolErrorBuilder as built:
        return _from_builder(definition, built, arguments)
    except McpError as error:
        return _from_mcp_error(definition, error, arguments)
    except Exception:
        envelope = unexpected_failure(definition)
        _log_failure(
            definition, logging.ERROR, envelope.code_name, UNEXPECTED_REASON,
            "unexpected exception (masked from the client)", arguments, exc_info=True,
        )
        return envelope
    if isinstance(result, ToolErrorBuilder):
        return _from_builder(definition, result, arguments)
    return HandlerSuccess(result)


def _context_for(definition: Definition[Any], request_context: Any) -> Context:
    if isinstance(definition, ContractDefinition):
        return definition.context(request_context)
    return Context((), owner=definition.owner, request_context=request_context)


def _entry_for(definition: Definition[Any], reason: str | None) -> ErrorContract | None:
    if isinstance(definition, ContractDefinition):
        return definition.entry(reason)
    return None


def _from_mcp_error(definition: Definition[Any], error: McpError, arguments: Mapping[str, Any]) -> ToolErrorEnvelope:
    entry = _entry_for(definition, error.reason)
    envelope = fill_from_contract(ToolErrorEnvelope.from_mcp_error(error), entry)
    level = python_log_level(entry.severity if entry else None)
    _log_failure(definition, level, envelope.code_name, envelope.reason, envelope.message, arguments)
    return envelope


def _from_builder(
    definition: Definition[Any], built: ToolErrorBuilder, arguments: Mapping[str, Any]
) -> Outcome:
    envelope = built.envelope()
    entry = _entry_for(definition, envelope.reason)
    envelope = fill_from_contract(envelope, entry)
    if not envelope.is_error:
        _log_failure(
            definition, logging.WARNING, envelope.code_name, envelope.reason, envelope.message, arguments,
            label="Warning in",
        )
        return HandlerSuccess(built.result_value, warning=envelope, has_value=built.has_result)
    level = python_log_level(entry.severity if entry else None)
    _log_failure(definition, level, envelope.code_name, envelope.reason, envelope.message, arguments)
    return envelope


def _log_failure(
    definition: Definition[Any],
    level: int,
    code_name: str,
    reason: str | None,
    message: str,
    arguments: Mapping[str, Any],
    *,
    exc_info: bool = False,
    label: str = "Error in",
) -> None:
    """The one record of a failure; what the caller sent is bounded (DESIGN §3.6)."""
    bounded_arguments = render_bounded(dict(arguments))
    failure_logger.log(
        level,
        "%s %s:%s [%s%s] %s; arguments=%s",
        label,
        definition.kind,
        definition.name,
        code_name,
        f" reason={reason}" if reason else "",
        message,
        bounded_arguments,
        exc_info=exc_info,
        extra={
            "fusion_kind": definition.kind,
            "fusion_name": definition.name,
            "fusion_code": code_name,
            "fusion_reason": reason,
            "fusion_arguments": bounded_arguments,
        },
    )
