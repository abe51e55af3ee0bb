"""The language server keeps the project's facts in memory between lints (issue 15 point 4): a
keystroke re-analyses the buffer only, a file changed, added or removed on disk and a config
changed are seen, and what is published equals what the CLI reports for the same buffer.

Counted, never timed: ``runner.KeptFacts.last`` says which files one lint served from memory,
unpickled from the cache, or parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")

import fusion_lint.lsp.server as lsp  # noqa: E402
from fusion_lint.check.engine import lint  # noqa: E402
from fusion_lint.source.runner import KeptFacts  # noqa: E402

CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SHARED = [
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="Nothing matched the query",
                  recovery="Call search again with a broader query string."),
]
"""

TOOL = """\
from mcp_fusion import Context, tool
from contracts import SHARED


@tool("{name}", errors=SHARED)
async def {name}(query: str, ctx: Context) -> str:
    if query == "?":
        raise ctx.fail("{reason}")
    return query
"""

OTHERS = 4  # tool modules besides the one being edited


def tool(name: str, reason: str = "no_match") -> str:
    return TOOL.format(name=name, reason=reason)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (root / "contracts.py").write_text(CONTRACTS)
    for index in range(OTHERS):
        (root / f"other{index}.py").write_text(tool(f"other{index}"))
    (root / "edited.py").write_text(tool("edited"))
    monkeypatch.setattr(lsp, "PROJECT_FACTS", KeptFacts())  # this test's memory, not the process's
    monkeypatch.setattr(lsp, "PROJECT_RESOLUTION", lsp.kept_resolution.KeptResolution())
    return root


def published(root: Path, text: str) -> list[tuple]:
    """What the server lints the buffer to (kept facts), beside what the CLI reports for it."""
    path = str(root / "edited.py")
    served = [d for d in lsp.lint_buffer(path, text).diagnostics if d.path == path]
    fresh = [d for d in lint(lsp.buffer_options(path, text)).diagnostics if d.path == path]
    assert [(d.code, d.message, d.span) for d in served] == [(d.code, d.message, d.span) for d in fresh]
    return [(d.code, d.span.line) for d in served]


def last() -> tuple[int, list[str], list[str]]:
    lease = lsp.PROJECT_FACTS.last
    assert lease is not None
    return (
        lease.from_memory,
        sorted(Path(p).name for p in lease.from_disk),
        sorted(Path(p).name for p in lease.analysed),
    )


def test_a_second_lint_re_extracts_only_the_buffer(project: Path) -> None:
    assert published(project, tool("edited", "nope")) == [("FL203", 8)]
    served, unpickled, parsed = last()
    assert served == 0 and len(unpickled) + len(parsed) == OTHERS + 2  # the buffer parsed, the rest from the cache
    assert "edited.py" in parsed
    assert published(project, tool("edited", "nope") + "# typed\n") == [("FL203", 8)]
    assert last() == (OTHERS + 1, [], ["edited.py"])  # everything else from memory


def test_a_file_changed_on_disk_is_analysed_again(project: Path) -> None:
    published(project, tool("edited"))
    # The shared contract loses the entry the buffer's tool fails with: FL203 appears in the buffer.
    (project / "contracts.py").write_text(CONTRACTS.replace('"no_match"', '"no_hit"'))
    assert published(project, tool("edited")) == [("FL203", 8)]
    served, unpickled, parsed = last()
    assert (served, unpickled, parsed) == (OTHERS + 1, [], ["contracts.py"])  # the same buffer text: kept too


LOOKUP = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool

ERRORS = [ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="It went away",
                        recovery="Call `look_up` again with the id the list returned.")]


@tool("asker", errors=ERRORS)
async def asker(query: str, ctx: Context) -> str:
    if query == "?":
        raise ctx.fail("gone")
    return query
