"""The language server, driven over stdio the way an editor drives it (DESIGN §9).

``LspClient`` is a deliberately small editor: it frames JSON-RPC with ``Content-Length`` headers,
answers nothing but what it must, and collects ``publishDiagnostics`` notifications. The unit tests
at the bottom pin the position conversions the end-to-end test relies on.
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

from fusion_lint.lsp.server import SourceLines, buffer_bytes, code_units  # noqa: E402

TIMEOUT_S = 60.0  # generous: a slow CI machine must not flake (no timing is asserted here)


class LspClient:
    """A subprocess language server and the messages it sent."""

    def __init__(self, cwd: Path, command: list[str] | None = None):
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "fusion_lint", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.inbox: queue.Queue[dict | None] = queue.Queue()
        self.backlog: list[dict] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    self.inbox.put(None)
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            assert length is not None, "a message without Content-Length"
            self.inbox.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        reply = self.wait_for(lambda m: m.get("id") == ident and "method" not in m)
        assert "error" not in reply, reply
        return reply["result"]

    def wait_for(self, matches: Callable[[dict], bool]) -> dict:
        for message in self.backlog:
            if matches(message):
                self.backlog.remove(message)
                return message
        while True:
            try:
                message = self.inbox.get(timeout=TIMEOUT_S)
            except queue.Empty:
                raise AssertionError(f"no matching message in {TIMEOUT_S} s; got {self.backlog}") from None
            if message is None:
                raise AssertionError(f"the server exited: {self.stderr()}")
            if "method" in message and "id" in message:  # a request from the server: accept it
                applied = {"applied": True} if message["method"] == "workspace/applyEdit" else None
                self.send({"id": message["id"], "result": applied})
            if matches(message):
                return message
            self.backlog.append(message)

    def diagnostics(self, uri: str, version: int) -> list[dict]:
        message = self.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"].get("version") == version
            )
        )
        return message["params"]["diagnostics"]

    def stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read().decode("utf-8", "replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=TIMEOUT_S)


CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SEARCH_ERRORS = [
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="Nothing matched the query",
                  recovery="Call search again with a broader query string."),
]
"""

# The contract lives in a sibling file (cross-file resolution makes FL203 possible at all), the
# config ignores FL300, and FL204 sits after an astral character (2 UTF-16 units, 1 code point).
BROKEN = """\
from mcp_fusion import Context, tool
from contracts import SEARCH_ERRORS


@tool("search", errors=SEARCH_ERRORS)
async def search(query: str, ctx: Context) -> str:
    if not query:
        raise ValueError("empty query")
    if query == "?":
        raise ctx.fail("no_such_reason")
    label = "\U0001f50e"; ctx.fail("no_match")
    return label + query
"""

FIXED = BROKEN.replace('raise ctx.fail("no_such_reason")', 'raise ctx.fail("no_match")').replace(
    '; ctx.fail("no_match")', '; raise ctx.fail("no_match")'
)


