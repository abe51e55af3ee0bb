"""The docs' test examples run as written (DESIGN §13.5): every ```python block of the README and of
``docs/*.md`` that defines a ``test_`` function is run by pytest, in a subprocess from the
repository's root, exactly as a reader would paste it — async ones under their ``@pytest.mark.anyio``.

A page whose examples use what the page built earlier (``docs/adopting.md``'s helpdesk server)
gets that in a prelude here, never inside the block: the block is the page's text, byte for byte.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
TEST = re.compile(r"^(?:async )?def (test_\w+)", re.MULTILINE)

#: What a page's examples lean on from the page itself: docs/adopting.md's helpdesk server (its
#: ``add_comment`` under the contract of step 3, the service failing TKT-9 as closed) and the client
#: its second example receives.
PRELUDES = {
    "docs/adopting.md": '''
import pytest

from mcp_fusion import ErrorContract, JsonRpcErrorCode, conflict, contract

try:
    from mcp.server.mcpserver import MCPServer as _Server  # mcp 2.x
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as _Server

CLOSED = ErrorContract(
    reason="ticket_closed", code=JsonRpcErrorCode.CONFLICT, thrown_by="service",
    when="The ticket is closed",
    recovery="Ask the user whether to reopen it with reopen_ticket, then call add_comment again.",
)
mcp = _Server("helpdesk")


@mcp.tool()
@contract(errors=[CLOSED])
async def add_comment(ticket_id: str, body: str) -> str:
    if ticket_id == "TKT-9":  # what the service layer of step 4 raises for a closed ticket
        raise conflict(f"Ticket {ticket_id} is closed", {"reason": "ticket_closed"})
    return "Comment added."


@pytest.fixture
async def client():
    """An in-memory client of the page's server."""
    try:
        from mcp import Client  # mcp 2.x
    except ImportError:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(mcp._mcp_server) as session:
            yield session
        return
    async with Client(mcp) as connected:
        yield connected
''',
}


def _test_blocks() -> list[tuple[str, int, str]]:
    """(page, index, block) for each example that is a test."""
    found = []
    for page in PAGES:
        for index, block in enumerate(BLOCK.findall(page.read_text(encoding="utf-8"))):
            if TEST.search(block):
                found.append((page.relative_to(REPO_ROOT).as_posix(), index, block))
    return found


BLOCKS = _test_blocks()


def test_the_docs_have_test_examples_and_each_async_one_is_marked() -> None:
    pages = {page for page, _, _ in BLOCKS}
    assert {"docs/runtime.md", "docs/adopting.md"} <= pages, pages
    for page, index, block in BLOCKS:
        for match in re.finditer(r"^async def (test_\w+)", block, re.MULTILINE):
            before = block[: match.start()].rstrip().splitlines()
            assert before and before[-1].startswith("@pytest.mark.anyio"), f"{page} block {index}: {match.group(1)}"


@pytest.mark.slow
@pytest.mark.parametrize(("page", "index", "block"), BLOCKS, ids=[f"{p}-{i}" for p, i, _ in BLOCKS])
def test_a_docs_example_runs_as_written(page: str, index: int, block: str, tmp_path: Path) -> None:
    pytest.importorskip("anyio")
    test_file = tmp_path / f"test_docs_example_{index}.py"
    test_file.write_text(PRELUDES.get(page, "") + "\n" + block)
    names = TEST.findall(block)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(test_file)],
        cwd=REPO_ROOT,  # as a reader runs them: from the checkout's root (fixtures/ importable)
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(names)} passed" in done.stdout, done.stdout