"""


def test_a_file_added_or_removed_is_seen(project: Path) -> None:
    # The buffer's recovery names the tool "look_up": unknown until a module defines it.
    unknown = published(project, LOOKUP)
    assert [code for code, _ in unknown] == ["FL401"]
    (project / "lookup.py").write_text(tool("look_up"))
    assert published(project, LOOKUP) == []
    assert last() == (OTHERS + 2, [], ["lookup.py"])
    (project / "lookup.py").unlink()
    assert published(project, LOOKUP) == unknown
    assert last() == (OTHERS + 2, [], [])


def test_a_buffer_text_seen_before_is_not_analysed_again_nor_written(project: Path) -> None:
    cache = project / ".fusion_lint_cache"
    published(project, tool("edited", "nope"))
    entries = sorted(cache.rglob("*"))
    assert any(path.suffix == ".pickle" for path in entries)  # the project's files are cached there
    published(project, tool("edited", "nope") + "# typed\n")
    published(project, tool("edited", "nope"))  # an undo, or the document reopened
    assert last() == (OTHERS + 2, [], [])
    # Unsaved texts live in memory only (the CLI's stdin run of ``published`` writes none either).
    assert sorted(
        path for path in cache.rglob("*") if path.suffix == ".pickle" and not path.name.startswith("stat-")
    ) == [path for path in entries if path.suffix == ".pickle" and not path.name.startswith("stat-")]


def test_a_config_change_is_seen(project: Path) -> None:
    assert published(project, tool("edited", "nope")) == [("FL203", 8)]
    (project / "pyproject.toml").write_text('[tool.fusion-lint]\nignore = ["FL203"]\n')
    assert published(project, tool("edited", "nope")) == []
    # Settings that change what a file's facts are (the runtime's modules) re-analyse every file.
    (project / "pyproject.toml").write_text('[tool.fusion-lint]\nruntime-modules = ["mcp_fusion", "ourlib"]\n')
    assert published(project, tool("edited", "nope")) == [("FL203", 8)]
    served, unpickled, parsed = last()
    assert served == 0


def test_kept_results_of_files_no_lint_uses_are_dropped(project: Path) -> None:
    for round_ in range(KeptFacts.RUNS_REMEMBERED + 1):
        (project / "other1.py").write_text(tool("other1") + f"# version {round_}\n")
        published(project, tool("edited"))
    # One result per file of the project: the old versions of other1.py are forgotten.
    assert len(lsp.PROJECT_FACTS.results) <= OTHERS + 1 + KeptFacts.RUNS_REMEMBERED
    paths = [result.path for result in lsp.PROJECT_FACTS.results.values()]
    assert paths.count(str(project / "other0.py")) == 1


def test_the_buffer_analysed_early_is_the_one_the_lint_uses(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The buffer's analysis begins in its worker before the walk; the lint waits for it rather
    than parsing the buffer a second time."""
    import concurrent.futures
    import threading

    import fusion_lint.source.runner as runner

    sent: list[tuple[str, str]] = []
    run = runner.WorkerPool.run

    def counted(pool, items, spans=None):
        sent.extend((Path(path).name, threading.current_thread().name.rpartition("_")[0]) for path, _ in items)
        return run(pool, items, spans)

    monkeypatch.setattr(runner.WorkerPool, "run", counted)
    published(project, tool("edited"))  # (the CLI's run beside it parses the buffer once more)
    sent.clear()
    # An early analysis its thread has not started yet is cancelled and the buffer parsed in the
    # lint instead (right, on a loaded machine: CI met it). Here it is never cancelled, so the test
    # says whether a begun analysis is the one the lint uses, however slowly its thread starts.
    monkeypatch.setattr(concurrent.futures.Future, "cancel", lambda future: False)
    lsp.lint_buffer(str(project / "edited.py"), tool("edited", "nope"))
    assert sent == [("edited.py", "fusion-lint-early")] and last()[2] == ["edited.py"]


def test_overlapping_lints_pause_collection_until_the_last_ends() -> None:
    """Two lints overlap in the server (a superseded one still finishing): the first to end must not
    turn collection on under the other (collections scanning every kept fact), nor the last leave
    it off for good."""
    import gc
    import threading

    from fusion_lint.base.memory import gc_paused

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            assert second_in.wait(10)
        first_out.set()

    def second() -> None:
        assert first_in.wait(10)
        with gc_paused():
            second_in.set()
            assert first_out.wait(10)
            seen.append(gc.isenabled())

    assert gc.isenabled()
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [False] and gc.isenabled()


def test_a_pathological_buffer_is_not_kept(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over ``KEPT_BUFFER_BYTES`` a buffer's facts leave with its lint (they would stay in the server)."""
    import fusion_lint.source.runner as runner

    monkeypatch.setattr(runner, "KEPT_BUFFER_BYTES", 100)  # the test's buffers are a few hundred bytes
    published(project, tool("edited", "nope"))
    for _ in range(2):
        published(project, tool("edited", "nope"))
        assert last()[2] == ["edited.py"]  # parsed again, each time
    assert all(result.path != str(project / "edited.py") for result in lsp.PROJECT_FACTS.results.values())


# ----- what the kept facts cost in memory (counted: objects shared, held, collected) -------------


def spans_of(value: object, found: list) -> None:
    """Every reference to a ``Span`` below ``value`` (a span met twice is listed twice)."""
    from fusion_lint.base.diagnostics import Span

    stack, seen = [value], set()
    while stack:
        current = stack.pop()
        if isinstance(current, Span):
            found.append(current)
            continue
        if id(current) in seen or isinstance(current, (str, bytes, int, float, type(None))):
            continue
        seen.add(id(current))
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, (list, tuple, set, frozenset)):
            stack.extend(current)
        else:
            stack.extend(
                getattr(current, name)
                for cls in type(current).__mro__
                for name in getattr(cls, "__slots__", ())
                if hasattr(current, name)
            )
            stack.extend(getattr(current, "__dict__", {}).values())


