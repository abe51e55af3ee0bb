"""A FusionServer whose tools do everything a handler should not (issue 16), served on stdio.

Run as ``python tests/runtime/hostile_server.py LOG_FILE [xml|json]``. Every log record is written to
LOG_FILE as one JSON line (``{"level", "logger", "text"}``) so the test can measure each record.
Each tool is one defect the runtime must survive: the test calls them all over a real pipe while
``slow_call`` is in flight, then checks every answer, the process and the bytes on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import os
import sys
import tempfile
from typing import Any

from pydantic import BaseModel

from mcp_fusion import (
    Context,
    ErrorContract,
    FusionServer,
    JsonRpcErrorCode,
    McpError,
    internal_error,
    not_found,
    prompt,
    rate_limited,
    resource,
    tool,
    tool_error,
)

if sys.version_info < (3, 11):  # pragma: no cover - the backport anyio depends on below 3.11
    from exceptiongroup import BaseExceptionGroup

LATIN1_NAME = os.fsdecode(b"caf\xe9.txt")  # a lone surrogate, as os.listdir returns it
TEN_MB = "x" * 10_000_000

MISSING = ErrorContract(
    reason="missing",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="Nothing has that name",
    recovery="Call slow_call to see that the server still answers.",
)


class Halt(BaseException):
    """A handler's own BaseException subclass."""


class Report(BaseModel):
    title: str
    pages: int


_release: asyncio.Event | None = None


def release_event() -> asyncio.Event:
    global _release
    if _release is None:
        _release = asyncio.Event()
    return _release


@tool("slow_call", description="Waits until release_slow_call is called, then answers.")
async def slow_call() -> str:
    await asyncio.wait_for(release_event().wait(), timeout=120)
    return "the slow call completed"


@tool("release_slow_call")
async def release_slow_call() -> str:
    release_event().set()
    return "released"


@tool("cancellable_wait", description="Waits until the client cancels it.")
async def cancellable_wait() -> str:
    await asyncio.sleep(60)
    return "never cancelled"


@tool("listdir_latin1")
def listdir_latin1() -> list[str]:
    folder = tempfile.mkdtemp()
    open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "w").close()
    return os.listdir(folder)


@tool("surrogate_message", errors=[MISSING])
def surrogate_message(ctx: Context) -> str:
    raise ctx.fail("missing", f"No file named {LATIN1_NAME}")


@tool("surrogate_detail")
def surrogate_detail() -> str:
    raise not_found("No such file", {"path": LATIN1_NAME, LATIN1_NAME: "as a key too"})


@tool("argparse_exit")
def argparse_exit() -> str:
    argparse.ArgumentParser(prog="inner").parse_args(["--bogus"])  # SystemExit(2)
    return "unreachable"


@tool("system_exit")
def system_exit() -> str:
    raise SystemExit(0)


@tool("custom_base_exception")
async def custom_base_exception() -> str:
    raise Halt("stop everything")


@tool("base_exception_group")
async def base_exception_group() -> str:
    raise BaseExceptionGroup("several", [SystemExit(3), Halt("inner")])


@tool("own_keyboard_interrupt")
async def own_keyboard_interrupt() -> str:
    raise KeyboardInterrupt  # the handler's own, not the operator's Ctrl-C: answered like any exception


@tool("generator_exit")
async def generator_exit() -> str:
    raise GeneratorExit


@tool("own_cancelled_task")
async def own_cancelled_task() -> str:
    task = asyncio.create_task(asyncio.sleep(60))
    await asyncio.sleep(0)
    task.cancel()
    await task  # CancelledError: the tool's own, not the client's
    return "unreachable"


@tool("infinite_iterator")
def infinite_iterator() -> Any:
    return itertools.count()


@tool("infinite_in_data")
def infinite_in_data() -> str:
    raise not_found("Endless", {"ids": itertools.count()})


@tool("unserialisable_data")
def unserialisable_data() -> str:
    raise not_found("No such socket", {"lock": object(), "nested": {"also": object()}})


@tool("huge_int_data")
def huge_int_data() -> str:
    raise not_found("Too big", {"n": 10**5000, "ok": 7})


@tool("huge_int_result")
def huge_int_result() -> Any:
    return {"n": 10**5000}


@tool("non_str_message")
def non_str_message() -> str:
    raise McpError(JsonRpcErrorCode.NOT_FOUND, 12345)  # type: ignore[arg-type]


@tool("tuple_key")
def tuple_key() -> str:
    raise not_found("Tuple keyed", {(1, 2): "pair", "plain": "value"})


@tool("many_arguments", description="Takes one argument; callers send 100,000.")
def many_arguments(name: str = "") -> str:
    return name