def apply_edits(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits (UTF-16 positions) the way an editor would, last first."""
    lines = text.splitlines(keepends=True)

    def offset(position: dict) -> int:
        if position["line"] >= len(lines):  # the end of the text (an edit removing the last line)
            return len(text)
        line = lines[position["line"]]
        units, column = 0, 0
        while units < position["character"]:
            units += 2 if ord(line[column]) > 0xFFFF else 1
            column += 1
        return sum(len(previous) for previous in lines[: position["line"]]) + column

    for edit in sorted(
        edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True
    ):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
    return text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "my project"  # a space: the URIs are percent-encoded, as editors send them
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.fusion-lint]\nignore = ["FL300"]\n')
    (root / "contracts.py").write_text(CONTRACTS)
    (root / "tools.py").write_text(FIXED)  # the disk holds the good version; the buffer differs
    return root


@pytest.mark.slow
def test_editor_session_over_stdio(project: Path) -> None:
    client = LspClient(project)
    uri = (project / "tools.py").as_uri()
    assert "%20" in uri
    try:
        initialized = client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": project.as_uri(),
                "capabilities": {
                    "workspace": {"workspaceEdit": {"documentChanges": True}},
                    "textDocument": {"publishDiagnostics": {"versionSupport": True}},
                },
            },
        )
        capabilities = initialized["capabilities"]
        assert capabilities["codeActionProvider"]["codeActionKinds"] == [
            "quickfix",
            "source.fixAll",
            "source.fixAll.fusion-lint",
        ]
        assert capabilities["textDocumentSync"]["change"] == 2  # incremental
        assert initialized["serverInfo"]["name"] == "fusion-lint"
        client.notify("initialized", {})

        # Open: the unsaved buffer is linted, not the (clean) file on disk.
        client.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": BROKEN}}
        )
        opened = client.diagnostics(uri, version=1)
        by_code = {d["code"]: d for d in opened}
        assert sorted(by_code) == ["FL203", "FL204"], opened  # FL300 ignored by the project's config
        fail_not_raised = by_code["FL204"]
        assert fail_not_raised["source"] == "fusion-lint"
        assert fail_not_raised["severity"] == 1  # Error
        assert fail_not_raised["codeDescription"]["href"].endswith("#fl204-fail-not-raised")
        # 'ctx' follows 4 spaces and 'label = "🔎"; ': 17 code points, 18 UTF-16 units.
        assert fail_not_raised["range"] == {
            "start": {"line": 10, "character": 18},
            "end": {"line": 10, "character": 38},
        }
        assert by_code["FL203"]["range"]["start"] == {"line": 9, "character": 14}

        # The quick fix for FL204, applied as the editor would: an incremental change.
        actions = client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": fail_not_raised["range"],
                "context": {"diagnostics": [fail_not_raised]},
            },
        )
        assert [(a["kind"], a["title"]) for a in actions[1:]] == [
            ("quickfix", "Disable FL204 for this line"),
            ("source.fixAll", "fusion-lint: fix all safely fixable problems"),
        ], actions
        action = actions[0]
        assert action["kind"] == "quickfix"
        assert action["isPreferred"] is True and "FL204" in action["title"]
        assert action["diagnostics"][0]["code"] == "FL204"
        (document_edit,) = action["edit"]["documentChanges"]
        assert document_edit["textDocument"] == {"uri": uri, "version": 1}
        edits = document_edit["edits"]
        assert apply_edits(BROKEN, edits) == BROKEN.replace('; ctx.fail("no_match")', '; raise ctx.fail("no_match")')
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in edits],
            },
        )
        assert [d["code"] for d in client.diagnostics(uri, version=2)] == ["FL203"]

        # A full-text change that fixes the rest: the empty list clears the editor.
        client.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": FIXED}]}
        )
        assert client.diagnostics(uri, version=3) == []

        # No diagnostic left: no code action either.
        assert client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 12, "character": 0}},
                "context": {"diagnostics": []},
            },
        ) in (None, [])

        # Saving another file re-lints the open ones, which read it from disk: a renamed reason.
        contracts_uri = (project / "contracts.py").as_uri()
        (project / "contracts.py").write_text(CONTRACTS.replace('"no_match"', '"nothing_matched"'))
        client.notify("textDocument/didSave", {"textDocument": {"uri": contracts_uri}})
        assert "FL203" in [d["code"] for d in client.diagnostics(uri, version=3)]
        (project / "contracts.py").write_text(CONTRACTS)
        client.notify("textDocument/didSave", {"textDocument": {"uri": contracts_uri}})
        assert client.diagnostics(uri, version=3) == []

        # Back to broken and closed: closing clears what was shown.
        client.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": BROKEN}]}
        )
        assert len(client.diagnostics(uri, version=4)) == 2
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        cleared = client.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"]["diagnostics"] == []
            )
        )
        assert cleared["params"]["diagnostics"] == []

        assert client.request("shutdown", None) is None
        client.notify("exit", None)
        assert client.process.wait(timeout=TIMEOUT_S) == 0
    finally:
        client.close()


@pytest.mark.slow
def test_a_broken_config_is_shown_not_crashed_on(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.fusion-lint]\nselect = "FL2"\n')
    client = LspClient(tmp_path)
    uri = (tmp_path / "tools.py").as_uri()
    try:
        client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        client.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": BROKEN}}
        )
        shown = client.wait_for(lambda m: m.get("method") == "window/showMessage")
        assert "pyproject.toml" in shown["params"]["message"] and "select" in shown["params"]["message"]
        assert client.diagnostics(uri, version=1) == []
        client.request("shutdown", None)
        client.notify("exit", None)
        assert client.process.wait(timeout=TIMEOUT_S) == 0
    finally:
        client.close()


def _open(client: LspClient, root: Path, uri: str, text: str) -> list[dict]:
    """Initialize (with versioned workspace edits), open ``text`` and return its diagnostics."""
    client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True}}},
        },
    )
    client.notify("initialized", {})
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
    )
    return client.diagnostics(uri, version=1)


def _edits(action: dict) -> list[dict]:
    (document_edit,) = action["edit"]["documentChanges"]
    return document_edit["edits"]


def _actions(client: LspClient, uri: str, range_: dict, **context: Any) -> list[dict]:
    return (
        client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": range_,
                "context": {"diagnostics": [], **context},
            },
        )
        or []
    )


WHOLE = {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}


@pytest.mark.slow
def test_disable_for_this_line_merges_into_the_noqa_list_and_skips_strings(project: Path) -> None:
    # FL204 on a line that already silences another linter's code, FL203 on a line whose string
    # holds a "# noqa" that is no comment at all.
    text = BROKEN.replace(
        '    label = "\U0001f50e"; ctx.fail("no_match")', '    label = "\U0001f50e"; ctx.fail("no_match")  # noqa: E702'
    ).replace('        raise ctx.fail("no_such_reason")', '        raise ctx.fail("no_such_reason", "# noqa: E501")')
    client = LspClient(project)
    uri = (project / "tools.py").as_uri()
    try:
        by_code = {d["code"]: d for d in _open(client, project, uri, text)}
        assert sorted(by_code) == ["FL203", "FL204"]
        disabled = text
        for code, expected_line in (
            ("FL204", '    label = "\U0001f50e"; ctx.fail("no_match")  # noqa: E702, FL204'),
            ("FL203", '        raise ctx.fail("no_such_reason", "# noqa: E501")  # noqa: FL203'),
        ):
            actions = _actions(client, uri, by_code[code]["range"], only=["quickfix"])
            (disable,) = [a for a in actions if a["title"] == f"Disable {code} for this line"]
            assert disable["kind"] == "quickfix" and disable["diagnostics"][0]["code"] == code
            assert "isPreferred" not in disable or disable["isPreferred"] is False  # the fix is preferred
            line = by_code[code]["range"]["start"]["line"]
            changed = apply_edits(text, _edits(disable))
            assert changed.splitlines()[line] == expected_line
            assert changed.splitlines()[:line] + changed.splitlines()[line + 1 :] == (
                text.splitlines()[:line] + text.splitlines()[line + 1 :]
            )
            disabled = apply_edits(disabled, _edits(disable))
        # Both applied, as the editor would: nothing is reported any more.
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": disabled}]},
        )
        assert client.diagnostics(uri, version=2) == []
    finally:
        client.close()


@pytest.mark.slow
def test_code_actions_asked_right_after_an_edit_wait_for_its_lint(project: Path) -> None:
    """An editor that applies a fix and at once asks for the next actions (Emacs does) gets the
    actions of the new text, not an empty answer because its diagnostics are still being made."""
    client = LspClient(project)
    uri = (project / "tools.py").as_uri()
    try:
        line = next(d for d in _open(client, project, uri, BROKEN) if d["code"] == "FL204")["range"]["start"]["line"]
        # A line on top moves every finding one line down; the padding makes the lint take a while.
        moved = "# moved\n" + BROKEN + "".join(f"value_{i} = [{i}, {{'k': ({i},)}}]\n" for i in range(3000))
        client.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": moved}]}
        )
        at = {"start": {"line": line + 1, "character": 20}, "end": {"line": line + 1, "character": 20}}
        titles = {a["title"]: a for a in _actions(client, uri, at, only=["quickfix"])}
        disable = titles["Disable FL204 for this line"]
        assert disable["diagnostics"][0]["range"]["start"]["line"] == line + 1
        assert apply_edits(moved, _edits(disable)).splitlines()[line + 1].endswith("# noqa: FL204")
    finally:
        client.close()


@pytest.mark.slow
def test_source_fix_all_is_what_fix_makes_of_the_buffer(project: Path) -> None:
    # Two fixable findings in different places (FL204 twice) and one with no fix (FL203); CRLF
    # line endings as a Windows editor sends them.
    text = BROKEN.replace("    return label + query\n", '    ctx.fail("no_match")\n    return label + query\n')
    text = text.replace("\n", "\r\n")
    cli = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "--fix", "--stdin-filename", "tools.py", "-"],
        cwd=project,
        input=text.encode("utf-8"),
        capture_output=True,
    )
    expected = cli.stdout.decode("utf-8")
    assert expected.count("raise ctx.fail") == text.count("raise ctx.fail") + 2, cli.stderr
    client = LspClient(project)
    uri = (project / "tools.py").as_uri()
    try:
        assert sorted(d["code"] for d in _open(client, project, uri, text)) == ["FL203", "FL204", "FL204"]
        # Asked for at the top of the file, far from any finding: the action is about the document.
        (fix_all,) = _actions(client, uri, {"start": WHOLE["start"], "end": WHOLE["start"]}, only=["source.fixAll"])
        assert fix_all["kind"] == "source.fixAll" and "diagnostics" not in fix_all
        assert apply_edits(text, _edits(fix_all)) == expected
        # The parent kind admits it; a quick-fix-only request, or the editor asking on its own, does not.
        assert [a["kind"] for a in _actions(client, uri, WHOLE, only=["source"])] == ["source.fixAll"]
        assert "source.fixAll" not in [a["kind"] for a in _actions(client, uri, WHOLE, only=["quickfix"])]
        assert "source.fixAll" not in [a["kind"] for a in _actions(client, uri, WHOLE, triggerKind=2)]
        assert "source.fixAll" in [a["kind"] for a in _actions(client, uri, WHOLE, triggerKind=1)]
        # Applied: only the finding without a fix is left, and there is nothing more to fix.
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": expected}]},
        )
        assert [d["code"] for d in client.diagnostics(uri, version=2)] == ["FL203"]
        assert _actions(client, uri, WHOLE, only=["source.fixAll"]) == []
    finally:
        client.close()


# ----- conversions -------------------------------------------------------------------------------


def test_code_units_per_encoding() -> None:
    text = "a\u00e9\U0001f50eb"  # ASCII, 2-byte, astral (4 bytes, 2 UTF-16 units), ASCII
    assert code_units(text, "utf-16") == 5
    assert code_units(text, "utf-8") == 1 + 2 + 4 + 1
    assert code_units(text, "utf-32") == 4


def test_source_lines_use_lsp_line_breaks_only() -> None:
    text = "a\r\nb\x0cc\rd\ne"  # a form feed is no line break to LSP (str.splitlines says it is)
    lines = SourceLines(text)
    assert [lines.line(i) for i in range(4)] == ["a", "b\x0cc", "d", "e"]
    assert lines.position_at(text.index("d")).line == 2
    assert lines.position_at(len(text)).line == 3
    # Columns past the end of a line clamp to it (a span's end at a line break).
    assert lines.position(0, 10).character == 1


def test_positions_convert_code_points_to_utf16() -> None:
    lines = SourceLines('x = "\U0001f50e"; y\n')
    position = lines.position(0, len('x = "\U0001f50e"; '))
    assert position.character == 10  # 9 code points, one of them astral


@pytest.mark.parametrize(
    "old, new",
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\r\nb\r\nc\r\n", "a\r\nb2\r\nc\r\n"),  # a change after the CR of a CRLF: whole lines
        ("x\r\ny", "x\r\nz"),
        ("ab\nab\n", "ab\n"),
        ("ab\n", "ab\nab\n"),
        ("same", "same"),
        ("", "new\n"),
        ("old", ""),
        ("k = 1\nk = 1\nk = 1\n", "k = 1\nk = 2\nk = 1\n"),
    ],
)
def test_replacement_is_one_edit_of_whole_lines(old: str, new: str) -> None:
    from fusion_lint.fix.apply import apply_edits as apply_offsets
    from fusion_lint.lsp.server import replacement

    lines = SourceLines(old)
    edit = replacement(lines, new)
    if old == new:
        assert edit is None
        return
    assert edit is not None and apply_offsets(old, [edit]) == new
    assert edit.start in lines.starts and (edit.end in lines.starts or edit.end == len(old))


def test_buffer_bytes_honour_a_coding_cookie() -> None:
    latin = "# -*- coding: latin-1 -*-\nname = 'caf\u00e9'\n"
    assert buffer_bytes(latin) == latin.encode("latin-1")
    assert buffer_bytes("name = 'caf\u00e9'\n") == "name = 'caf\u00e9'\n".encode("utf-8")
    # A cookie the text cannot honour falls back to UTF-8 (the engine then reports FL001).
    assert buffer_bytes("# coding: ascii\nx = '\u00e9'\n") == "# coding: ascii\nx = '\u00e9'\n".encode("utf-8")


# ----- scheduling (in process: the lint is replaced by one the test controls) --------------------


class ControlledLints:
    """Stands in for ``lint_buffer``: records each text and holds the first lint until released."""

    def __init__(self, lint: Callable) -> None:
        self.lint = lint
        self.texts: list[str] = []
        self.release = threading.Event()

    def __call__(self, path: str, text: str, *lent: object):
        self.texts.append(text)
        if len(self.texts) == 1:
            assert self.release.wait(TIMEOUT_S)
        return self.lint(path, text, *lent)


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch, project: Path):
    from lsprotocol import types as lsp
    from pygls.workspace import Workspace

    import fusion_lint.lsp.server as module

    lints = ControlledLints(module.lint_buffer)
    monkeypatch.setattr(module, "lint_buffer", lints)
    server = module.create_server(debounce=0.05)
    # What 'initialize' would set up; the protocol keeps it privately.
    server.protocol._workspace = Workspace(project.as_uri(), lsp.TextDocumentSyncKind.Incremental)
    published: list[lsp.PublishDiagnosticsParams] = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", published.append)
    uri = (project / "tools.py").as_uri()

    def open_(text: str, version: int) -> None:
        server.workspace.put_text_document(
            lsp.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )

    def change(text: str, version: int) -> None:
        server.workspace.update_text_document(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            lsp.TextDocumentContentChangeWholeDocument(text=text),
        )
        server.edited(uri)

    async def settle() -> None:
        while server.scheduled:
            await asyncio.gather(*server.scheduled.values(), return_exceptions=True)

    yield server, lints, published, uri, open_, change, settle
    server.linter.shutdown(wait=True)  # (the frees queued after the publishes run: each ends its lint's gc pause)


@pytest.mark.slow
def test_a_newer_text_supersedes_an_in_flight_lint(in_process) -> None:
    server, lints, published, uri, open_, change, settle = in_process

    async def scenario() -> None:
        open_(BROKEN, 1)
        server.schedule(uri, 0.0)
        while not lints.texts:  # the first lint is running (and held) in the worker thread
            await asyncio.sleep(0.01)
        change(FIXED, 2)
        lints.release.set()
        await settle()

    asyncio.run(scenario())
    assert lints.texts == [BROKEN, FIXED]
    # The result for version 1 arrived after version 2 existed: dropped, never shown.
    assert [(p.version, p.diagnostics) for p in published] == [(2, [])]


@pytest.mark.slow
def test_a_burst_of_edits_is_linted_once(in_process) -> None:
    server, lints, published, uri, open_, change, settle = in_process
    lints.release.set()

    async def scenario() -> None:
        open_(FIXED, 1)
        server.schedule(uri, 0.0)
        await settle()
        server.debounce = 1.0  # far longer than the pauses below, however slow the machine
        server.last_edit[uri] = time.monotonic()  # as if typing had just begun: no leading lint
        for version in range(2, 7):
            change(FIXED + "#" * version + "\n", version)
            await asyncio.sleep(0.01)  # the event loop runs between keystrokes, as in an editor
        await settle()

    asyncio.run(scenario())
    assert lints.texts == [FIXED, FIXED + "######\n"]
    assert [p.version for p in published] == [1, 6]


def test_closing_during_a_lint_clears_and_stays_cleared(in_process) -> None:
    server, lints, published, uri, open_, change, settle = in_process

    async def scenario() -> None:
        open_(BROKEN, 1)
        server.schedule(uri, 0.0)
        while not lints.texts:
            await asyncio.sleep(0.01)
        server.workspace.remove_text_document(uri)
        server.clear(uri)
        lints.release.set()
        await asyncio.sleep(0)
        await asyncio.get_running_loop().run_in_executor(server.linter, lambda: None)  # the held lint ended
        await settle()

    asyncio.run(scenario())
    assert [(p.uri, p.diagnostics) for p in published] == [(uri, [])]


@pytest.mark.slow
def test_a_newer_text_does_not_wait_for_the_lint_of_an_older_one(in_process, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 15: a keystroke after a pause started a lint the next one waited behind. Now the newer
    text is linted and published while the older lint still runs; that one is told it was
    superseded, stops at its next stage (no report) and is never published."""
    import fusion_lint.lsp.server as module

    server, lints, published, uri, open_, change, settle = in_process
    outcomes: list[object] = []
    unless_superseded = module.lint_unless_superseded

    def recorded(path: str, text: str, superseded: threading.Event, freed: list | None = None):
        outcomes.append(unless_superseded(path, text, superseded, freed))
        return outcomes[-1]

    monkeypatch.setattr(module, "lint_unless_superseded", recorded)

    async def scenario() -> None:
        open_(BROKEN, 1)
        server.schedule(uri, 0.0)
        while not lints.texts:  # the lint of version 1 runs (held)
            await asyncio.sleep(0.01)
        change(FIXED, 2)
        deadline = time.monotonic() + TIMEOUT_S
        while not published and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert not lints.release.is_set() and [p.version for p in published] == [2]  # it did not wait
        lints.release.set()
        while len(outcomes) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await settle()

    asyncio.run(scenario())
    assert lints.texts == [BROKEN, FIXED]
    assert outcomes[1] is None  # the lint of version 1 (finished second) was abandoned, no report
    assert [(p.version, p.diagnostics) for p in published] == [(2, [])]
