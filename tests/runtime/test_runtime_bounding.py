"""Bounding of echoed caller values (DESIGN §3.6)."""

from __future__ import annotations

import json

import pytest
from budget import budget
from hypothesis import given
from hypothesis import strategies as st

from mcp_fusion.bounding import MAX_ITEMS, MAX_KEYS, MAX_STRING_CHARS, bound_value, render_bounded


def test_limits_are_the_design_limits() -> None:
    assert (MAX_STRING_CHARS, MAX_ITEMS, MAX_KEYS) == (1024, 10, 10)


def test_values_within_limits_are_unchanged() -> None:
    value = {"s": "x" * 1024, "items": list(range(10)), "nested": {str(i): i for i in range(10)}}
    assert bound_value(value) == value


def test_long_string_is_cut_and_marked_with_its_length() -> None:
    bounded = bound_value("a" * 5000)
    assert bounded == "a" * 1024 + "… [truncated from 5000 characters]"


def test_long_array_keeps_ten_entries_and_the_count() -> None:
    assert bound_value(list(range(25))) == [*range(10), "… [truncated from 25 items]"]


def test_wide_object_keeps_ten_keys_and_the_count() -> None:
    bounded = bound_value({f"k{i}": i for i in range(30)})
    assert list(bounded)[:10] == [f"k{i}" for i in range(10)]
    assert bounded["…"] == "[truncated from 30 keys]"
    assert len(bounded) == 11


def test_nested_values_are_bounded_too() -> None:
    bounded = bound_value({"pmids": ["p" * 2000] * 12})
    assert len(bounded["pmids"]) == 11
    assert bounded["pmids"][0].endswith("[truncated from 2000 characters]")


def test_deep_nesting_is_cut() -> None:
    deep: list = []
    for _ in range(200):
        deep = [deep]
    assert "nested array" in json.dumps(bound_value(deep))


def test_render_bounded_quotes_strings() -> None:
    assert render_bounded("abc") == "'abc'"
    assert render_bounded({"a": [1, True, None]}) == '{"a": [1, true, null]}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3000),
    lambda children: st.lists(children, max_size=40) | st.dictionaries(st.text(max_size=20), children, max_size=40),
    max_leaves=200,
)


def assert_within_limits(value: object) -> None:
    if isinstance(value, str):
        assert len(value) <= MAX_STRING_CHARS + len("… [truncated from 1000000000 characters]")
    elif isinstance(value, list):
        assert len(value) <= MAX_ITEMS + 1
        for item in value:
            assert_within_limits(item)
    elif isinstance(value, dict):
        assert len(value) <= MAX_KEYS + 1
        for key, item in value.items():
            assert_within_limits(key)
            assert_within_limits(item)


@pytest.mark.slow
@budget(80)
@given(json_values)
def test_any_value_is_bounded_at_every_level(value: object) -> None:
    bounded = bound_value(value)
    assert_within_limits(bounded)
    json.dumps(bounded)  # still plain JSON data
