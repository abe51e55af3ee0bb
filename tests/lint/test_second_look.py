"""The pre-scan's second look (DESIGN §10, §12.2): a file that imports a server another module builds
is parsed only when it registers on it — not the tests, entry points and clients that import a server
to run, test or call it. A file that is never parsed reports no syntax error (DESIGN §12.3), which
is how these tests see that it was left alone."""

from __future__ import annotations

import textwrap

import pytest
from harness import lint_sources

from fusion_lint.output.common import summary

SERVER = "from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP('billing')\n"
LOWLEVEL = "from mcp.server.lowlevel import Server\n\nserver = Server('billing')\n"
BROKEN = "\ndef broken(:\n    pass\n"  # parsed, this is FL000


def lint(files: dict[str, str]):
    sources = {"app/__init__.py": "", **{path: textwrap.dedent(text) for path, text in files.items()}}
    return lint_sources(sources, select=["FL000", "FL300"])


def codes(report) -> list[tuple[str, str]]:
    return sorted((d.path.rpartition("/project/")[2], d.code) for d in report.diagnostics)


@pytest.mark.parametrize(
    "name, importer",
    [
        (
            "a test calling the server's tools",
            "from app.server import mcp\n\nasync def test_find():\n    await mcp.call_tool('find', {})\n",
        ),
        ("an entry point running it", "from app.server import mcp\n\nif __name__ == '__main__':\n    mcp.run()\n"),
        ("a module reading its tools", "from app.server import mcp\n\nTOOLS = mcp._tool_manager.list_tools()\n"),
        ("a relative import for its settings", "from .server import mcp\n\nNAME = mcp.name\n"),
        (
            "a test of the registering attribute",
            "from app.server import mcp\n\ndef test_it():\n    assert callable(mcp.tool)\n",
        ),
        (
            "a docstring naming the decorator",
            'from app.server import mcp\n\ndef test_it():\n    """Each tool is decorated with @mcp.tool() in tools.py."""\n',
        ),
    ],
)
def test_a_file_importing_a_server_without_registering_on_it_is_not_parsed(name: str, importer: str) -> None:
    report = lint({"app/server.py": SERVER, "app/other.py": importer + BROKEN})
    assert codes(report) == [], name


@pytest.mark.parametrize(
    "name, server, importer, label",
    [
        (
            "a decorator on the imported name",
            SERVER,
            "from app.server import mcp\n\n@mcp.tool()\ndef find(q: str) -> str:\n    raise KeyError(q)\n",
            "tool 'find'",
        ),
        (
            "a relative import",
            SERVER,
            "from .server import mcp\n\ndef find(q: str) -> str:\n    raise KeyError(q)\n\nmcp.add_tool(find)\n",
            "tool 'find'",
        ),
        (
            "an alias",
            SERVER,
            "from app.server import mcp as billing\n\n@billing.tool\ndef find(q: str) -> str:\n    raise KeyError(q)\n",
            "tool 'find'",
        ),
        (
            "a low-level dispatcher",
            LOWLEVEL,
            "from app.server import server\n\n@server.call_tool()\nasync def call(name: str, arguments: dict):\n"
            "    raise KeyError(name)\n",
            "server 'billing' call_tool",
        ),
    ],
)
def test_a_module_registering_on_an_imported_server_is_still_parsed(
    name: str, server: str, importer: str, label: str
) -> None:
    report = lint({"app/server.py": server, "app/tools.py": importer})
    assert [(path, code) for path, code in codes(report)] == [("app/tools.py", "FL300")], name
    assert report.diagnostics[0].message.startswith(label + ":")
    broken = lint({"app/server.py": server, "app/tools.py": importer + BROKEN})
    assert ("app/tools.py", "FL000") in codes(broken), name


HELPER = """
def logged_tool(mcp, name):
    def decorator(func):
        mcp.tool(name=name)(func)
        return func
    return decorator
"""


def test_a_helper_module_admits_its_callers_only() -> None:
    caller = """
    from app.audit import logged_tool
    from app.server import mcp


    def find(q: str) -> str:
        raise KeyError(q)


    logged_tool(mcp, "find_invoice")(find)
    """
    test = "from app.audit import logged_tool\n\ndef test_it():\n    assert logged_tool\n" + BROKEN
    report = lint(
        {"app/server.py": SERVER, "app/audit.py": HELPER, "app/tools.py": caller, "tests/test_audit.py": test}
    )
    assert codes(report) == [("app/tools.py", "FL300")]
    assert report.diagnostics[0].message.startswith("tool 'find_invoice':")
    assert summary(report).endswith("(1 tool; 5 files checked).")


def test_a_module_that_only_builds_a_server_is_read_when_someone_registers_on_it() -> None:
    """``server.py`` builds the server and registers nothing: the pre-scan leaves it, and it is read
    (for its framework) only because ``tools.py`` registers on it."""
    tools = "from app.server import app\n\n@app.tool()\ndef find(q: str) -> str:\n    raise KeyError(q)\n"
    report = lint({"app/server.py": "from fastmcp import FastMCP\n\napp = FastMCP('billing')\n", "app/tools.py": tools})
    [finding] = report.diagnostics
    assert "`Error calling tool 'find': <its text>` (fastmcp)" in finding.message  # the server's framework, read
    # nobody registers on it: never parsed (its syntax error unseen)
    alone = lint(
        {
            "app/server.py": "from fastmcp import FastMCP\n\napp = FastMCP('billing')\n" + BROKEN,
            "app/main.py": "from app.server import app\n\napp.run()\n",
        }
    )
    assert codes(alone) == []


def test_a_test_module_calling_a_helper_on_a_double_is_not_parsed() -> None:
    """A test calls the registration helper on a mock: nothing it registers is served."""
    double = (
        "import pytest\nfrom unittest.mock import MagicMock\nfrom app.audit import logged_tool\n\n"
        "def test_it():\n    logged_tool(MagicMock(), 'x')(print)\n"
    )
    report = lint({"app/audit.py": HELPER, "tests/test_audit.py": double + BROKEN})
    assert codes(report) == []
    # the same call outside a test module is read (and its syntax error seen)
    caller = "from app.audit import logged_tool\n\ndef register(mcp):\n    logged_tool(mcp, 'x')(print)\n"
    assert codes(lint({"app/audit.py": HELPER, "app/tools.py": caller + BROKEN})) == [("app/tools.py", "FL000")]


@pytest.mark.parametrize(
    "name, text, parsed",
    [
        ("a mount of one bare name (no prefix)", "mcp.mount(billing)\n", False),
        ("a mount with a prefix", "mcp.mount(billing, prefix='bill')\n", True),
        ("an old positional prefix", "mcp.mount('bill', billing)\n", True),
        ("a registration quoted in a docstring", 'def f():\n    """Usage:\n\n    mcp.tool()(f)\n    """\n', False),
        ("a registration after a docstring", '"""Tools."""\n\nmcp.tool()(print)\n', True),
    ],
)
def test_the_pre_scan_reads_registration_words_in_code_only(name: str, text: str, parsed: bool) -> None:
    source = "from fastmcp import FastMCP\nfrom app.sub import billing\n\n" + text + BROKEN
    report = lint({"app/sub.py": "BILLING = 1\n", "app/main.py": source})
    assert (("app/main.py", "FL000") in codes(report)) is parsed, name
