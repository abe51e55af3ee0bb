"""What goes on the wire for an outcome: framework-independent, sanitised, always valid (DESIGN §3.5).

:func:`tool_result` turns a boundary :data:`~mcp_fusion.boundary.Outcome` into the parts of an
MCP ``CallToolResult`` as plain JSON data (:class:`ToolResultParts`, ``to_wire()`` is the exact
``tools/call`` result object). ``FusionServer`` validates it into the SDK's type; a framework
adapter builds its own result type from the same parts, so the text and the mirror are the same
bytes whichever serves them. :func:`protocol_error` gives the JSON-RPC error of a resource or
prompt failure (``-32602``/``-32603`` only, the envelope in ``data``).

Guarantees, whatever the handler returned:

* every string is encodable (lone surrogates become U+FFFD) and every number is JSON;
* a tool with an output schema gets ``structured_content`` matching it, or an ``INTERNAL_ERROR``
  envelope ("the tool returned a malformed result") — a warning keeps the tool's result;
* a result that cannot be carried (an endless iterator, a cycle, nesting deeper than
  ``MAX_RESULT_DEPTH``, a 5,000-digit integer, an unknown object, more than ``max_chars``) is a
  ``SERIALIZATION_ERROR`` envelope; what went wrong is logged, never sent.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import logging
import math
import uuid
from collections.abc import Iterable, Mapping, Set
from itertools import islice
from pathlib import PurePath
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from .boundary import (
    BoundaryTarget,
    Failure,
    HandlerSuccess,
    Outcome,
    is_fatal,
    log_failure,
    unexpected_failure,
)
from .bounding import bound_text, clean_text, describe_integer, integer_digits
from .envelope import ERROR_META_KEY, EnvelopeFormat, ToolErrorEnvelope
from .errors import JsonRpcErrorCode

#: A result is refused beyond this many characters of JSON (``FusionServer(max_result_chars=)``).
DEFAULT_MAX_RESULT_CHARS = 16_000_000
#: A result is refused beyond this nesting depth.
MAX_RESULT_DEPTH = 256
#: An iterator in a result is read for at most this many items.
MAX_RESULT_ITEMS = 100_000
#: JSON-RPC codes of a resource/prompt failure (DESIGN §3.5): the call was wrong, or the server failed.
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
_MAX_INT_DIGITS = 4300  # CPython's own limit for int <-> str

MALFORMED_REASON = "malformed_result"
UNSERIALISABLE_REASON = "unserialisable_result"
_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


class ResultProblem(Exception):
    """A result the wire cannot carry as it is; ``reason`` is the envelope's reason."""

    def __init__(self, reason: str, problem: str) -> None:
        super().__init__(problem)
        self.reason = reason
        self.problem = problem


class ToolResultParts(NamedTuple):
    """A ``CallToolResult`` as JSON data: content blocks as wire dicts, the mirror, the flag.

    A named tuple (immutable, like the frozen dataclass it was): one is made per call, and a tuple
    is several times cheaper to make.
    """

    content: list[dict[str, Any]]
    structured_content: dict[str, Any] | None
    is_error: bool
    meta: dict[str, Any] | None = None

    def with_tool_failure_meta(self) -> ToolResultParts:
        """These parts with the draft ``toolFailure`` metadata (MCP PRs #3312/#3313) when they are a failure."""
        if not self.is_error:
            return self
        mirror = (self.meta or {}).get(ERROR_META_KEY) or (self.structured_content or {}).get("error")
        if not isinstance(mirror, dict):
            return self
        return self._replace(meta={**(self.meta or {}), TOOL_FAILURE_META_KEY: tool_failure_meta(mirror)})

    def to_wire(self) -> dict[str, Any]:
        """The ``tools/call`` result object, as MCP spells it (``structuredContent``, ``isError``, ``_meta``)."""
        wire: dict[str, Any] = {"content": self.content, "isError": self.is_error}
        if self.structured_content is not None:
            wire["structuredContent"] = self.structured_content
        if self.meta is not None:
            wire["_meta"] = self.meta
        return wire


