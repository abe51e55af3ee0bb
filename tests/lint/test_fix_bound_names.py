"""The FL301 fix's "is this name bound in the file?" answers without parsing when the name never
stands as a word; it must agree with the full walk of the file every time."""
from __future__ import annotations

import pytest

from fusion_lint.fixes import _binding_counts, _bound_count

SOURCE = '''\
from mcp_fusion import McpError, not_found as nf
import mcp_fusion.errors
timeout = 3
"invalid_params in a string"
def handler(ctx, *args, conflict=None, **kw):
    global internal_error
    for (a, b) in []:
        pass
    try:
        pass
    except ValueError as exc:
        pass
    match kw:
        case {"k": cap, **rest}:
            pass
        case [*others]:
            pass
    (walrus := 1)
class rate_limited: ...
'''


@pytest.mark.parametrize(
    "name",
    ["McpError", "nf", "not_found", "mcp_fusion", "timeout", "invalid_params", "handler", "ctx", "args",
     "conflict", "kw", "internal_error", "a", "b", "exc", "cap", "rest", "others", "walrus", "rate_limited",
     "unavailable", "ValueError"],
)
def test_the_shortcut_agrees_with_the_walk(name: str) -> None:
    assert _bound_count(SOURCE, name) == _binding_counts(SOURCE)[name]


def test_a_non_ascii_spelling_of_a_name_still_counts_as_binding_it() -> None:
    text = "ｎｏｔ_found = 1\n"  # NFKC: binds not_found, though the word is not in the text
    assert _bound_count(text, "not_found") == 1


def test_a_file_cpython_rejects_binds_nothing() -> None:
    assert _bound_count("def (:\n  timeout = 1\n", "timeout") == 0
