"""False positives the judged corpus sample found (docs/precision.md), each as the smallest project
that shows it, with the true positive next to it so that the fix cannot simply silence the rule."""

from __future__ import annotations

from harness import lint_sources

DECORATORS = """
from functools import wraps


def handle_exceptions(func):
    @wraps(func)
    async def wrapper(*args, **kwargs):
        try:
            return await func(*args, **kwargs)
        except Exception as e:
            return {"error": str(e)}
    return wrapper


def log_calls(func):
    @wraps(func)
    async def wrapper(*args, **kwargs):
        try:
            return await func(*args, **kwargs)
        except Exception:
            log("failed")
            raise
    return wrapper
"""

TOOLS = """
from mcp.server.fastmcp import FastMCP

from .common.decorators import handle_exceptions, log_calls

mcp = FastMCP("cache")


def check_name(name: str) -> None:
    if name not in CACHES:
        raise KeyError(name)


@mcp.tool(name="flush-cache")
@handle_exceptions
async def flush_cache(name: str) -> dict:
    check_name(name)
    return {"flushed": name}


@mcp.tool(name="drop-cache")
@log_calls
async def drop_cache(name: str) -> dict:
    check_name(name)
    return {"dropped": name}
"""


def findings(code: str, sources: dict[str, str]) -> list[tuple[str, int, str]]:
    report = lint_sources(sources, select=[code])
    return [(d.path.rpartition("/")[2], d.span.line, d.message) for d in report.diagnostics]


def subject(message: str) -> str:
    """``tool 'x'`` / ``resource 'uri'``: what a message is about."""
    return message.split("': ", 1)[0] + "'"


def test_fl300_a_catch_all_decorator_in_another_module_absorbs_the_raise() -> None:
    """elasticache-mcp-server: ``@mcp.tool(...)`` over ``@handle_exceptions`` (common/decorators.py),
    whose wrapper returns ``{"error": str(e)}``: the helper's raise never reaches FastMCP. A
    decorator that logs and re-raises lets it through, and the message names only that tool. (The
    probe is a ``KeyError``: the corpus's literal-message ValueError is no longer FL300 on FastMCP.)"""
    found = findings(
        "FL300",
        {
            "app/__init__.py": "",
            "app/common/__init__.py": "",
            "app/common/decorators.py": DECORATORS,
            "app/tools.py": TOOLS,
        },
    )
    assert [(name, line) for name, line, _ in found] == [("tools.py", 11)]
    assert "tool 'drop-cache'" in found[0][2] and "flush-cache" not in found[0][2]


def test_fl307_a_name_is_followed_only_below_its_assignment_in_the_except_clause() -> None:
    """prometheus-mcp-server: ``error_msg`` is a literal where the try body raises it; the
    ``error_msg = f"...{e}"`` of the except clause below is another value. After the clause, the
    name does hold the exception's text."""
    found = findings(
        "FL307",
        {
            "server.py": """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("metrics")


@mcp.tool()
async def run_query(query: str) -> str:
    try:
        if not query:
            error_msg = "Query validation failed"
            raise ValueError(error_msg)
        return await execute(query)
    except OSError as e:
        error_msg = f"Query failed: {e}"
    return error_msg
"""
        },
    )
    assert [(name, line) for name, line, _ in found] == [("server.py", 16)]


def test_fl300_a_resource_is_not_told_it_is_a_tool() -> None:
    """amazon-neptune-mcp-server: one helper's ValueError escapes to two resources and two tools;
    elevenlabs-mcp: a resource template raises FileNotFoundError. FastMCP answers a resource read
    with a JSON-RPC error, not `Error executing tool ...`: one finding says that, naming the
    resources; the other names the tools with the tool message."""
    found = findings(
        "FL300",
        {
            "server.py": """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("graph")


def graph():
    if disconnected():
        raise ValueError
    return GRAPH


@mcp.resource("graph://status")
def status() -> str:
    return graph().status()


@mcp.tool()
def run_query(query: str) -> str:
    return graph().run(query)
"""
        },
    )
    # One diagnostic at the raise (issue 31: one finding per location), each part after its labels.
    ((_, line, message),) = found
    assert line == 9 and subject(message) == "resource 'graph://status'"
    for_resource, for_tool = message.split("; and for ")
    assert "a JSON-RPC error carrying its text (mcp 1.x FastMCP), not a resource" in for_resource
    assert "Error executing tool" not in for_resource
    assert for_tool.startswith("tool 'run_query': ")
    assert "`Error executing tool run_query: <its text>`" in for_tool
