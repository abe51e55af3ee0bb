"""Suppressions (DESIGN §5): ``# noqa: FL107``, bare ``# noqa``,
``# fusion-lint: ignore[name-or-code]``, on the diagnostic's line or on the first line of its
statement; only comments count.
"""

from __future__ import annotations

import pytest

from fusion_lint.source.pipeline import suppressions

IMPORTS = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode\n"


def bad_reason_tool(comment: str) -> str:
    """FL107 fires on line 3 (the reason); ``comment`` is appended to that line."""
    return (
        IMPORTS
        + '@tool("get_item", errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="Gone",\n'
        + f'    reason="NoMatch", recovery="Call get_item again with a valid id.")])  {comment}\n'
        + "def get_item(item_id: str): ...\n"
    )


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: FL107",
        "# noqa:FL107",
        "# NOQA: fl107",
        "# noqa: FL112, FL107",
        "# noqa: FL112 FL107",
        "# noqa",
        "# fusion-lint: ignore[error-contract-reason-format]",
        "# fusion-lint: ignore[FL107]",
        "# fusion-lint: ignore[FL112, error-contract-reason-format]",
        "# fusion-lint: ignore",
        "# why: legacy clients switch on it  # noqa: FL107",
    ],
)
def test_suppression_on_the_diagnostics_line(lint_project, comment: str) -> None:
    linted = lint_project({"app.py": bad_reason_tool(comment)}, dedent=False)
    assert linted.codes() == [], linted.summary()


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: FL108",
        "# noqa: FL10",  # a prefix is not a code: suppressions name exactly what they silence
        "# fusion-lint: ignore[error-contract-reason-unique]",
        "# noqa: E501",
        "",
    ],
)
def test_suppression_of_something_else_keeps_the_finding(lint_project, comment: str) -> None:
    linted = lint_project({"app.py": bad_reason_tool(comment)}, dedent=False)
    assert linted.summary() == [("FL107", "app.py", 3)]


def test_suppression_on_the_first_line_of_a_multi_line_statement(lint_project) -> None:
    source = (
        IMPORTS
        + "@tool(  # noqa: FL107\n"
        + '    "get_item",\n'
        + '    errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="Gone",\n'
        + '        reason="NoMatch", recovery="Call get_item again with a valid id.")],\n'
        + ")\n"
        + "def get_item(item_id: str): ...\n"
    )
    assert lint_project({"app.py": source}, dedent=False).codes() == []


def test_suppression_on_a_module_level_constant_statement(lint_project) -> None:
    source = (
        IMPORTS
        + "SHARED = [  # fusion-lint: ignore[error-contract-reason-format]\n"
        + '    ErrorContract(reason="NoMatch", code=JsonRpcErrorCode.NOT_FOUND, when="Gone",\n'
        + '                  recovery="Call get_item again with a valid id."),\n'
        + "]\n"
        + '@tool("get_item", errors=SHARED)\n'
        + "def get_item(item_id: str): ...\n"
    )
    assert lint_project({"app.py": source}, dedent=False).codes() == []


def test_suppression_in_a_handler_on_the_raise_statement(lint_project) -> None:
    source = (
        IMPORTS
        + '@tool("get_item")\n'
        + "def get_item(item_id: str, ctx):\n"
        + "    raise ValueError(  # fusion-lint: ignore[prefer-mcp-error-in-handler]\n"
        + "        'bad id'\n"
        + "    )\n"
    )
    assert lint_project({"app.py": source}, dedent=False).codes() == []


def test_suppression_on_another_line_does_not_apply(lint_project) -> None:
    source = "# noqa: FL107\n" + bad_reason_tool("")
    assert lint_project({"app.py": source}, dedent=False).summary() == [("FL107", "app.py", 4)]


def test_noqa_inside_a_string_is_not_a_suppression(lint_project) -> None:
    source = (
        IMPORTS
        + '@tool("get_item", errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="# noqa",\n'
        + '    reason="NoMatch", recovery="Call get_item again # noqa: FL107")])\n'
        + "def get_item(item_id: str): ...\n"
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.summary() == [("FL107", "app.py", 3)]


def test_suppression_table_of_a_text() -> None:
    text = (
        "x = 1  # noqa\n"
        "y = '# noqa: FL100'\n"
        "z = 2  # noqa: fl100,FL101\n"
        "\f\n"  # a form feed is no line break for positions: line numbers must not shift
        "w = 3  # fusion-lint: ignore[error-contract-empty]\n"
    )
    assert suppressions(text) == {
        1: frozenset({"*"}),
        3: frozenset({"FL100", "FL101"}),
        5: frozenset({"error-contract-empty"}),
    }


def test_per_file_ignores(lint_project) -> None:
    files = {"app.py": bad_reason_tool(""), "legacy/old.py": bad_reason_tool("")}
    by_glob = lint_project(files, config='per-file-ignores = { "legacy/*.py" = ["FL107"] }\n', dedent=False)
    assert by_glob.summary() == [("FL107", "app.py", 3)]
    by_name = lint_project(
        files, config='per-file-ignores = { "old.py" = ["error-contract-reason-format"] }\n', dedent=False
    )
    assert by_name.summary() == [("FL107", "app.py", 3)]
    by_directory = lint_project(files, config='per-file-ignores = { "legacy/" = ["FL107"] }\n', dedent=False)
    assert by_directory.summary() == [("FL107", "app.py", 3)]
    by_prefix = lint_project(files, config='per-file-ignores = { "legacy/*" = ["FL1"] }\n', dedent=False)
    assert by_prefix.summary() == [("FL107", "app.py", 3)]
    other_rule = lint_project(files, config='per-file-ignores = { "legacy/*" = ["FL2"] }\n', dedent=False)
    assert len(other_rule.of("FL107")) == 2
