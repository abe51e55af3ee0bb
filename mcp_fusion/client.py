"""The client end of the wire (issue 11): typed failures from any envelope, and a raising client.

``parse_tool_result`` reads a ``CallToolResult`` (or its JSON dump) back into a :class:`ToolFailure`,
from the structured mirror when there is one, else from the text: the ``<tool_error>`` or
``<validation_error>`` XML envelope (also the flat ``<available_actions>a, b</available_actions>``
spelling some servers emit) or the integrators' JSON envelope. Text that is not a readable envelope
raises :class:`EnvelopeParseError`; it never crashes with a parser's internal exception.

:class:`FusionClient` wraps the SDK's ``mcp.Client``; its ``call_tool(..., raise_on_error=True)``
raises the ``ToolFailure``. Parsing needs no SDK; only the wrapper imports it, lazily.
"""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from .envelope import ENVELOPE_SEVERITIES, ERROR_META_KEY, coerce_seconds, recovery_hint, render_detail_value
from .errors import JsonRpcErrorCode, code_value, coerce_code
from .failure import EnvelopeParseError, ToolFailure
from .validation import VALIDATION_CODE, VALIDATION_REASON, validation_message

__all__ = [
    "ERROR_META_KEY",
    "EnvelopeParseError",
    "FusionClient",
    "ToolFailure",
    "parse_envelope",
    "parse_json_envelope",
    "parse_protocol_error",
    "parse_structured",
    "parse_tool_result",
    "parse_xml_envelope",
]


# Mirror ``data`` keys that are sections of the envelope rather than details.
_SECTION_KEYS = frozenset({"reason", "recovery", "available_actions", "retry_after", "severity", "contract_awareness"})
_VALIDATION_KEYS = frozenset({"action", "fields"})
_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)?\s*$")


_Reader = TypeVar("_Reader", bound=Callable[..., Any])


def _total(reader: _Reader) -> _Reader:
    """A reader raises :class:`EnvelopeParseError` or nothing, whatever shape its input has."""

    @functools.wraps(reader)
    def read(*args: Any, **kwargs: Any) -> Any:
        try:
            return reader(*args, **kwargs)
        except EnvelopeParseError:
            raise
        except (Exception, RecursionError) as exc:  # noqa: BLE001 - a shape no reader foresaw
            raise EnvelopeParseError(f"unreadable envelope ({type(exc).__name__}: {_snippet(str(exc))})") from None

    return read  # type: ignore[return-value]  # functools.wraps keeps the reader's signature: read is a _Reader


# -- entry points -----------------------------------------------------------------------------


def parse_tool_result(result: Any) -> ToolFailure | None:
    """The failure or warning a tool result carries, or ``None`` for a plain success.

    ``result`` is an SDK ``CallToolResult`` or its wire dump (``isError``/``structuredContent``/
    ``_meta`` keys, or the snake_case ones). An error result whose text is no envelope (another
    server's plain message), or whose envelope is malformed, becomes an ``UNKNOWN_ERROR`` failure
    carrying that text and a ``parse_error``, so a caller always gets a ``ToolFailure`` for an
    error; for a success result a malformed envelope raises :class:`EnvelopeParseError`. Nothing
    else is ever raised, whatever the shape of ``result``.
    """
    try:
        is_error, structured, meta, text = _result_parts(result)
    except Exception as exc:  # noqa: BLE001 - a result of any shape is read or refused, never crashed on
        raise EnvelopeParseError(f"not a tool result: {type(result).__name__} ({exc})") from None
    try:
        return _parse_result(is_error, structured, meta, text)
    except EnvelopeParseError as exc:
        if not is_error:
            raise
        return _unreadable(text or "", str(exc))
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - a hostile shape the readers did not foresee
        if not is_error:
            raise EnvelopeParseError(f"unreadable envelope ({type(exc).__name__})") from None
        return _unreadable(text or "", f"unreadable envelope ({type(exc).__name__})")


def _parse_result(is_error: bool, structured: Any, meta: Any, text: str | None) -> ToolFailure | None:
    mirror = None
    if isinstance(meta, Mapping) and isinstance(meta.get(ERROR_META_KEY), Mapping):
        mirror = meta[ERROR_META_KEY]
    elif _looks_like_mirror(structured):
        mirror = structured
    if mirror is not None:
        return parse_structured(mirror)
    if text is not None and _looks_like_envelope(text):
        return parse_envelope(text)
    if is_error:
        return _unreadable(text or "", "the result carries no envelope")
    return None