# -- the draft ToolFailure metadata (MCP PRs #3312/#3313) ------------------------------------

#: ``_meta`` key of the draft structured tool-failure classification, emitted only when a server opts in.
TOOL_FAILURE_META_KEY = "io.modelcontextprotocol/toolFailure"
#: The draft's ``class`` of a failure by code: the environment failed (``reliability``), a policy
#: refused (``governance``); anything else the call itself asked what the tool cannot do (``capability``).
_RELIABILITY_CODES = frozenset(
    {
        "SERVICE_UNAVAILABLE",
        "SERVER_BUSY",
        "TIMEOUT",
        "RATE_LIMITED",
        "INTERNAL_ERROR",
        "DATABASE_ERROR",
        "SERIALIZATION_ERROR",
        "REQUEST_CANCELLED",
        "INITIALIZATION_FAILED",
        "CONFIGURATION_ERROR",
        "HANDOFF_UPSTREAM_UNAVAILABLE",
        "HANDOFF_CONNECTING",
    }
)
_GOVERNANCE_CODES = frozenset({"FORBIDDEN", "UNAUTHORIZED", "AUTH_REQUIRED"})
failure_meta_logger = logging.getLogger("mcp_fusion.tool_failure")


def tool_failure_meta(mirror: Mapping[str, Any]) -> dict[str, Any]:
    """The draft ``toolFailure`` object of one failure's mirror: class, code, retryable, retryNotBefore,
    correlationId (new per failure, logged with the tool's name so an operator can find it), agentGuidance."""
    code = str(mirror.get("code_name") or "INTERNAL_ERROR")
    data = cast("Mapping[str, Any]", mirror.get("data") if isinstance(mirror.get("data"), Mapping) else {})
    failure_class = (
        "reliability" if code in _RELIABILITY_CODES else "governance" if code in _GOVERNANCE_CODES else "capability"
    )
    meta: dict[str, Any] = {"class": failure_class, "code": code, "correlationId": uuid.uuid4().hex}
    retryable = data.get("retryable")
    if isinstance(retryable, bool):
        meta["retryable"] = retryable
    retry_after = data.get("retry_after")
    if isinstance(retry_after, (int, float)) and not isinstance(retry_after, bool) and math.isfinite(retry_after):
        not_before = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=retry_after)
        meta["retryNotBefore"] = not_before.isoformat(timespec="seconds").replace("+00:00", "Z")
        meta.setdefault("retryable", True)
    recovery = data.get("recovery")
    hint = recovery.get("hint") if isinstance(recovery, Mapping) else None
    if isinstance(hint, str) and hint:
        meta["agentGuidance"] = hint
    failure_meta_logger.info(
        "toolFailure correlationId=%s code=%s reason=%s", meta["correlationId"], code, data.get("reason")
    )
    return meta


# -- failures ---------------------------------------------------------------------------------


def render_failure(failure: Failure, envelope_format: EnvelopeFormat = "xml") -> tuple[str, dict[str, Any]]:
    """The envelope text and the structured mirror ``{"error": {...}}`` of one failure."""
    return failure.render(envelope_format), failure.to_structured()


def failure_parts(failure: Failure, envelope_format: EnvelopeFormat, *, has_output_schema: bool) -> ToolResultParts:
    text, mirror = failure.render(envelope_format), failure.to_structured()  # render_failure, one call fewer
    content = [{"type": "text", "text": text}]
    if has_output_schema:
        # structured_content is reserved for the output schema; the mirror travels in _meta.
        return ToolResultParts(content, None, failure.is_error, {ERROR_META_KEY: mirror["error"]})
    return ToolResultParts(content, mirror, failure.is_error)


def malformed_failure(target: BoundaryTarget) -> ToolErrorEnvelope:
    return ToolErrorEnvelope(
        code=JsonRpcErrorCode.INTERNAL_ERROR,
        message=f"{target.owner} returned a malformed result; the details were logged on the server",
        recovery="Do not blindly retry: the same call is likely to return the same result. Try different "
        "arguments, or report the problem to the server's maintainers.",
        details={"reason": MALFORMED_REASON, "retryable": False},
    )


