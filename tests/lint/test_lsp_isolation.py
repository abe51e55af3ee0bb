"""The language server lints buffers with the CLI's isolation and a deadline (DESIGN §12.4,
issue 17: a 3.7 MB buffer took 53 s and grew the server to 2.9 GB; a request after ``shutdown``
was never answered).

No timing is asserted: what matters is that the big buffer gets an answer (diagnostics, or an
FL000 naming the deadline), that a small document opened meanwhile is answered first, and that
the server's own memory stays small. ``bench/lsp_big_buffer.py`` measures the figures.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

from test_lsp import LspClient  # noqa: E402

from fusion_lint.lsp.server import BUFFER_DEADLINE_S  # noqa: E402

SMALL = 'from mcp_fusion import tool\n\n\n@tool("t")\ndef t(item: str) -> dict:\n    raise ValueError(item)\n'
TOOL = """
@tool("get_item_{n}", errors=[
    ErrorContract(reason="item_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item has that id",
                  recovery="Check the id with the user, then call get_item_{n} again."),
])
async def get_item_{n}(item_id: str, ctx: Context) -> dict:
    if not item_id:
        raise ctx.fail("item_missing")
    return {{"id": item_id, "value": [item_id, item_id, item_id, item_id, item_id, item_id]}}
"""


def big_buffer(size: int = 3_700_000) -> str:
    parts = ["from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool\n"]
    total, n = len(parts[0]), 0
    while total < size:
        parts.append(TOOL.format(n=n))
        total += len(parts[-1])
        n += 1
    return "".join(parts)


def initialized(root: Path) -> LspClient:
    """A server for the project at ``root``, past the ``initialize`` handshake."""
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    client = LspClient(root)
    client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    return client


def stopped(client: LspClient) -> None:
    """The server ended and the client's reader thread with it (its end-of-stream mark read), so
    that no thread outlives the test: tests after this one fork workers only in a single thread."""
    client.close()
    while client.inbox.get(timeout=60) is not None:
        pass


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident set (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's peak memory from /proc")
def test_a_huge_buffer_costs_a_worker_not_the_server(tmp_path: Path) -> None:
    client = initialized(tmp_path)
    try:
        arrived: list[str] = []
        lock = threading.Lock()

        def open_document(name: str, text: str) -> str:
            uri = (tmp_path / name).as_uri()
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
            return uri

        first = open_document("first.py", SMALL)
        assert [d["code"] for d in client.diagnostics(first, 1)] == ["FL300"]
        huge = big_buffer()
        assert len(huge.encode()) >= 3_700_000
        big = open_document("big.py", huge)
        time.sleep(0.2)  # the big lint is under way (ordering, not timing, is asserted below)
        other = open_document("other.py", SMALL)

        def collect(uri: str) -> list[dict]:
            found = client.diagnostics(uri, 1)
            with lock:
                arrived.append(uri)
            return found

        assert [d["code"] for d in collect(other)] == ["FL300"]
        answer = collect(big)
        assert arrived == [other, big]  # the other document did not wait for the big one
        timed_out = [d for d in answer if d["code"] == "FL000"]
        if timed_out:  # the usual outcome: parsing ~3.7 MB takes longer than the editor is given
            assert [d["message"] for d in timed_out] == [
                f"parsing did not finish within {BUFFER_DEADLINE_S:.0f} s [parse-error]"
            ]
        else:
            assert "FL000" not in {d["code"] for d in answer}
        assert peak_memory_mb(client.process.pid) < 500
        # The server still answers: an edit of the first document is linted as usual.
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": first, "version": 2},
                "contentChanges": [{"text": SMALL.replace("raise ValueError(item)", "return {}")}],
            },
        )
        assert client.diagnostics(first, 2) == []
        client.request("shutdown", None)
        client.notify("exit", None)
        assert client.process.wait(timeout=60) == 0
    finally:
        stopped(client)


@pytest.mark.slow
def test_a_request_after_shutdown_is_answered_with_invalid_request(tmp_path: Path) -> None:
    client = initialized(tmp_path)
    try:
        assert client.request("shutdown", None) is None
        client.next_id += 1
        ident = client.next_id
        client.send(
            {
                "id": ident,
                "method": "textDocument/codeAction",
                "params": {
                    "textDocument": {"uri": (tmp_path / "app.py").as_uri()},
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                    "context": {"diagnostics": []},
                },
            }
        )
        reply = client.wait_for(lambda m: m.get("id") == ident and "method" not in m)
        assert reply["error"]["code"] == -32600  # InvalidRequest, as the specification says
        assert "shutdown" in reply["error"]["message"]
        client.notify("exit", None)
        assert client.process.wait(timeout=60) == 0
    finally:
        stopped(client)
