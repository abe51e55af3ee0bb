"""What the FL301 fix knows of a file before it adds a name: how often each name is bound anywhere
in it, every scope and every binding form (recorded by the extractor from CPython's tree, so the
fix never parses the file)."""

from __future__ import annotations

import ast

import pytest

from fusion_lint.facts.extract import file_names

SOURCE = """\
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
"""

BOUND_ONCE = [
    "McpError",
    "nf",
    "mcp_fusion",
    "timeout",
    "handler",
    "ctx",
    "args",
    "conflict",
    "kw",
    "internal_error",
    "a",
    "b",
    "exc",
    "cap",
    "rest",
    "others",
    "walrus",
    "rate_limited",
]
NEVER_BOUND = ["not_found", "invalid_params", "unavailable", "ValueError"]


@pytest.mark.parametrize("name", BOUND_ONCE + NEVER_BOUND)
def test_every_binding_form_is_counted(name: str) -> None:
    bound = file_names(ast.parse(SOURCE), SOURCE).bound
    assert bound.get(name, 0) == (1 if name in BOUND_ONCE else 0)


def test_the_top_level_from_imports_carry_the_offsets_of_their_names() -> None:
    [statement] = file_names(ast.parse(SOURCE), SOURCE).from_imports
    assert statement.module == "mcp_fusion" and not statement.star
    assert [SOURCE[name.start : name.end] for name in statement.names] == ["McpError", "not_found as nf"]