def unserialisable_failure(target: BoundaryTarget) -> ToolErrorEnvelope:
    return ToolErrorEnvelope(
        code=JsonRpcErrorCode.SERIALIZATION_ERROR,
        message=f"{target.owner} produced a result that could not be serialised",
        recovery="Do not blindly retry: the same call will produce the same result. Try different arguments.",
        details={"reason": UNSERIALISABLE_REASON, "retryable": False},
    )


def result_failure(target: BoundaryTarget, problem: ResultProblem) -> ToolErrorEnvelope:
    """The envelope of a result the wire cannot carry, after logging what was wrong with it."""
    envelope = malformed_failure(target) if problem.reason == MALFORMED_REASON else unserialisable_failure(target)
    log_failure(target, logging.ERROR, envelope.code_name, problem.reason, f"the result {problem.problem}", None)
    return envelope


def protocol_error(
    failure: Failure, envelope_format: EnvelopeFormat = "xml", *, code: int | None = None, message: str | None = None
) -> tuple[int, str, dict[str, Any]]:
    """``(code, message, data)`` of the JSON-RPC error for a resource or prompt failure.

    ``code`` is ``-32602`` for a call that was wrong (unknown name, missing resource, invalid
    arguments) and ``-32603`` for any other failure; ``message`` is one line; ``data`` carries the
    envelope text and the mirror's fields (``code``, ``code_name``, ``message``, ``data``) plus
    ``reason`` and ``recovery``, so a client can read the failure like a tool's.
    """
    text, mirror = render_failure(failure, envelope_format)
    error = mirror["error"]
    if code is None:
        wrong_call = failure.reason == "invalid_arguments" or failure.code is JsonRpcErrorCode.NOT_FOUND
        code = INVALID_PARAMS if wrong_call else INTERNAL_ERROR
    data = {**error, "reason": failure.reason, "recovery": failure.recovery, "envelope": text}
    return code, one_line(message if message is not None else protocol_message(failure)), data


def protocol_message(failure: Failure) -> str:
    """The one-line ``message`` of a resource/prompt failure: it carries code, reason and recovery too,
    since some clients (Claude Code) show only ``message`` of a JSON-RPC error, never its ``data``."""
    label = f"{failure.code_name}, reason {failure.reason}" if failure.reason else failure.code_name
    message = failure.message
    problems = getattr(failure, "fields", ())
    if problems:  # a validation error: its recovery says "fix the arguments above"
        message += ": " + "; ".join(f"{problem.name}: {problem.problem}" for problem in problems)
    text = f"{bound_text(message)} ({label})"
    return f"{text}. Recovery: {failure.recovery}" if failure.recovery else text


def one_line(text: str) -> str:
    return bound_text(" ".join(clean_text(text).split()))


# -- tool results -----------------------------------------------------------------------------


def tool_result(
    target: BoundaryTarget,
    outcome: Outcome,
    *,
    envelope_format: EnvelopeFormat = "xml",
    output_adapter: Any = None,
    has_output_schema: bool = False,
    max_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
    tool_failure_meta: bool = False,
) -> ToolResultParts:
    """The parts of the ``CallToolResult`` for ``outcome``; never raises (but for Ctrl-C and cancellation).

    ``tool_failure_meta``: a failure also carries the draft ``toolFailure`` metadata (off by default).
    """
    parts = _tool_result(target, outcome, envelope_format, output_adapter, has_output_schema, max_chars)
    return parts.with_tool_failure_meta() if tool_failure_meta else parts


