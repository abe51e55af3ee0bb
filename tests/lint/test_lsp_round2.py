"""The language server, round two (DESIGN §13.5), driven over stdio as ``test_lsp`` drives it:
pull diagnostics, hover with the rule's page, ``source.fixAll.fusion-lint``, ``fusion-lint.applyAutofix``
through ``workspace/executeCommand``, and ``workspace/didChangeWatchedFiles`` re-linting open buffers
when a config changes on disk, without an edit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

from test_lsp import BROKEN, CONTRACTS, FIXED, WHOLE, LspClient, _actions, _edits, apply_edits  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.fusion-lint]\nignore = ["FL300"]\n')
    (root / "contracts.py").write_text(CONTRACTS)
    (root / "tools.py").write_text(FIXED)
    return root


def _start(client: LspClient, root: Path, capabilities: dict) -> dict:
    answer = client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities})
    client.notify("initialized", {})
    return answer["capabilities"]


def _open(client: LspClient, uri: str, text: str, version: int = 1) -> None:
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )


def _pull(client: LspClient, uri: str, previous: str | None = None) -> dict:
    params: dict = {"textDocument": {"uri": uri}}
    if previous is not None:
        params["previousResultId"] = previous
    return client.request("textDocument/diagnostic", params)


PULL_CLIENT = {
    "workspace": {
        "workspaceEdit": {"documentChanges": True},
        "diagnostics": {"refreshSupport": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True},
    },
    "textDocument": {"diagnostic": {"dynamicRegistration": False}},
}


def test_pull_diagnostics_hover_and_a_config_change_without_an_edit(project: Path) -> None:
    client = LspClient(project)
    uri = (project / "tools.py").as_uri()
    try:
        capabilities = _start(client, project, PULL_CLIENT)
        assert capabilities["diagnosticProvider"]["identifier"] == "fusion-lint"
        assert capabilities["diagnosticProvider"]["interFileDependencies"] is True
        assert capabilities["hoverProvider"]
        # The server asks the client to watch what the lint reads.
        registration = client.wait_for(lambda m: m.get("method") == "client/registerCapability")
        (registered,) = registration["params"]["registrations"]
        assert registered["method"] == "workspace/didChangeWatchedFiles"
        globs = {w["globPattern"] for w in registered["registerOptions"]["watchers"]}
        assert {"**/*.py", "**/*.toml", "**/.gitignore"} <= globs

        _open(client, uri, BROKEN)
        first = _pull(client, uri)
        assert first["kind"] == "full"
        assert sorted(d["code"] for d in first["items"]) == ["FL203", "FL204"]  # FL300 ignored by the config
        # Asked again about the same text: unchanged, by its result id.
        again = _pull(client, uri, previous=first["resultId"])
        assert again == {"kind": "unchanged", "resultId": first["resultId"]}
        # A pull client is not pushed diagnostics as well (they would show twice).
        assert not any(m.get("method") == "textDocument/publishDiagnostics" for m in client.backlog)

        # Hover on FL204's range: the rule's page.
        fl204 = next(d for d in first["items"] if d["code"] == "FL204")
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": fl204["range"]["start"]}
        )
        assert hover["contents"]["kind"] == "markdown"
        page = hover["contents"]["value"]
        assert page.startswith("### FL204 fail-not-raised") or "FL204" in page.split("\n", 1)[0], page
        assert "**What it does.**" in page and "**Why is this bad?**" in page
        assert hover["range"] == fl204["range"]
        nowhere = client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        )
        assert nowhere is None

        # The config changes on disk (FL300 no longer ignored); no buffer is edited.
        (project / "pyproject.toml").write_text("[tool.fusion-lint]\n")
        client.notify(
            "workspace/didChangeWatchedFiles",
            {"changes": [{"uri": (project / "pyproject.toml").as_uri(), "type": 2}]},
        )
        client.wait_for(lambda m: m.get("method") == "workspace/diagnostic/refresh")
        after = _pull(client, uri, previous=first["resultId"])
        assert after["kind"] == "full"
        assert sorted(d["code"] for d in after["items"]) == ["FL203", "FL204", "FL300"]
    finally:
        client.close()


def test_a_push_client_is_republished_when_a_config_changes(project: Path) -> None:
    client = LspClient(project)
    uri = (project / "tools.py").as_uri()
    try:
        _start(client, project, {"textDocument": {"publishDiagnostics": {"versionSupport": True}}})
        _open(client, uri, BROKEN)
        assert sorted(d["code"] for d in client.diagnostics(uri, version=1)) == ["FL203", "FL204"]
        (project / "pyproject.toml").write_text('[tool.fusion-lint]\nignore = ["FL300", "FL203"]\n')
        client.notify(
            "workspace/didChangeWatchedFiles",
            {"changes": [{"uri": (project / "pyproject.toml").as_uri(), "type": 2}]},
        )
        assert [d["code"] for d in client.diagnostics(uri, version=1)] == ["FL204"]
        # A change of a file the lint does not read re-lints nothing.
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": (project / "notes.txt").as_uri(), "type": 1}]}
        )
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        )
        assert hover is None
        assert not any(m.get("method") == "textDocument/publishDiagnostics" for m in client.backlog)
    finally:
        client.close()


def test_fix_all_by_its_own_kind_and_by_execute_command(project: Path) -> None:
    client = LspClient(project)
    uri = (project / "tools.py").as_uri()
    try:
        capabilities = _start(client, project, {"workspace": {"workspaceEdit": {"documentChanges": True}}})
        assert "fusion-lint.applyAutofix" in capabilities["executeCommandProvider"]["commands"]
        _open(client, uri, BROKEN)
        client.diagnostics(uri, version=1)
        # codeActionsOnSave: {"source.fixAll.fusion-lint": "explicit"} asks for exactly that kind.
        (fix_all,) = _actions(client, uri, WHOLE, only=["source.fixAll.fusion-lint"])
        assert fix_all["kind"] == "source.fixAll.fusion-lint"
        fixed = apply_edits(BROKEN, _edits(fix_all))
        assert fixed.count("raise ctx.fail") == BROKEN.count("raise ctx.fail") + 1
        # Another server's kind is not ours.
        assert _actions(client, uri, WHOLE, only=["source.fixAll.ruff"]) == []

        # The same edit, through workspace/executeCommand: the server sends workspace/applyEdit.
        client.request(
            "workspace/executeCommand",
            {"command": "fusion-lint.applyAutofix", "arguments": [{"uri": uri, "version": 1}]},
        )
        applied = client.wait_for(lambda m: m.get("method") == "workspace/applyEdit")
        (document_edit,) = applied["params"]["edit"]["documentChanges"]
        assert apply_edits(BROKEN, document_edit["edits"]) == fixed
    finally:
        client.close()