@_total
def parse_envelope(text: str) -> ToolFailure:
    """Parse the text of an envelope: ``<tool_error>``/``<validation_error>`` XML or the JSON one."""
    if not isinstance(text, str):
        raise EnvelopeParseError(f"an envelope is text, got {type(text).__name__}")
    stripped = text.strip()
    if stripped.startswith("{"):
        return parse_json_envelope(stripped)
    if stripped.startswith("<"):
        return parse_xml_envelope(stripped)
    raise EnvelopeParseError(f"not an envelope (expected XML or JSON): {_snippet(stripped)}")


@_total
def parse_xml_envelope(text: str) -> ToolFailure:
    # No DTDs: an envelope never needs one, and entity expansion is how XML parsers get attacked.
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise EnvelopeParseError("envelope XML must not contain a DOCTYPE or entity declarations")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise EnvelopeParseError(f"malformed or truncated envelope XML ({exc}): {_snippet(text)}") from None
    if root.tag == "tool_error":
        return _from_tool_error_element(root)
    if root.tag == "validation_error":
        return _from_validation_element(root)
    raise EnvelopeParseError(f"unknown envelope <{root.tag}>; expected <tool_error> or <validation_error>")


@_total
def parse_json_envelope(text: str) -> ToolFailure:
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EnvelopeParseError(
            f"malformed or truncated JSON envelope ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}): {_snippet(text)}"
        ) from None
    if not isinstance(body, Mapping) or "code" not in body or "message" not in body:
        raise EnvelopeParseError(f'a JSON envelope needs "code" and "message": {_snippet(text)}')
    if not isinstance(body["code"], str) or not isinstance(body["message"], str):
        raise EnvelopeParseError('a JSON envelope\'s "code" and "message" are strings')
    details = body.get("details") or {}
    if not isinstance(details, Mapping):
        raise EnvelopeParseError('a JSON envelope\'s "details" is an object')
    return ToolFailure(
        code=body["code"],
        code_value=_code_value(body["code"]),
        message=body["message"],
        reason=_optional_text(body.get("reason")),
        recovery=_optional_text(body.get("recovery")),
        available_actions=_actions(body.get("available_actions")),
        details={str(key): render_detail_value(value) for key, value in details.items() if key != "reason"},
        retry_after=_seconds(body.get("retry_after")),
        severity=_severity(body.get("severity")),
        action=_optional_text(body.get("action")),
        fields=_field_pairs(body.get("fields")),
        contract_awareness=_awareness(body.get("contract_awareness")),
        raw=body,
        source="json",
    )


@_total
def parse_structured(mirror: Mapping[str, Any]) -> ToolFailure:
    """Parse the structured mirror ``{"error": {"code", "code_name", "message", "data"}}`` (or its inner object).

    ``code`` is the JSON-RPC number or ``null`` (a custom code, ``DEPRECATED``); ``code_name`` the
    envelope's code. A mirror from before ``code_name`` existed is read by its number.
    """
    if not isinstance(mirror, Mapping):
        raise EnvelopeParseError(f"a structured mirror is an object, got {type(mirror).__name__}")
    error = cast("Mapping[str, Any]", mirror.get("error") if isinstance(mirror.get("error"), Mapping) else mirror)
    code = error.get("code")
    message = error.get("message")
    if isinstance(code, bool) or not (code is None or isinstance(code, int)) or not isinstance(message, str):
        raise EnvelopeParseError(
            f'a structured mirror needs an int (or null) "code" and a "message": {_snippet(str(mirror))}'
        )
    name = _mirror_code_name(code, error.get("code_name"))
    data = error.get("data") or {}
    if not isinstance(data, Mapping):
        raise EnvelopeParseError('a structured mirror\'s "data" is an object')
    reason = _optional_text(data.get("reason"))
    validation = reason == VALIDATION_REASON and "fields" in data
    consumed = _SECTION_KEYS | (_VALIDATION_KEYS if validation else frozenset())
    return ToolFailure(
        code=name,
        code_value=code,
        message=message,
        reason=reason,
        recovery=recovery_hint(data.get("recovery")),
        available_actions=_actions(data.get("available_actions")),
        details={str(key): render_detail_value(value) for key, value in data.items() if key not in consumed},
        retry_after=_seconds(data.get("retry_after")),
        severity=_severity(data.get("severity")),
        action=_optional_text(data.get("action")) if validation else None,
        fields=_field_pairs(data.get("fields")) if validation else (),
        contract_awareness=_awareness(data.get("contract_awareness")),
        raw=dict(mirror),
        source="structured",
    )