def shared(spans: list) -> tuple[int, int, int]:
    """(references, objects, distinct values)."""
    return len(spans), len({id(span) for span in spans}), len({tuple(span.__reduce__()[1]) for span in spans})


def test_equal_spans_of_the_kept_facts_are_one_object(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's facts are kept between lints: equal spans loaded in one lint (a worker's answer,
    the cache) share one object, through a table that is that lint's only (it would otherwise
    outlive every version of the buffer it ever shared)."""
    import pickle

    from fusion_lint.base.diagnostics import Span, unpickled

    def counted() -> tuple[int, int, int]:
        spans: list = []
        for result in lsp.PROJECT_FACTS.results.values():
            spans_of(result.facts, spans)
        return shared(spans)

    published(project, tool("edited", "nope"))  # the project parsed: its facts from the workers
    references, objects, values = counted()
    assert references > objects == values  # the tool modules repeat each other's positions
    monkeypatch.setattr(lsp, "PROJECT_FACTS", KeptFacts())  # a new server: its facts from the cache
    monkeypatch.setattr(lsp, "PROJECT_RESOLUTION", lsp.kept_resolution.KeptResolution())
    published(project, tool("edited", "nope"))
    assert len(last()[1]) == OTHERS + 1
    references, objects, values = counted()
    assert references > objects == values
    twice = pickle.dumps([Span(1, 0, 1, 4, 0, 4, 1), Span(1, 0, 1, 4, 0, 4, 1)])
    first, second = unpickled(twice)
    assert first == second and first is not second  # (without a loader's table, nothing is shared)
    table: dict = {}
    first, second = unpickled(twice, table)
    assert first is second and list(table.values()) == [first]


def test_a_kept_worker_pool_holds_nothing_of_its_last_run(project: Path) -> None:
    """A cold open parses the whole project in the lint's kept worker: its pool must not keep every
    file's content, result and pickle until its next run."""
    import fusion_lint.source.runner as runner

    published(project, tool("edited", "nope"))
    assert runner._all_kept
    for pool in runner._all_kept:
        assert (pool.items, pool.results, pool.payloads) == ((), [], [])


class _Cycle:
    """Garbage only the cyclic collector frees; counts its finalisations (in the worker)."""

    finalised = 0

    def __init__(self) -> None:
        self.itself = self

    def __del__(self) -> None:
        _Cycle.finalised += 1


def _leave_a_cycle(path: str, data: bytes, runtime_modules) -> object:  # type: ignore[no-untyped-def]
    from fusion_lint.source.gate import Unreadable
    from fusion_lint.source.pipeline import FileResult

    _Cycle()
    return FileResult(path, problem=Unreadable("FL000", f"{_Cycle.finalised} finalised before"))


def test_a_kept_worker_collects_each_batch_garbage() -> None:
    """The language server's kept worker analyses one buffer a lint: the garbage cycles of each
    must not stay until its 200th file (collection is paused while files are analysed)."""
    import multiprocessing

    from fusion_lint.source.workers import WorkerPool

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the worker's analysis is this module's function: fork only")
    pool = WorkerPool(_leave_a_cycle, ("mcp_fusion",), 1, multiprocessing.get_context("fork"), keep=True)
    try:
        first = pool.run([("a.py", b""), ("b.py", b"")])  # (two batches of one file: the queue is short)
        second = pool.run([("c.py", b"")])
    finally:
        pool.close()
    seen = [result.problem.message for result in first + second]  # type: ignore[union-attr]
    assert seen == ["0 finalised before", "1 finalised before", "2 finalised before"]


def test_a_kept_worker_that_read_a_whole_project_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold open parses the project in the lint's kept worker: its memory, grown by thousands of
    files, would stay for the server's life. Past ``RECYCLE_AFTER_BYTES`` in one run it is ended."""
    import multiprocessing

    import fusion_lint.source.workers as workers

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the worker's analysis is this module's function: fork only")
    monkeypatch.setattr(workers, "RECYCLE_AFTER_BYTES", 100)
    pool = workers.WorkerPool(_leave_a_cycle, ("mcp_fusion",), 1, multiprocessing.get_context("fork"), keep=True)
    try:
        for _ in range(3):  # a lint: one buffer, under the limit however many lints there are
            pool.run([("buffer.py", b"x" * 60)])
            assert len(pool.workers) == 1
        kept = pool.workers[0].process.pid
        pool.run([("buffer.py", b"x" * 60)])
        assert [worker.process.pid for worker in pool.workers] == [kept]
        pool.run([("a.py", b"x" * 60), ("b.py", b"x" * 60)])  # a project's worth
        assert pool.workers == []
    finally:
        pool.close()