@tool("echo_fail", errors=[MISSING])
def echo_fail(ctx: Context) -> str:
    raise ctx.fail("missing", TEN_MB, {"echo": TEN_MB, "many": list(range(100_000))})


@tool("huge_crash")
def huge_crash() -> str:
    raise RuntimeError(TEN_MB)


@tool("severity_in_data")
def severity_in_data() -> str:
    raise not_found("Not there", {"severity": "warning"})


@tool("credentials")
def credentials() -> str:
    raise not_found(
        "No account",
        {
            "user": "ada",
            "password": "hunter2",
            "token": "tok_secret",
            "ctx": {"auth": "Bearer secret", "region": "eu"},
            "rows": [{"api_key": "k_secret", "id": 1}],
            "Session": "sess_secret",
            "accessToken": "secret_access",
        },
    )


@tool("warning_with_result")
def warning_with_result() -> Report:
    return tool_error("DEPRECATED", "pages= is deprecated").severity("warning").result(Report(title="t", pages=1))


@tool("warning_without_result")
def warning_without_result() -> Report:
    return tool_error("DEPRECATED", "This endpoint is deprecated.").severity("warning")  # type: ignore[return-value]


@tool("schema_mismatch")
def schema_mismatch() -> Report:
    return {"title": 3}  # type: ignore[return-value]


@tool("deprecated_warning")
def deprecated_warning() -> str:
    return tool_error("DEPRECATED", "This endpoint is deprecated.").severity("warning")  # type: ignore[return-value]


@tool("server_busy")
def server_busy() -> str:
    raise (
        tool_error("SERVER_BUSY", "At capacity (8 active, 32 queued).")
        .suggest("Reduce the number of concurrent calls to this tool.")
        .retry_after(5)
    )


@tool("custom_code")
def custom_code() -> str:
    return (
        tool_error("PROJECT_NOT_FOUND", "Project 'proj_xyz' does not exist.")
        .suggest(  # type: ignore[return-value]
            "Call slow_call first to get valid IDs, then retry."
        )
        .actions("slow_call")
    )


@tool("internal_error_factory")
def internal_error_factory() -> str:
    raise internal_error("The cache is corrupt")


@tool("undeclared_reason", errors=[MISSING])
def undeclared_reason(ctx: Context) -> str:
    raise ctx.fail("not_in_the_contract")


@tool("retry_after_nan")
def retry_after_nan() -> str:
    raise rate_limited("Slow down", {"retry_after": float("nan"), "ratio": float("inf"), "loss": float("-inf")})


@tool("carriage_return")
def carriage_return() -> str:
    raise not_found("line one\r\nline two\rline three", {"cr\rkey": "a\rb", "tab\tkey": "c\td"})


@tool("colliding_keys")
def colliding_keys() -> str:
    raise not_found("Collide", {1: "the int", "1": "the string"})


@tool("circular_data")
def circular_data() -> str:
    data: dict[str, Any] = {"name": "loop"}
    data["self"] = data
    raise not_found("Circular", data)


@tool("deep_result")
def deep_result() -> Any:
    value: Any = []
    for _ in range(100_000):
        value = [value]
    return value


@tool("prints_to_stdout")
def prints_to_stdout() -> str:
    print("this line must not reach the protocol stream")
    sys.stdout.flush()
    os.write(1, b"nor this one\n")
    return "printed"


@resource("hostile://files/{name}", errors=[MISSING])
def hostile_file(name: str, ctx: Context) -> str:
    if name == "missing":
        raise ctx.fail("missing", f"No file {LATIN1_NAME}")
    raise SystemExit(1)


@prompt("hostile_prompt")
def hostile_prompt(topic: str) -> str:
    if topic == "crash":
        raise Halt("prompt halted")
    return f"Write about {topic}."


class JsonLines(logging.Handler):
    """One JSON line per record: what the test measures."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.stream = open(path, "a", encoding="utf-8", errors="backslashreplace")

    def emit(self, record: logging.LogRecord) -> None:
        text = self.format(record)
        self.stream.write(json.dumps({"level": record.levelno, "logger": record.name, "text": text}) + "\n")
        self.stream.flush()


TOOLS = [definition for definition in list(globals().values()) if type(definition).__name__ == "ToolDefinition"]


def main() -> None:
    log_file, envelope = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "xml"
    logging.basicConfig(level=logging.DEBUG, handlers=[JsonLines(log_file)])
    FusionServer("hostile", tools=TOOLS, resources=[hostile_file], prompts=[hostile_prompt], envelope=envelope).run()


if __name__ == "__main__":
    main()