@_total
def parse_protocol_error(error: Any) -> ToolFailure:
    """A resource, prompt or unknown-tool failure: the SDK's ``MCPError`` with the envelope in ``data``.

    ``data`` holds the mirror's error object (``code``, ``code_name``, ``message``, ``data``) and the
    envelope text (``envelope``); an older server's ``data`` (the mirror only) or message-borne
    envelope is read too.
    """
    data = getattr(error, "data", None)
    if isinstance(data, Mapping) and "code" in data and "message" in data:
        try:
            return parse_structured({"error": data})
        except EnvelopeParseError:
            if not isinstance(data.get("envelope"), str):
                raise
            return parse_envelope(data["envelope"])
    message = getattr(error, "message", str(error))
    if isinstance(message, str) and _looks_like_envelope(message):
        return parse_envelope(message)
    code = getattr(error, "code", None)
    return ToolFailure(
        code=_code_name(code),
        code_value=code if isinstance(code, int) else None,
        message=str(message),
        raw=error,
        source="protocol",
        parse_error="the error carries no envelope",
    )


# -- XML --------------------------------------------------------------------------------------


def _from_tool_error_element(root: ElementTree.Element) -> ToolFailure:
    code = root.get("code")
    if not code:
        raise EnvelopeParseError("<tool_error> has no code attribute")
    message = root.find("message")
    if message is None:
        raise EnvelopeParseError("<tool_error> has no <message>")
    details = {element.get("key", ""): element.text or "" for element in root.findall("details/detail")}
    reason = details.pop("reason", None)
    retry_after_element = root.find("retry_after")
    retry_after = None
    if retry_after_element is not None:
        found = _SECONDS.match(retry_after_element.text or "")
        if found is None:
            raise EnvelopeParseError(f"<retry_after> is not a number of seconds: {retry_after_element.text!r}")
        retry_after = _number(found.group(1))
    return ToolFailure(
        code=code,
        code_value=_code_value(code),
        message=message.text or "",
        reason=reason,
        recovery=_element_text(root, "recovery"),
        available_actions=_xml_actions(root.find("available_actions")),
        details=details,
        retry_after=retry_after,
        severity=_severity(root.get("severity")),
        contract_awareness=_xml_awareness(root),
        raw=root,
        source="xml",
    )


def _from_validation_element(root: ElementTree.Element) -> ToolFailure:
    action = root.get("action")
    if action is None:
        raise EnvelopeParseError("<validation_error> has no action attribute")
    return ToolFailure(
        code=VALIDATION_CODE.name,
        code_value=int(VALIDATION_CODE),
        message=validation_message(action),
        reason=VALIDATION_REASON,
        recovery=_element_text(root, "recovery"),
        action=action,
        fields=tuple((element.get("name", ""), element.text or "") for element in root.findall("field")),
        contract_awareness=_xml_awareness(root),
        raw=root,
        source="xml",
    )


def _xml_actions(element: ElementTree.Element | None) -> tuple[str, ...]:
    if element is None:
        return ()
    children = element.findall("action")
    if children:
        return tuple((child.text or "").strip() for child in children if (child.text or "").strip())
    return _actions(element.text or "")  # the flat "a, b, c" form


def _xml_awareness(root: ElementTree.Element) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "impact": change.get("impact"),
            "kind": change.get("kind"),
            "reason": change.get("reason"),
            "message": change.text or "",
        }
        for change in root.findall("contract_awareness/change")
    )


def _element_text(root: ElementTree.Element, tag: str) -> str | None:
    element = root.find(tag)
    return element.text if element is not None and element.text else None


# -- shared readers ---------------------------------------------------------------------------


def _result_parts(result: Any) -> tuple[bool, Any, Any, str | None]:
    if isinstance(result, Mapping):
        is_error = bool(result.get("isError", result.get("is_error", False)))
        structured = result.get("structuredContent", result.get("structured_content"))
        meta = result.get("_meta", result.get("meta"))
        content = result.get("content") or []
        first = content[0] if content else None
        text = first.get("text") if isinstance(first, Mapping) else None
    else:
        is_error = bool(getattr(result, "is_error", False))
        structured = getattr(result, "structured_content", None)
        meta = getattr(result, "meta", None)
        content = getattr(result, "content", None) or []
        text = getattr(content[0], "text", None) if content else None
    return is_error, structured, meta, text if isinstance(text, str) else None


def _looks_like_mirror(value: Any) -> bool:
    if not isinstance(value, Mapping) or set(value) != {"error"} or not isinstance(value["error"], Mapping):
        return False
    return "code" in value["error"] and "message" in value["error"]


