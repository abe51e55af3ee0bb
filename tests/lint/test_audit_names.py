"""A definition named by a module-level string constant (``@tool(NAME)``), of its file or imported:
the project view resolves it like a contract constant, so messages, the tool-name vocabulary of
FL401 and the lockfile use the real name. A name computed at run time is labelled by the function
it registers: ``tool handler (name computed)``, never a placeholder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HEADER = "from mcp_fusion import tool, resource, ErrorContract, JsonRpcErrorCode\n"


def tool_with(name_expr: str, recovery: str = "Call get_invoice again with a valid invoice id.") -> str:
    return (
        f"@tool({name_expr}, errors=[ErrorContract(reason='gone', code=JsonRpcErrorCode.NOT_FOUND, "
        f"when='Gone', recovery={recovery!r})])\ndef handler():\n    return 1\n"
    )


@pytest.mark.parametrize(
    "files",
    [
        {"app.py": HEADER + "NAME = 'get_invoice'\n" + tool_with("NAME")},
        {"app.py": HEADER + "NAME: str = 'get_' 'invoice'\n" + tool_with("name=NAME")},
        {"names.py": "GET = 'get_invoice'\n", "app.py": HEADER + "from names import GET\n" + tool_with("GET")},
        {
            "names.py": "GET = 'get_invoice'\nALIAS = GET\n",
            "app.py": HEADER + "import names\n" + tool_with("names.ALIAS"),
        },
    ],
    ids=["same-file", "annotated-concatenated-keyword", "imported", "alias-through-module-attribute"],
)
def test_a_constant_name_is_resolved(files: dict[str, str], lint_project) -> None:
    # The recovery names the tool itself: FL401 knows it, and the message names it.
    linted = lint_project(files, select=["FL401"])
    unknown = lint_project(
        {**files, "app.py": files["app.py"].replace("get_invoice again", "fetch_invoice again")}, select=["FL401"]
    )

    assert linted.diagnostics == []
    assert [d.message.split(":")[0] for d in unknown.diagnostics] == ["tool 'get_invoice'"]


@pytest.mark.parametrize(
    "name_expr, setup",
    [
        ("f'{PREFIX}_invoice'", "PREFIX = 'get'\n"),
        ("make_name()", "def make_name():\n    return 'x'\n"),
        ("NAMES['get']", "NAMES = {'get': 'get_invoice'}\n"),
        ("UNKNOWN", ""),
    ],
    ids=["f-string", "call", "subscript", "unbound"],
)
def test_a_computed_name_is_labelled_by_its_function(name_expr: str, setup: str, lint_project) -> None:
    linted = lint_project({"app.py": HEADER + setup + tool_with(name_expr, recovery="Retry")}, select=["FL112"])

    assert [d.message.split(":")[0] for d in linted.diagnostics] == ["tool handler (name computed)"]


def test_a_resource_uri_constant_is_resolved(lint_project) -> None:
    source = HEADER + "URI = 'invoice://{id}'\n@resource(URI, errors=[])\ndef read(id: str):\n    return 1\n"

    linted = lint_project({"app.py": source}, select=["FL101"])

    assert len(linted.diagnostics) == 1
    assert linted.diagnostics[0].message.startswith("resource 'invoice://{id}': ")


def test_the_lockfile_records_the_resolved_name(tmp_path: Path, run_cli) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "names.py").write_text("GET = 'get_invoice'\n")
    (tmp_path / "app.py").write_text(HEADER + "from names import GET\n" + tool_with("GET"))

    outcome = run_cli("lock", "--no-cache")

    assert outcome.exit_code == 0, outcome.stderr
    assert list(json.loads((tmp_path / "fusion-contracts.lock").read_text())["tools"]) == ["get_invoice"]


def test_a_computed_resource_uri_and_an_unresolved_handler_say_so(lint_project) -> None:
    source = (
        HEADER
        + "def make_uri():\n    return 'invoice://{id}'\n"
        + "@resource(make_uri(), errors=[])\ndef read(id: str):\n    return 1\n"
    )
    linted = lint_project({"app.py": source}, select=["FL101"])
    assert [d.message.split(":")[0] for d in linted.diagnostics] == ["resource read (URI computed)"]

    # A framework tool whose name and handler are both computed (FL190): the kind and what is computed.
    framework = (
        "from mcp.server.fastmcp import FastMCP\n"
        "mcp = FastMCP('billing')\n"
        "def make_handler(n):\n    return lambda: n\n"
        "for n in range(3):\n    mcp.tool(name=f'tool_{n}')(make_handler(n))\n"
    )
    linted = lint_project({"app.py": framework}, select=["FL190"])
    labels = {d.message.split(":")[0] for d in linted.diagnostics}
    assert labels == {"tool (name computed)"}, [d.message for d in linted.diagnostics]
    assert not any("<dynamic>" in d.message for d in linted.diagnostics)
