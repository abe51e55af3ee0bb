"""Runtime names re-exported through a project module (DESIGN §4 "recognition by qualified name").

``myapp/api.py`` imports ``tool``, ``not_found``, ... from the runtime, and the tool modules import
them from ``myapp.api``. One file cannot see another, so the extractor records what it assumed
(``model.Assumptions``) and the project view confirms it by following the re-export chain; a name
that turns out to be the project's own is not the runtime's, whatever it is called.
"""

from __future__ import annotations

from pathlib import Path

from fusion_lint.check.engine import Options, lint

API = "from mcp_fusion import tool, resource, not_found, conflict, ErrorContract, JsonRpcErrorCode, Context, McpError\n"

ENTRY = (
    'ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice", '
    'recovery="Call get_invoice again with a valid invoice id.")'
)


def write_project(root: Path, files: dict[str, str]) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for relative, source in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(source)


# The tool module names the runtime only in a comment: the pre-scan admits it (see the last test).
TOOLS = f"""\
# Tools of myapp, built on mcp_fusion through myapp.api.
from myapp.api import tool, not_found, ErrorContract, JsonRpcErrorCode, Context, McpError

@tool("get_invoice", errors=[{ENTRY}])
async def get_invoice(invoice_id: str, ctx: Context):
    if invoice_id == "locked":
        raise McpError(JsonRpcErrorCode.CONFLICT, "Invoice is locked")
    raise not_found("No such invoice")
"""


def test_definitions_contracts_codes_and_raises_through_a_reexporting_module(lint_project) -> None:
    linted = lint_project({"myapp/__init__.py": "", "myapp/api.py": API, "myapp/tools.py": TOOLS})

    assert linted.summary() == [
        ("FL200", "myapp/tools.py", 7),  # McpError(CONFLICT) through the re-export: undeclared
        ("FL301", "myapp/tools.py", 7),  # ... and a factory exists for it
        ("FL201", "myapp/tools.py", 8),  # not_found through the re-export: the declared code
    ]
    assert all(d.message.startswith("tool 'get_invoice': ") for d in linted.diagnostics)


def test_a_chain_of_reexports_a_module_attribute_and_a_star_import(lint_project) -> None:
    files = {
        # The package re-exports what its api module re-exports (relative import, no runtime name).
        "myapp/__init__.py": "from .api import tool, ErrorContract, JsonRpcErrorCode\n",
        "myapp/api.py": "from mcp_fusion import *\n",
        "myapp/a.py": "import mcp_fusion\nfrom myapp import tool, ErrorContract, JsonRpcErrorCode\n\n"
        '@tool("a", errors=[ErrorContract(reason="x", code=JsonRpcErrorCode.NOPE, when="w", '
        'recovery="Call a again with a valid identifier.")])\ndef a():\n    return 1\n',
        "myapp/b.py": 'import mcp_fusion\nfrom myapp import api\n\n@api.tool("b", errors=[])\ndef b():\n    return 1\n',
        "myapp/c.py": 'import mcp_fusion\nfrom myapp.api import *\n\n@tool("c", errors=[])\ndef c():\n    return 1\n',
    }

    linted = lint_project(files)

    assert linted.summary() == [("FL104", "myapp/a.py", 4), ("FL101", "myapp/b.py", 4), ("FL101", "myapp/c.py", 4)]
    assert "JsonRpcErrorCode has no member NOPE" in linted.of("FL104")[0].message


def test_a_project_name_that_is_not_the_runtime_one_is_an_ordinary_name(lint_project) -> None:
    files = {
        "myapp/__init__.py": "",
        # The project's own decorator and its own factory, named like the runtime's.
        "myapp/registry.py": "def tool(name, errors=None):\n    return lambda fn: fn\n",
        "myapp/errors.py": "from mcp_fusion import conflict\n\ndef not_found(message):\n    raise conflict(message)\n",
        "myapp/cli.py": "import mcp_fusion\nfrom myapp.registry import tool\n\n"
        '@tool("not_a_tool", errors=[])\ndef command():\n    raise ValueError("x")\n',
        "myapp/tools.py": f"from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context\n"
        f'from myapp.errors import not_found\n\n@tool("get_invoice", errors=[{ENTRY}])\n'
        "def get_invoice(ctx: Context):\n    raise not_found('No such invoice')\n",
    }

    linted = lint_project(files)

    # No definition from the project's own @tool (no FL101, no FL300); the project's not_found is
    # followed like any function, so what it really raises is seen (FL200 at its raise), and the
    # handler's raise of it is not taken for the runtime factory (no FL201).
    assert linted.summary() == [("FL200", "myapp/errors.py", 4)]


def test_an_entry_built_with_the_projects_own_ErrorContract_is_unresolved(lint_project) -> None:
    files = {
        "myapp/__init__.py": "",
        "myapp/models.py": "class ErrorContract:\n    pass\n",
        "myapp/tools.py": "from mcp_fusion import tool\nfrom myapp.models import ErrorContract\n\n"
        "@tool(\"t\", errors=[ErrorContract(reason='x')])\ndef t():\n    return 1\n",
    }

    linted = lint_project(files, select=["FL1"])

    assert linted.summary() == [("FL190", "myapp/tools.py", 4)]
    assert "myapp.models.ErrorContract()" in linted.diagnostics[0].message


def test_the_per_file_cache_stays_right_when_the_reexporting_module_changes(tmp_path: Path) -> None:
    write_project(tmp_path, {"myapp/__init__.py": "", "myapp/api.py": API, "myapp/tools.py": TOOLS})
    options = lambda: Options(paths=[str(tmp_path)], use_cache=True, jobs=1)  # noqa: E731

    first = lint(options())
    again = lint(options())
    # myapp.api stops re-exporting the runtime: tools.py is unchanged (its facts come from the
    # cache), yet what they assumed is confirmed afresh, so its definition is gone.
    (tmp_path / "myapp/api.py").write_text("def tool(name, errors=None):\n    return lambda fn: fn\n")
    changed = lint(options())

    assert [d.code for d in first.diagnostics] == ["FL200", "FL301", "FL201"]
    assert again.diagnostics == first.diagnostics
    assert changed.diagnostics == []


def test_the_lockfile_locks_a_tool_defined_through_a_reexport(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {"myapp/__init__.py": "", "myapp/api.py": API, "myapp/tools.py": TOOLS})

    outcome = run_cli("lock", "--no-cache")

    assert outcome.exit_code == 0, outcome.stderr
    assert '"get_invoice"' in (tmp_path / "fusion-contracts.lock").read_text()


def test_a_file_that_names_only_the_reexporting_module_is_linted(lint_project) -> None:
    tools = TOOLS.replace("# Tools of myapp, built on mcp_fusion through myapp.api.\n", "")

    linted = lint_project({"myapp/__init__.py": "", "myapp/api.py": API, "myapp/tools.py": tools})

    assert [code for code, _, _ in linted.summary()] == ["FL200", "FL301", "FL201"]