def _looks_like_envelope(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(("<tool_error", "<validation_error")) or (
        stripped.startswith("{") and '"code"' in stripped and '"message"' in stripped
    )


def _unreadable(text: str, problem: str) -> ToolFailure:
    return ToolFailure(
        code=JsonRpcErrorCode.UNKNOWN_ERROR.name,
        code_value=int(JsonRpcErrorCode.UNKNOWN_ERROR),
        message=text,
        raw=text,
        source="text",
        parse_error=problem,
    )


def _code_value(name: str) -> int | None:
    """The JSON-RPC number an envelope's code name mirrors as (``None``: custom, or no number)."""
    try:
        return code_value(coerce_code(name))
    except ValueError:
        return None


def _mirror_code_name(code: int | None, name: Any) -> str:
    if isinstance(name, str) and name:
        return name
    return _code_name(code) if code is not None else JsonRpcErrorCode.UNKNOWN_ERROR.name


def _code_name(code: Any) -> str:
    try:
        return JsonRpcErrorCode(code).name
    except (ValueError, TypeError):
        return JsonRpcErrorCode.UNKNOWN_ERROR.name


def _actions(actions: Any) -> tuple[str, ...]:
    if actions is None:
        return ()
    if isinstance(actions, str):
        actions = actions.split(",")
    if not isinstance(actions, (list, tuple)):
        raise EnvelopeParseError(f"available_actions is a list of tool names, got {type(actions).__name__}")
    return tuple(text for text in (str(action).strip() for action in actions) if text)


def _seconds(value: Any) -> float | None:
    """A ``retry_after`` that is a finite, non-negative number of seconds; anything else is no delay."""
    return coerce_seconds(value)


def _number(text: str) -> float | None:
    seconds = coerce_seconds(float(text))
    if seconds is None:
        return None
    return int(seconds) if seconds.is_integer() else seconds


def _severity(value: Any) -> str:
    return value if value in ENVELOPE_SEVERITIES else "error"


def _optional_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _field_pairs(value: Any) -> tuple[tuple[str, str], ...]:
    if not value:
        return ()
    if not isinstance(value, (list, tuple)):
        raise EnvelopeParseError("fields is a list of {name, problem} objects")
    return tuple(
        (str(item.get("name", "")), str(item.get("problem", ""))) for item in value if isinstance(item, Mapping)
    )


def _awareness(value: Any) -> tuple[dict[str, Any], ...]:
    if not value:
        return ()
    if not isinstance(value, (list, tuple)):
        raise EnvelopeParseError("contract_awareness is a list of changes")
    return tuple(
        {
            "impact": item.get("impact"),
            "kind": item.get("kind"),
            "reason": item.get("reason"),
            "message": item.get("message", ""),
        }
        for item in value
        if isinstance(item, Mapping)
    )


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")


# -- the raising client -----------------------------------------------------------------------


class FusionClient:
    """A thin wrapper over the SDK's ``mcp.Client`` that turns failures into ``ToolFailure``.

    ``FusionClient(server)`` accepts what ``mcp.Client`` accepts, and a ``FusionServer`` (talked to
    in memory). Methods it does not wrap are forwarded to the SDK client.
    """

    def __init__(self, server: Any, **client_options: Any) -> None:
        self._target = getattr(server, "sdk_server", server)
        self._options = client_options
        self._client: Any = None

    async def __aenter__(self) -> FusionClient:
        import mcp

        self._client = mcp.Client(self._target, **self._options)
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.__aexit__(*exc_info)

    @property
    def sdk_client(self) -> Any:
        if self._client is None:
            raise RuntimeError("FusionClient is used inside `async with FusionClient(...)`")
        return self._client

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, raise_on_error: bool = True, **options: Any
    ) -> Any:
        """Call a tool; with ``raise_on_error`` an error result raises its ``ToolFailure``."""
        result = await self.sdk_client.call_tool(name, dict(arguments or {}), **options)
        if raise_on_error and result.is_error:
            failure = parse_tool_result(result)
            assert failure is not None  # an error result always yields a failure
            raise failure
        return result

    async def read_resource(self, uri: str, *, raise_on_error: bool = True, **options: Any) -> Any:
        return await self._protocol_call(self.sdk_client.read_resource, raise_on_error, uri, **options)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, raise_on_error: bool = True, **options: Any
    ) -> Any:
        return await self._protocol_call(self.sdk_client.get_prompt, raise_on_error, name, arguments, **options)

    async def _protocol_call(self, method: Any, raise_on_error: bool, *args: Any, **options: Any) -> Any:
        import mcp

        try:
            return await method(*args, **options)
        except mcp.MCPError as error:
            if not raise_on_error:
                raise
            raise parse_protocol_error(error) from error

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sdk_client, name)
