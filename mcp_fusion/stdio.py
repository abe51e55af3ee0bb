"""The stdio transport ``FusionServer.run()`` serves on: the SDK's, with a stdin Ctrl-C can interrupt.

The SDK's ``stdio_server()`` reads stdin in a worker thread that nothing can interrupt, so Ctrl-C
(or any cancellation) waits until the client closes the pipe. Here a daemon thread reads the
wire's stdin and hands each line to the event loop, so cancelling the server never waits for a
blocked read and the process exits at once. As the SDK does, the wire gets private duplicates of
fd 0 and fd 1 while serving: fd 0 reads EOF and fd 1 goes to stderr, so a handler's ``print()``,
``input()`` or child process can never write into (or read from) the protocol stream.
"""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.stdio import stdio_server


@asynccontextmanager
async def fusion_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` of the process's stdin and stdout, as ``stdio_server()`` gives."""
    if sys.platform == "win32":  # pragma: no cover - the SDK handles Windows' std handles itself
        async with stdio_server() as streams:
            yield streams
        return
    wire_in, wire_out = os.dup(0), os.dup(1)
    _divert(0, os.open(os.devnull, os.O_RDONLY))
    _divert(1, os.dup(2))
    try:
        stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire_out, "wb", closefd=False), encoding="utf-8"))
        async with stdio_server(stdin=_StdinLines(wire_in), stdout=stdout) as streams:  # type: ignore[arg-type]  # _StdinLines is the async line iterator the SDK reads, not an anyio file
            yield streams
    finally:
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


def _divert(fd: int, replacement: int) -> None:
    os.dup2(replacement, fd)
    os.close(replacement)


class _StdinLines:
    """The lines of a file descriptor, read by a daemon thread (``async for line in ...``)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        send, receive = anyio.create_memory_object_stream[str](16)
        token = anyio.lowlevel.current_token()

        def pump() -> None:
            # closefd=False: the descriptor outlives this thread, which may still block on it.
            text = io.TextIOWrapper(os.fdopen(self._fd, "rb", closefd=False), encoding="utf-8", errors="replace")
            try:
                for line in text:
                    anyio.from_thread.run(send.send, line, token=token)
                anyio.from_thread.run(send.aclose, token=token)
            except Exception:  # noqa: BLE001 - the server stopped listening (closed stream, finished loop)
                return

        threading.Thread(target=pump, name="mcp_fusion stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line
