"""FL306 through a helper (issue 31, DESIGN §13.3 recall): a tool that returns what a helper of the
project returns, where the helper returns a failure as an ordinary value, is reported at the tool's
return naming the helper; an edit of the helper's file is seen warm as cold."""

from __future__ import annotations

from pathlib import Path

from cli_support import lint_json
from harness import lint_sources

TOOLS = """\
from mcp.server.fastmcp import FastMCP

from app.responses import error_response, fetch_page, render

mcp = FastMCP("pages")


@mcp.tool()
async def get_page(url: str) -> str:
    return await fetch_page(url)


@mcp.tool()
def check_url(url: str) -> dict:
    if not url.startswith("https://"):
        return error_response("Only https URLs are served.")
    return {"url": url}


@mcp.tool()
def show(url: str) -> str:
    return render(url)
"""
RESPONSES = """\
import httpx


class ErrorResponse:
    def __init__(self, message: str):
        self.message = message


def error_response(message: str) -> dict:
    return {"error": message, "success": False}


async def fetch_page(url: str) -> str:
    try:
        return (await httpx.AsyncClient().get(url)).text
    except httpx.HTTPError as error:
        return f"Error: could not fetch {url}: {error}"


def render(url: str) -> str:
    return f"Page {url}"
"""


def fl306(report) -> list[tuple[int, str]]:
    return [(d.span.line, d.message) for d in report.diagnostics if d.code == "FL306"]


def test_a_helpers_failure_is_reported_at_the_tools_return() -> None:
    found = fl306(lint_sources({"app/__init__.py": "", "app/tools.py": TOOLS, "app/responses.py": RESPONSES}))
    assert [line for line, _ in found] == [10, 16], found  # not show(): render returns data on every path
    assert "returns what fetch_page() returns" in found[0][1] and "responses.py:17" in found[0][1]
    assert "a string starting 'Error:'" in found[0][1]
    assert "returns what error_response() returns" in found[1][1] and "its parameter 'message'" in found[1][1]


def test_an_error_model_a_helper_builds_is_a_failure() -> None:
    responses = RESPONSES.replace('return {"error": message, "success": False}', "return ErrorResponse(message)")
    found = fl306(lint_sources({"app/__init__.py": "", "app/tools.py": TOOLS, "app/responses.py": responses}))
    assert [line for line, _ in found] == [10, 16]
    assert "a ErrorResponse(...)" in found[1][1]


def test_a_helper_returning_only_data_is_not_reported() -> None:
    responses = RESPONSES.replace('return f"Error: could not fetch {url}: {error}"', "raise").replace(
        'return {"error": message, "success": False}', 'return {"note": message}'
    )
    assert fl306(lint_sources({"app/__init__.py": "", "app/tools.py": TOOLS, "app/responses.py": responses})) == []


def lines(root: Path, *args: str) -> list[int]:
    return [d["location"]["row"] for d in lint_json(root, "--select", "FL306", *args)]


def test_an_edit_of_the_helpers_file_is_seen_warm_as_cold(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "tools.py").write_text(TOOLS)
    (tmp_path / "app" / "responses.py").write_text(RESPONSES)
    assert lines(tmp_path) == lines(tmp_path, "--no-cache") == [10, 16]
    assert lines(tmp_path) == [10, 16]  # warm
    # The helper stops returning its failure: only the other tool is left, warm as cold.
    (tmp_path / "app" / "responses.py").write_text(
        RESPONSES.replace('return f"Error: could not fetch {url}: {error}"', "raise")
    )
    assert lines(tmp_path) == lines(tmp_path, "--no-cache") == [16]
    # And back.
    (tmp_path / "app" / "responses.py").write_text(RESPONSES)
    assert lines(tmp_path) == [10, 16]
