"""Helpers shared by the runtime tests (a uniquely named module: tests/ has no packages)."""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses what is not JSON (NaN, Infinity)."""
    return json.loads(text, parse_constant=_refuse_constant)


def parse_envelope_strictly(text: str) -> Any:
    """The envelope text, read by a strict parser: an XML element, or a JSON object."""
    if text.lstrip().startswith("{"):
        return strict_json(text)
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ValueError("an envelope never carries a DTD")
    return ElementTree.fromstring(text)


@dataclass
class StdioRecording:
    """What a recorded stdio session saw: every stdout line, and the process."""

    process: Any = None
    lines: list[bytes] = field(default_factory=list)
    exit_code_after_eof: int | None = None


@asynccontextmanager
async def recorded_stdio(
    args: Sequence[str],
    *,
    cwd: Path = REPO_ROOT,
    stderr: Any = None,
    eof_timeout: float = 20,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[Any, StdioRecording]]:
    """A client transport over a real pipe to ``python *args`` that records every stdout line.

    Yields ``(transport, recording)``: pass the transport to ``mcp.Client``. On exit stdin is
    closed (EOF) and the process is given ``eof_timeout`` seconds to exit by itself;
    ``recording.exit_code_after_eof`` stays ``None`` when it did not (it is killed then).
    """
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    recording = StdioRecording()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = await anyio.open_process(
        [sys.executable, *args], cwd=str(cwd), env=env, stderr=stderr if stderr is not None else sys.stderr
    )
    recording.process = process
    to_client_send, to_client = anyio.create_memory_object_stream[Any](1000)
    from_client, from_client_receive = anyio.create_memory_object_stream[Any](1000)

    async def read_stdout() -> None:
        buffer = b""
        async with to_client_send:
            try:
                async for chunk in process.stdout:
                    buffer += chunk
                    *complete, buffer = buffer.split(b"\n")
                    for line in complete:
                        recording.lines.append(line)
                        try:
                            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        except Exception as exc:  # noqa: BLE001 - a non-frame is recorded, the test judges it
                            await to_client_send.send(exc)
                            continue
                        await to_client_send.send(SessionMessage(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
        if buffer:
            recording.lines.append(buffer)

    async def write_stdin() -> None:
        async with from_client_receive:
            async for session_message in from_client_receive:
                text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await process.stdin.send((text + "\n").encode("utf-8"))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    return

    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        yield to_client, from_client

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(write_stdin)
        try:
            yield transport(), recording
        finally:
            with anyio.CancelScope(shield=True):
                await process.stdin.aclose()
                with anyio.move_on_after(eof_timeout):
                    recording.exit_code_after_eof = await process.wait()
                if recording.exit_code_after_eof is None:
                    process.kill()
                    await process.wait()
            group.cancel_scope.cancel()
