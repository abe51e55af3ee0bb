"""A pathological buffer in the editor (DESIGN §12.4, issue 17): how long ``fusion-lint lsp`` takes
to answer a 3.7 MB buffer, how much memory the server itself uses meanwhile, and how long a small
document opened during that lint waits for its diagnostics.

The server runs as a subprocess; the buffer is generated tool modules (``bench/corpus.py``) joined
to the size asked. The server's peak resident memory is its ``VmHWM`` (Linux). Before issue 17 the
buffer was linted in the server: 53 s, 2.9 GB.

Usage: ``python bench/lsp_big_buffer.py [--megabytes 3.7]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import tool_module  # noqa: E402


class Server:
    """The language server over stdio, with the messages it sent collected by a reader thread."""

    def __init__(self, cwd: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fusion_lint", "lsp"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.messages: list[tuple[float, dict]] = []
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while (header := stream.readline()) not in (b"\r\n", b""):
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            if not header:
                return
            message = json.loads(stream.read(length))
            with self.arrived:
                self.messages.append((time.perf_counter(), message))
                self.arrived.notify_all()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def wait(self, matches: Callable[[dict], bool], timeout: float = 300) -> float:
        with self.arrived:
            found = self.arrived.wait_for(lambda: any(matches(m) for _, m in self.messages), timeout)
            if not found:
                raise SystemExit("no answer from the server")
            return next(at for at, m in self.messages if matches(m))

    def peak_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")


def buffer_of(megabytes: float) -> str:
    parts, index = [tool_module(0)], 1000
    while sum(map(len, parts)) < megabytes * 1_000_000:
        parts.append(tool_module(index).replace("from __future__ import annotations\n", ""))
        index += 1
    return "".join(parts)


def published(uri: str) -> Callable[[dict], bool]:
    return lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=float, default=3.7)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
        big, small = (
            buffer_of(arguments.megabytes),
            'from mcp_fusion import tool\n\n\n@tool("t")\ndef t():\n    raise ValueError()\n',
        )
        server = Server(root)
        server.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
            }
        )
        server.wait(lambda m: m.get("id") == 1)
        server.send({"method": "initialized", "params": {}})

        def open_document(name: str, text: str) -> tuple[str, float]:
            uri = (root / name).as_uri()
            started = time.perf_counter()
            server.send(
                {
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
                }
            )
            return uri, started

        warm, started = open_document("warm.py", small)  # the fork server starts on the first lint
        server.wait(published(warm))
        big_uri, big_started = open_document("big.py", big)
        time.sleep(0.5)
        other, other_started = open_document("other.py", small)
        other_s = server.wait(published(other)) - other_started
        big_s = server.wait(published(big_uri)) - big_started
        answer = next(m for _, m in server.messages if published(big_uri)(m))["params"]["diagnostics"]
        print(f"buffer: {len(big.encode()) / 1e6:.1f} MB, {big.count(chr(10))} lines")
        print(
            f"big buffer answered in {big_s:.1f} s: {len(answer)} diagnostics"
            + (f" ({answer[0]['code']}: {answer[0]['message']})" if len(answer) == 1 else "")
        )
        print(f"a small document opened meanwhile: answered in {other_s * 1000:.0f} ms")
        print(f"server peak memory (VmHWM): {server.peak_mb():.0f} MB")
        server.send({"id": 2, "method": "shutdown"})
        server.wait(lambda m: m.get("id") == 2)
        server.send({"method": "exit"})
        server.process.wait(timeout=30)


if __name__ == "__main__":
    main()
