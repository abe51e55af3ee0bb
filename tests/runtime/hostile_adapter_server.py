"""The hostile handlers of ``hostile_server.py`` under ``@contract`` on a framework (issue 33, DESIGN §13.4).

Run as ``python tests/runtime/hostile_adapter_server.py FRAMEWORK [stdio|http PORT]`` with FRAMEWORK one
of ``mcp1`` (mcp 1.x ``FastMCP``), ``mcpserver`` (mcp 2.x ``MCPServer``) or ``fastmcp``. Each tool is one
thing a handler should not do; ``test_runtime_hostile_adapters.py`` calls them all while ``slow_call``
is in flight and checks that every call is answered and the server stays alive.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail, not_found  # noqa: E402

if sys.version_info < (3, 11):  # pragma: no cover - the backport anyio depends on below 3.11
    from exceptiongroup import BaseExceptionGroup

LATIN1_NAME = os.fsdecode(b"caf\xe9.txt")  # a lone surrogate, as os.listdir returns it
MISSING = ErrorContract(
    reason="missing",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="Nothing has that name",
    recovery="Call slow_call to see that the server still answers.",
)
ERRORS = [MISSING]


class Halt(BaseException):
    """A handler's own BaseException subclass."""


class StopNow(KeyboardInterrupt):
    """A handler's own KeyboardInterrupt subclass (Python never sends one)."""


class ExitQuietly(SystemExit):
    """A handler's own SystemExit subclass."""


_release: asyncio.Event | None = None


def release_event() -> asyncio.Event:
    global _release
    if _release is None:
        _release = asyncio.Event()
    return _release


@contract(errors=ERRORS)
async def slow_call() -> str:
    """Waits until release_slow_call is called, then answers."""
    await asyncio.wait_for(release_event().wait(), timeout=120)
    return "the slow call completed"


@contract(errors=ERRORS)
async def release_slow_call() -> str:
    """Releases slow_call."""
    release_event().set()
    return "released"


@contract(errors=ERRORS)
async def generator_exit() -> str:
    """Raises GeneratorExit."""
    raise GeneratorExit


@contract(errors=ERRORS)
def system_exit() -> str:
    """Raises SystemExit."""
    raise SystemExit(0)


@contract(errors=ERRORS)
def system_exit_subclass() -> str:
    """Raises its own SystemExit subclass."""
    raise ExitQuietly(3)


@contract(errors=ERRORS)
def argparse_exit() -> str:
    """Parses bad arguments: SystemExit(2)."""
    argparse.ArgumentParser(prog="inner").parse_args(["--bogus"])
    return "unreachable"


@contract(errors=ERRORS)
async def custom_base_exception() -> str:
    """Raises its own BaseException subclass."""
    raise Halt("stop everything")


@contract(errors=ERRORS)
async def base_exception_group() -> str:
    """Raises a BaseExceptionGroup."""
    raise BaseExceptionGroup("several", [SystemExit(3), Halt("inner")])


@contract(errors=ERRORS)
async def own_keyboard_interrupt() -> str:
    """Raises KeyboardInterrupt itself (not the operator's Ctrl-C)."""
    raise KeyboardInterrupt


@contract(errors=ERRORS)
def keyboard_interrupt_subclass() -> str:
    """Raises its own KeyboardInterrupt subclass."""
    raise StopNow("halt")


@contract(errors=ERRORS)
def surrogate_message() -> str:
    """Fails with a lone surrogate in its message."""
    raise fail("missing", f"No file named {LATIN1_NAME}")


@contract(errors=ERRORS)
def surrogate_detail() -> str:
    """Fails with a lone surrogate in its data."""
    raise not_found("No such file", {"path": LATIN1_NAME})


@contract(errors=ERRORS)
def surrogate_result() -> str:
    """Returns a lone surrogate."""
    return f"listed {LATIN1_NAME}"


@contract(errors=ERRORS)
def infinite_iterator() -> Any:
    """Returns an endless iterator."""
    return itertools.count()


@contract(errors=ERRORS)
def infinite_in_data() -> str:
    """Fails with an endless iterator in its data."""
    raise not_found("Endless", {"ids": itertools.count()})


@contract(errors=ERRORS)
def fifty_mb_result() -> str:
    """Returns 50 MB of text."""
    return "x" * 50_000_000


@contract(errors=ERRORS)
def huge_crash() -> str:
    """Crashes with 10 MB of text."""
    raise RuntimeError("x" * 10_000_000)


@contract(errors=ERRORS)
async def own_cancelled_task() -> str:
    """Awaits a task it cancelled itself."""
    task = asyncio.create_task(asyncio.sleep(60))
    await asyncio.sleep(0)
    task.cancel()
    await task
    return "unreachable"


@contract(errors=ERRORS)
async def cancellable_wait() -> str:
    """Waits until the client cancels it."""
    await asyncio.sleep(60)
    return "never cancelled"


@contract(errors=ERRORS)
def blocking_wait() -> str:
    """Blocks its thread for two seconds (the client cancels it first)."""
    time.sleep(2)
    return "blocked and done"


TOOLS = [value for value in list(globals().values()) if callable(value) and hasattr(value, "__fusion_contract__")]


def build(framework: str) -> Any:
    if framework == "mcp1":
        from mcp.server.fastmcp import FastMCP

        app: Any = FastMCP("hostile")
    elif framework == "mcpserver":
        from mcp.server.mcpserver import MCPServer

        from mcp_fusion.integrations import mcpserver

        app = mcpserver.install(MCPServer("hostile"))
    else:
        from fastmcp import FastMCP

        from mcp_fusion.integrations import fastmcp

        app = fastmcp.install(FastMCP("hostile"))
    for handler in TOOLS:
        app.tool()(handler)
    return app


def main() -> None:
    from serve_fixture import run  # beside this script: its directory is first on sys.path

    framework = sys.argv[1]
    transport = sys.argv[2] if len(sys.argv) > 2 else "stdio"
    run(framework, build(framework), transport, int(sys.argv[3]) if transport == "http" else None)


if __name__ == "__main__":
    main()
