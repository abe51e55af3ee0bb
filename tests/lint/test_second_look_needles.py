"""The second look's needles (``pipeline.py``), made cheap for issue 19's cost: each file's import
lines taken once, patterns compiled once, registrations pre-filtered by the literal text every
spelling holds. These pin that the cheap forms answer as the plain definitions do."""

from __future__ import annotations

import re

import pytest

from fusion_lint.source.pipeline import calls_one_of, import_tails, imports_module, registers_on


def _imports_module_plainly(data: bytes, module: str, relative: bool) -> bool:
    """The definition: some whole-word occurrence of the name stands after ``from``/``import`` at
    the start of its line."""
    name = (module.rpartition(".")[2] if relative else module).encode()
    for match in re.finditer(rb"\b" + re.escape(name) + rb"\b", data):
        line = data[data.rfind(b"\n", 0, match.start()) + 1 : match.start()].lstrip()
        if line.startswith((b"from ", b"from\t", b"import ", b"import\t")):
            return True
    return False


SOURCES = [
    b"from app.server import mcp\n",
    b"    from .server import mcp  # indented\n",
    b"import\tapp.server as s\n",
    b"server = 1\nprint(server)\n",  # the word, on no import line
    b"x = 1  # from app.server import mcp\n",  # in a comment after code
    b"from app import (\n    server,\n)\n",  # a continuation line is not an import line
    b"from app.servers import mcp\n",  # another word
    b"fromage server\nimporter server\n",
    b"\r\n  from app.server import mcp\r\n",
    b"from app.server.tools import x\nimport app\n",
    b"",
]


@pytest.mark.parametrize("data", SOURCES)
@pytest.mark.parametrize(
    "module, relative",
    [("app.server", False), ("app.server", True), ("app", False), ("server", False), ("tools", True)],
)
def test_imports_module_answers_as_its_definition(data: bytes, module: str, relative: bool) -> None:
    expected = _imports_module_plainly(data, module, relative)
    assert imports_module(data, module, relative) is expected
    assert imports_module(data, module, relative, import_tails(data)) is expected


@pytest.mark.parametrize(
    "data, names, expected",
    [
        (b"@mcp.tool()\ndef f(): ...\n", ("mcp",), True),
        (b"@mcp.tool()\ndef f(): ...\n", ("server",), False),
        (b"import app.server as srv\nsrv.add_tool(f)\n", ("server",), True),  # under the name it is imported as
        (b"await mcp.call_tool('x', {})\n", ("mcp",), False),  # calling a tool registers nothing
        (b"@app.call_tool()\nasync def handle(name, args): ...\n", None, True),
        (b"mcp.mount('sub', other)\n", None, True),
        (b"print('decorated with @mcp.tool() in prose')\n", None, False),
        (b"x = mcp\n", ("mcp",), False),  # no needle at all
    ],
)
def test_registers_on(data: bytes, names: tuple[str, ...] | None, expected: bool) -> None:
    assert registers_on(data, names) is expected


def test_calls_one_of() -> None:
    assert calls_one_of(b"audited_tool(mcp, 'x')(fn)\n", ["audited_tool", "other"])
    assert not calls_one_of(b"audited_tool = None\n", ["audited_tool"])
    assert not calls_one_of(b"anything(1)\n", [])
