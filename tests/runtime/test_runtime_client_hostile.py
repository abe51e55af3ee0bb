"""The client reads any result: a failure, ``None``, or ``EnvelopeParseError`` — never a crash (issue 16).

Also the envelope's own round trips that used to lose information: ``\\r`` in text, colliding
detail keys, non-finite numbers.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_fusion import JsonRpcErrorCode, McpError, tool_error
from mcp_fusion.bounding import bound_value
from mcp_fusion.client import EnvelopeParseError, ToolFailure, parse_envelope, parse_structured, parse_tool_result
from mcp_fusion.envelope import ToolErrorEnvelope

MALFORMED_MIRRORS = [
    {"error": {"code": "NOT_FOUND", "message": "m"}},  # a string code
    {"error": {"code": -32001, "message": 5}},  # a non-str message
    {"error": {"code": -32001, "message": "m", "data": ["a"]}},  # data is a list
    {"error": {"code": -32001, "message": "m", "data": {"recovery": 7, "available_actions": {"a": 1}}}},
    {"error": {"code": -32001, "message": "m", "data": {"retry_after": "soon"}}},
    {"error": {"code": -32001, "message": "m", "data": {"reason": "invalid_arguments", "fields": "abc"}}},
    {"error": {"code": -32001, "message": "m", "data": {"contract_awareness": {"kind": "x"}}}},
    {"error": {"code": True, "message": "m"}},  # a bool code
    {"error": {"code": 1.5, "message": "m"}},
    {
        "error": {
            "code": -32001,
            "message": "m",
            "data": {"fields": [1, None, {"name": {"x": 1}}], "reason": "invalid_arguments"},
        }
    },
]


def deep(levels: int) -> object:
    value: object = "bottom"
    for _ in range(levels):
        value = {"nested": value}
    return value


def assert_read_or_refused(result: object) -> ToolFailure | None:
    try:
        failure = parse_tool_result(result)
    except EnvelopeParseError:
        return None
    assert failure is None or isinstance(failure, ToolFailure)
    return failure


@pytest.mark.parametrize("mirror", MALFORMED_MIRRORS)
@pytest.mark.parametrize("is_error", [True, False])
def test_malformed_mirrors_are_read_or_refused(mirror: dict, is_error: bool) -> None:
    result = {"isError": is_error, "content": [{"type": "text", "text": "x"}], "structuredContent": mirror}
    failure = assert_read_or_refused(result)
    if is_error:
        assert failure is not None  # an error result always yields a failure, readable or not


def test_deep_nesting_is_read_or_refused() -> None:
    mirror = {"error": {"code": -32001, "message": "m", "data": {"reason": "r", "detail": deep(5000)}}}
    assert_read_or_refused({"isError": True, "structuredContent": mirror, "content": []})
    text = '<tool_error code="NOT_FOUND"><message>m</message>' + "<a>" * 3000 + "</a>" * 3000 + "</tool_error>"
    assert_read_or_refused({"isError": True, "content": [{"type": "text", "text": text}]})
    nested_json = '{"code": "NOT_FOUND", "message": "m", "details": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(EnvelopeParseError):
        parse_envelope(nested_json)


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=40,
)
mirror_keys = st.sampled_from(
    [
        "code",
        "code_name",
        "message",
        "data",
        "reason",
        "recovery",
        "available_actions",
        "retry_after",
        "severity",
        "fields",
        "contract_awareness",
        "action",
        "error",
    ]
)
mirrors = st.recursive(
    st.dictionaries(mirror_keys, json_like, max_size=6),
    lambda children: st.dictionaries(mirror_keys, children | json_like, max_size=6),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    mirror=mirrors,
    is_error=st.booleans(),
    text=st.text(max_size=60) | st.sampled_from(["<tool_error", '{"code": 1, "message": 2}']),
)
def test_any_result_shape_is_read_or_refused(mirror: dict, is_error: bool, text: str) -> None:
    assert_read_or_refused(
        {"isError": is_error, "content": [{"type": "text", "text": text}], "structuredContent": mirror}
    )
    assert_read_or_refused(
        {"isError": is_error, "content": [{"type": "text", "text": text}], "_meta": {"fusion/error": mirror}}
    )
    try:
        parse_structured(mirror)
    except EnvelopeParseError:
        pass


def test_carriage_returns_and_tabs_round_trip_through_xml() -> None:
    envelope = (
        tool_error("NOT_FOUND", "one\r\ntwo\rthree").details({"cr\rkey": "a\rb", "tab\tkey": "c\td\ne"}).envelope()
    )
    read_back = parse_envelope(envelope.to_xml())
    assert read_back.message == "one\r\ntwo\rthree"
    assert read_back.details == {"cr\rkey": "a\rb", "tab\tkey": "c\td\ne"}
    assert read_back == parse_structured(envelope.to_structured())


def test_int_and_str_detail_keys_never_collide() -> None:
    envelope = ToolErrorEnvelope.from_mcp_error(
        McpError(JsonRpcErrorCode.NOT_FOUND, "x", {1: "int", "1": "str", None: "n"})
    )
    assert envelope.details == {"1 (int)": "int", "1": "str", "null": "n"}
    assert parse_envelope(envelope.to_xml()).details == {"1 (int)": "int", "1": "str", "null": "n"}


def test_non_finite_numbers_never_reach_the_wire() -> None:
    envelope = ToolErrorEnvelope.from_mcp_error(
        McpError(JsonRpcErrorCode.RATE_LIMITED, "x", {"retry_after": math.nan, "ratio": math.inf, "loss": -math.inf})
    )
    assert envelope.retry_after is None
    body = json.loads(envelope.to_json_text(), parse_constant=lambda name: pytest.fail(f"not JSON: {name}"))
    assert body["details"] == {"ratio": "Infinity", "loss": "-Infinity"}
    with pytest.raises(ValueError, match="non-negative number of seconds"):
        ToolErrorEnvelope(code=JsonRpcErrorCode.RATE_LIMITED, message="x", retry_after=math.nan)
    client_side = parse_structured({"error": {"code": -32003, "message": "x", "data": {"retry_after": -1}}})
    assert client_side.retry_after is None


def test_data_cannot_make_a_failure_a_warning() -> None:
    envelope = ToolErrorEnvelope.from_mcp_error(McpError(JsonRpcErrorCode.NOT_FOUND, "x", {"severity": "warning"}))
    assert envelope.is_error and envelope.severity == "error"
    assert "severity" not in envelope.to_structured()["error"]["data"]
    assert parse_structured(envelope.to_structured()).is_error is True


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=1500),
    lambda children: (
        st.lists(children, max_size=15) | st.dictionaries(st.text(max_size=20) | st.integers(), children, max_size=15)
    ),
    max_leaves=120,
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(json_values)
def test_bounding_is_idempotent_and_strict_json(value: object) -> None:
    bounded = bound_value(value)
    assert bound_value(bounded) == bounded
    json.dumps(bounded, allow_nan=False)
