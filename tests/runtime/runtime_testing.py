"""Helpers shared by the runtime tests (a uniquely named module: tests/ has no packages)."""
from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

REPO_ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def connected(server: Any, **client_options: Any) -> AsyncIterator[Any]:
    """An ``mcp.Client`` talking to ``server.sdk_server`` in memory."""
    import mcp

    async with mcp.Client(server.sdk_server, **client_options) as client:
        yield client


def envelope_text(result: Any) -> str:
    """The text of a result's first content block (where the envelope travels)."""
    assert result.content, "the result has no content"
    return result.content[0].text
