"""What one buffer lint of the language server does besides resolving and checking (issue 15 point
4), counted, never timed: the configs read once, the project's folders not listed again and its stat
index not loaded again when nothing moved, the resolved project freed after the publish; an edit
tells the lint of the text it replaces that it was superseded at once, not when the debounce ends."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

import fusion_lint.check.abandon as abandon  # noqa: E402
import fusion_lint.check.engine as engine  # noqa: E402
import fusion_lint.discovery.kept_walk as kept_walk  # noqa: E402
import fusion_lint.lsp.server as lsp  # noqa: E402
import fusion_lint.memo.stat_index as stat_index  # noqa: E402
from fusion_lint.project.view import ProjectView  # noqa: E402
from fusion_lint.source.runner import FactsLease, KeptFacts, facts_kept_in  # noqa: E402

TOOL = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool

ERRORS = [ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="It went away",
                        recovery="Call `{other}` again with the id the list returned.")]


@tool("{name}", errors=ERRORS)
async def {name}(query: str, ctx: Context) -> str:
    if query == "?":
        raise ctx.fail("gone")
    return query
"""
PAST_NS = time.time_ns() - 3_600 * 10**9


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for index in range(3):
        (root / "pkg" / f"t{index}.py").write_text(TOOL.format(name=f"t{index}", other="t0"))
    (root / "edited.py").write_text(TOOL.format(name="edited", other="t1"))
    for folder in (root, root / "pkg"):  # their mtimes an hour back: any change moves them
        os.utime(folder, ns=(PAST_NS, PAST_NS))
    monkeypatch.setattr(kept_walk, "RACY_S", 0.0)  # (the racy rule is kept_walk's test)
    monkeypatch.setattr(lsp, "PROJECT_FACTS", KeptFacts())  # this test's memory, not the process's
    monkeypatch.setattr(lsp, "PROJECT_RESOLUTION", lsp.kept_resolution.KeptResolution())
    monkeypatch.setattr(lsp, "PROJECT_WALKS", kept_walk.KeptWalk())
    return root


def test_a_lint_reads_the_configs_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trees: list[object] = []
    make_tree = engine._tree
    monkeypatch.setattr(engine, "_tree", lambda options: trees.append(options) or make_tree(options))
    lsp.lint_buffer(str(project / "edited.py"), TOOL.format(name="edited", other="nope"))
    assert len(trees) == 1  # one for the early analysis and the lint (was two)


def test_nothing_moved_nothing_is_listed_or_loaded_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(project / "edited.py")
    lsp.lint_buffer(path, TOOL.format(name="edited", other="nope"))  # (makes the cache folder in the root)
    time.sleep(0.05)  # (past the clock's granularity)
    first = lsp.lint_buffer(path, TOOL.format(name="edited", other="nope")).diagnostics
    assert [d.code for d in first if d.path == path] == ["FL401"]
    assert lsp.PROJECT_WALKS.last is not None and lsp.PROJECT_WALKS.last.listed == [str(project)]
    loads: list[Path] = []
    load = stat_index.load_entry
    monkeypatch.setattr(stat_index, "load_entry", lambda where, key: loads.append(where) or load(where, key))
    again = lsp.lint_buffer(path, TOOL.format(name="edited", other="nope") + "# typed\n").diagnostics
    assert [(d.code, d.message) for d in again] == [(d.code, d.message) for d in first]
    assert lsp.PROJECT_WALKS.last.listed == [] and lsp.PROJECT_WALKS.last.reused == 2
    assert loads == []  # the stat index this process saved last: not read from disk again
    # A module added on disk: its folder is listed again, the buffer's recovery now names a tool.
    time.sleep(0.05)  # (past the clock's granularity)
    (project / "pkg" / "nope.py").write_text(TOOL.format(name="nope", other="t0"))
    assert [
        d.code for d in lsp.lint_buffer(path, TOOL.format(name="edited", other="nope")).diagnostics if d.path == path
    ] == []
    assert lsp.PROJECT_WALKS.last.listed == [str(project / "pkg")]


def test_the_resolved_project_is_left_to_free_after_the_publish(project: Path) -> None:
    garbage: list = []
    collecting = gc.isenabled()
    report = lsp.lint_freeing_later(
        garbage, str(project / "edited.py"), TOOL.format(name="edited", other="t1"), threading.Event()
    )
    views = [item for item in garbage if isinstance(item, ProjectView)]
    assert report is not None and len(views) == 1 and views[0].entries  # not released yet: after the publish
    assert any(entry.holders for entry in views[0].entries)
    assert not gc.isenabled()  # no collection scanning what is kept before the publish
    abandon.free(garbage)
    assert garbage == [] and not any(entry.holders for entry in views[0].entries)  # its cycles broken
    assert gc.isenabled() == collecting
    released: list[bool] = []
    abandon.free_later(None, lambda: released.append(True), object())  # the CLI: released at once, nothing kept
    assert released == [True]


def test_a_superseded_run_does_not_begin_its_buffers_analysis() -> None:
    waiting: Future = Future()  # begun early, not started yet (another document's buffer holds the thread)
    with facts_kept_in(KeptFacts()) as lease:
        assert isinstance(lease, FactsLease)
        lease.early["key"] = waiting
    assert waiting.cancelled()


def test_an_edit_supersedes_the_running_lint_at_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lsprotocol import types
    from pygls.workspace import Workspace

    release, started = threading.Event(), threading.Event()

    def held(path: str, text: str, superseded: threading.Event, freed: list | None = None):
        started.set()
        assert release.wait(60)
        return None

    monkeypatch.setattr(lsp, "lint_unless_superseded", held)
    server = lsp.create_server(debounce=30.0)  # the debounce never ends within the test
    server.protocol._workspace = Workspace(project.as_uri(), types.TextDocumentSyncKind.Incremental)
    monkeypatch.setattr(server, "text_document_publish_diagnostics", lambda params: None)
    uri = (project / "edited.py").as_uri()

    async def scenario() -> bool:
        server.workspace.put_text_document(
            types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=TOOL.format(name="edited", other="t1")
            )
        )
        server.schedule(uri, 0.0)
        while not started.is_set():
            await asyncio.sleep(0.01)
        server.workspace.update_text_document(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            types.TextDocumentContentChangeWholeDocument(text="x = 1\n"),
        )
        server.edited(uri)
        told = server.in_flight[uri][1].is_set()  # before the debounced lint of version 2 begins
        release.set()
        for task in list(server.scheduled.values()):
            task.cancel()
        await asyncio.gather(*server.scheduled.values(), return_exceptions=True)
        return told

    try:
        assert asyncio.run(scenario())
    finally:
        release.set()
        server.linter.shutdown(wait=True, cancel_futures=True)