def _tool_result(
    target: BoundaryTarget,
    outcome: Outcome,
    envelope_format: EnvelopeFormat,
    output_adapter: Any,
    has_output_schema: bool,
    max_chars: int | None,
) -> ToolResultParts:
    try:
        if not isinstance(outcome, HandlerSuccess):
            return failure_parts(outcome, envelope_format, has_output_schema=has_output_schema)
        try:
            return _success_parts(outcome, envelope_format, output_adapter, has_output_schema, max_chars)
        except ResultProblem as problem:
            return failure_parts(result_failure(target, problem), envelope_format, has_output_schema=has_output_schema)
    except BaseException as exc:  # noqa: BLE001 - a result's own code (a generator, __str__) may raise anything
        if is_fatal(exc):
            raise
        envelope = unexpected_failure(target)
        log_failure(
            target,
            logging.ERROR,
            envelope.code_name,
            envelope.reason,
            "the result could not be rendered",
            None,
            exc=exc,
        )
        return failure_parts(envelope, envelope_format, has_output_schema=has_output_schema)


def _success_parts(
    outcome: HandlerSuccess,
    envelope_format: EnvelopeFormat,
    output_adapter: Any,
    has_output_schema: bool,
    max_chars: int | None,
) -> ToolResultParts:
    warning = outcome.warning
    if has_output_schema and (not outcome.has_value or outcome.value is None):
        what = "a warning without the result" if warning else "nothing, not the result"
        raise ResultProblem(MALFORMED_REASON, f"was {what} the output schema requires (attach it with .result(value))")
    content, structured, is_error = success_payload(
        outcome.value if outcome.has_value else None, output_adapter, max_chars
    )
    if warning is None:
        return ToolResultParts(content, structured, is_error)
    # A warning is guidance on the success path: the envelope leads, the payload follows.
    text, mirror = render_failure(warning, envelope_format)
    content = [{"type": "text", "text": text}, *content]
    if structured is None and not has_output_schema:
        return ToolResultParts(content, mirror, False)
    return ToolResultParts(content, structured, False, {ERROR_META_KEY: mirror["error"]})


def success_payload(value: Any, output_adapter: Any, max_chars: int | None) -> tuple[list[dict[str, Any]], Any, bool]:
    """``(content, structured_content, is_error)`` of a handler's return value."""
    if value is None:
        return [], None, False
    if output_adapter is not None:
        try:
            validated = output_adapter.validate_python(value)
        except ValidationError as exc:
            raise ResultProblem(
                MALFORMED_REASON, f"does not match the output schema ({exc.error_count()} problems)"
            ) from None
        structured, text = json_data(output_adapter.dump_python(validated, mode="json"), max_chars)
        if not isinstance(structured, dict):
            raise ResultProblem(MALFORMED_REASON, "is not an object, as the output schema requires")
        return [{"type": "text", "text": text}], structured, False
    if isinstance(value, str):
        return [{"type": "text", "text": _bounded_result_text(value, max_chars)}], None, False
    if _is_call_tool_result(value):
        dumped, _ = json_data(value.model_dump(by_alias=True, mode="json", exclude_none=True), max_chars)
        return list(dumped.get("content", [])), dumped.get("structuredContent"), bool(dumped.get("isError", False))
    blocks = value if isinstance(value, (list, tuple)) and value else [value]
    if all(_is_content_block(block) for block in blocks):
        dumped, _ = json_data(
            [block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in blocks], max_chars
        )
        return dumped, None, False
    if hasattr(type(value), "model_fields") and callable(getattr(value, "model_dump", None)):
        value = value.model_dump(mode="json")
    jsonable, text = json_data(value, max_chars)
    return [{"type": "text", "text": text}], jsonable if isinstance(jsonable, dict) else None, False


def _bounded_result_text(text: str, max_chars: int | None) -> str:
    if max_chars is not None and len(text) > max_chars:
        raise ResultProblem(UNSERIALISABLE_REASON, f"is {len(text)} characters long, over the limit of {max_chars}")
    return clean_text(text)


def _is_content_block(value: Any) -> bool:
    return getattr(value, "type", None) in _CONTENT_TYPES and callable(getattr(value, "model_dump", None))


def _is_call_tool_result(value: Any) -> bool:
    return type(value).__name__ == "CallToolResult" and callable(getattr(value, "model_dump", None))


