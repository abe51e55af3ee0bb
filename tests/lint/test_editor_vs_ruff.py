"""The editor features of DESIGN §13.5, exercised on our language server and on ``ruff server``
side by side, step for step, by one client script: the habit we claim to share is checked against
ruff's actual behaviour. ruff's half skips, saying so, when ruff is not installed.

The steps: the capabilities a client keys on (hover, pull diagnostics, ``source.fixAll.<name>``,
``<name>.applyAutofix``), the file watchers registered, pull diagnostics and a re-pull, hover over
a code in a ``# noqa`` comment, fix-all by its own kind, the same fix through
``workspace/executeCommand``, and a config edited on disk re-linting the open buffer.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

from test_lsp import BROKEN, CONTRACTS, WHOLE, LspClient, _actions, _edits, apply_edits  # noqa: E402

pytestmark = pytest.mark.slow

RUFF = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")

CLIENT = {
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True},
        "diagnostics": {"refreshSupport": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True},
    },
    "textDocument": {"diagnostic": {"dynamicRegistration": False}, "hover": {"contentFormat": ["markdown"]}},
}


@dataclass
class Server:
    name: str  # what its code action kind and commands are prefixed with
    command: Callable[[], list[str]]
    files: dict[str, str]  # the project
    module: str  # the buffer opened
    noqa_code: str  # a code in the suppression comment on the buffer's last line
    fixable: str  # a code its fix-all removes
    fixed: Callable[[str], bool]  # the buffer after fix-all
    ignoring: tuple[str, str]  # the config file, rewritten to ignore ``fixable``


OURS_TEXT = BROKEN + "LIMIT = 1  # noqa: FL300\n"
RUFF_TEXT = "import os  # noqa: F401\nimport sys\n\nLIMIT = 1  # noqa: F401\n"

SERVERS = {
    "fusion-lint": Server(
        name="fusion-lint",
        command=lambda: [sys.executable, "-m", "fusion_lint", "lsp"],
        files={"pyproject.toml": "[tool.fusion-lint]\n", "contracts.py": CONTRACTS, "tools.py": OURS_TEXT},
        module="tools.py",
        noqa_code="FL300",
        fixable="FL204",
        fixed=lambda text: text.count("raise ctx.fail") == OURS_TEXT.count("raise ctx.fail") + 1,
        ignoring=("pyproject.toml", '[tool.fusion-lint]\nignore = ["FL204"]\n'),
    ),
    "ruff": Server(
        name="ruff",
        command=lambda: [RUFF or "ruff", "server"],
        files={"pyproject.toml": "[tool.ruff]\n", "r.py": RUFF_TEXT},
        module="r.py",
        noqa_code="F401",
        fixable="F401",
        fixed=lambda text: "import sys" not in text,
        ignoring=("pyproject.toml", '[tool.ruff]\nlint.ignore = ["F401"]\n'),
    ),
}


@pytest.mark.parametrize("server", SERVERS.values(), ids=SERVERS.keys())
def test_editor_features_side_by_side_with_ruff_server(server: Server, tmp_path: Path) -> None:
    if server.name == "ruff" and RUFF is None:
        pytest.skip("ruff is not installed: the comparison with ruff server is not made")
    for relative, text in server.files.items():
        (tmp_path / relative).write_text(text)
    text = server.files[server.module]
    uri = (tmp_path / server.module).as_uri()
    client = LspClient(tmp_path, server.command())
    try:
        answer = client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": CLIENT})
        capabilities = answer["capabilities"]
        client.notify("initialized", {})
        assert capabilities["hoverProvider"]
        assert "diagnosticProvider" in capabilities
        assert f"source.fixAll.{server.name}" in capabilities["codeActionProvider"]["codeActionKinds"]
        assert f"{server.name}.applyAutofix" in capabilities["executeCommandProvider"]["commands"]

        # Watchers for the config, registered dynamically.
        registration = client.wait_for(lambda m: m.get("method") == "client/registerCapability")
        watchers = [
            watcher["globPattern"]
            for entry in registration["params"]["registrations"]
            if entry["method"] == "workspace/didChangeWatchedFiles"
            for watcher in entry["registerOptions"]["watchers"]
        ]
        assert any(PurePosixPath("sub/pyproject.toml").match(glob) for glob in watchers), watchers

        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        first = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert first["kind"] == "full" and server.fixable in {d["code"] for d in first["items"]}, first
        # Asked again about the same text: "unchanged" by its result id (ours), or the same items
        # in full (ruff answers in full every time); both are what the protocol allows.
        again = client.request(
            "textDocument/diagnostic", {"textDocument": {"uri": uri}, "previousResultId": first.get("resultId")}
        )
        assert again == {"kind": "unchanged", "resultId": first.get("resultId")} or again["items"] == first["items"]

        # Hover over the code in the last line's noqa comment: that rule's page.
        last = len(text.splitlines()) - 1
        character = text.splitlines()[last].index(server.noqa_code) + 2
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": last, "character": character}}
        )
        assert hover is not None and hover["contents"]["kind"] == "markdown"
        page = hover["contents"]["value"]
        assert server.noqa_code in page.split("\n", 1)[0] and "What it does" in page, page
        # Over the line's code, outside the comment: nothing.
        assert (
            client.request(
                "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": last, "character": 1}}
            )
            is None
        )

        # Fix-all by its own kind (codeActionsOnSave), then the same edit by executeCommand.
        (fix_all,) = _actions(client, uri, WHOLE, only=[f"source.fixAll.{server.name}"])
        assert fix_all["kind"] == f"source.fixAll.{server.name}"
        fixed = apply_edits(text, _edits(fix_all))
        assert server.fixed(fixed), fixed
        client.request(
            "workspace/executeCommand",
            {"command": f"{server.name}.applyAutofix", "arguments": [{"uri": uri, "version": 1}]},
        )
        applied = client.wait_for(lambda m: m.get("method") == "workspace/applyEdit")
        (document_edit,) = applied["params"]["edit"]["documentChanges"]
        assert apply_edits(text, document_edit["edits"]) == fixed

        # The config changes on disk, no buffer is edited: the client is asked to pull again, and
        # the finding the config now ignores is gone.
        config, ignoring = server.ignoring
        (tmp_path / config).write_text(ignoring)
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": (tmp_path / config).as_uri(), "type": 2}]}
        )
        client.wait_for(lambda m: m.get("method") == "workspace/diagnostic/refresh")
        after = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert after["kind"] == "full" and server.fixable not in {d["code"] for d in after["items"]}, after
    finally:
        client.close()