# -- JSON data --------------------------------------------------------------------------------


def json_data(value: Any, max_chars: int | None = DEFAULT_MAX_RESULT_CHARS) -> tuple[Any, str]:
    """``(data, text)``: ``value`` as JSON data the wire can carry, and its indented JSON text.

    Plain JSON data takes one ``json.dumps``; anything else is converted (dates, UUIDs, enums,
    models, dataclasses, finite iterators; surrogates replaced; NaN as ``null``) or refused with
    a :class:`ResultProblem` saying why.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
    except (TypeError, ValueError, RecursionError, OverflowError):
        value = _StrictConverter(max_chars).value(value, 0)
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
    else:
        if clean_text(text) is not text:
            value = _StrictConverter(max_chars).value(value, 0)
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
    if max_chars is not None and len(text) > max_chars:
        raise ResultProblem(UNSERIALISABLE_REASON, f"is {len(text)} characters of JSON, over the limit of {max_chars}")
    return value, text


class _StrictConverter:
    """One conversion of :func:`json_data`: nothing is cut, what cannot be carried is refused."""

    def __init__(self, max_chars: int | None) -> None:
        self.budget = max_chars if max_chars is not None else math.inf
        self.visiting: set[int] = set()

    def refuse(self, problem: str) -> ResultProblem:
        return ResultProblem(UNSERIALISABLE_REASON, problem)

    def value(self, value: Any, depth: int) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            self.spend(len(value))
            return clean_text(value)
        if isinstance(value, int):
            if value.bit_length() > 3 * _MAX_INT_DIGITS and integer_digits(value) > _MAX_INT_DIGITS:
                raise self.refuse(f"holds {describe_integer(value)[1:-1]}, more than JSON readers accept")
            self.spend(8)
            return int(value)
        if isinstance(value, float):
            self.spend(8)
            return float(value) if math.isfinite(value) else None  # as pydantic writes NaN/Infinity
        if depth >= MAX_RESULT_DEPTH:
            raise self.refuse(f"is nested deeper than {MAX_RESULT_DEPTH} levels")
        if isinstance(value, (Mapping, list, tuple, Set)):
            if id(value) in self.visiting:
                raise self.refuse("holds a circular reference")
            self.visiting.add(id(value))
            try:
                if isinstance(value, Mapping):
                    return {self.key(key): self.value(item, depth + 1) for key, item in value.items()}
                return [self.value(item, depth + 1) for item in value]
            finally:
                self.visiting.discard(id(value))
        return self.value(self.describe(value), depth + 1)

    def spend(self, amount: int) -> None:
        self.budget -= amount
        if self.budget < 0:
            raise self.refuse("is larger than the result size limit")

    def key(self, key: Any) -> str:
        if isinstance(key, str):
            self.spend(len(key))
            return clean_text(key)
        if key is None or isinstance(key, (bool, int, float)):
            return json.dumps(key) if key is None or isinstance(key, bool) else str(key)
        raise self.refuse(f"has a key of type {type(key).__name__!r}, which JSON cannot carry")

    def describe(self, value: Any) -> Any:
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, (datetime.date, datetime.time)):
            return value.isoformat()
        if isinstance(value, (uuid.UUID, decimal.Decimal, PurePath)):
            return str(value)
        if isinstance(value, (bytes, bytearray)):
            raise self.refuse("holds bytes; return text, or base64 in a string")
        if hasattr(type(value), "model_fields") and callable(getattr(value, "model_dump", None)):
            return value.model_dump(mode="json")
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {item.name: getattr(value, item.name) for item in dataclasses.fields(value)}
        if isinstance(value, Iterable):
            items = list(islice(value, MAX_RESULT_ITEMS + 1))
            if len(items) > MAX_RESULT_ITEMS:
                raise self.refuse(f"holds an iterator of more than {MAX_RESULT_ITEMS} items (an endless one?)")
            return items
        raise self.refuse(f"holds an object of type {type(value).__qualname__!r}, which JSON cannot carry")
