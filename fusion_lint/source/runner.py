"""Running the per-file pipeline over many files: the cache first, then isolated worker processes.

A crash or a hang while a file is analysed must cost one file, not the run: files are parsed in worker processes that take one file at a time
(``workers.py``), so the file a dead or stuck worker held becomes FL000 and every other file is
linted as usual. Only where a worker cannot be started cheaply and safely (a process with other
threads running, such as the language server, on a platform without ``fork``; or a handful of
files where spawning a fresh interpreter costs more than the work) are files parsed in-process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fusion_lint.base.diagnostics import Span
from fusion_lint.base.memory import COLLECT_EVERY, RecentlyUsed, gc_paused, hand_back_freed_memory
from fusion_lint.base.modules import module_of
from fusion_lint.config.settings import Settings
from fusion_lint.memo.cache import FileCache, cache_directory
from fusion_lint.memo.stat_index import BUILDS_SERVER, SKIPPED, Remembered, StatIndex, signature
from fusion_lint.source.gate import Unreadable
from fusion_lint.source.pipeline import (
    MAX_FILE_BYTES,
    FileResult,
    analyze_file,
    builds_a_server,
    mentions_runtime,
    read_source,
    too_large,
)
from fusion_lint.source.workers import RECYCLE_AFTER_BYTES, WorkerPool

if TYPE_CHECKING:  # (the CLI never begins an analysis early: it does not import the thread pool)
    from concurrent.futures import Future, ThreadPoolExecutor

#: A buffer larger than this (a pathological one) is neither begun early nor kept in memory after its
#: lint: its facts, hundreds of megabytes, would stay in the server (a file on disk is cached as usual).
KEPT_BUFFER_BYTES = RECYCLE_AFTER_BYTES
#: From this many files to parse, ``--jobs`` workers share them; below it, one worker does.
PARALLEL_THRESHOLD = 12
#: Without ``fork``, a worker is a fresh interpreter (start-up and imports): worth it from here.
SPAWN_THRESHOLD = 24


def analyze_one(path: str, data: bytes, runtime_modules: Sequence[str]) -> FileResult:
    """What a worker runs for each file (the tests replace it to simulate a crash or a hang)."""
    return analyze_file(path, runtime_modules, data=data, prescan=False)


def analyze_light(path: str, data: bytes, runtime_modules: Sequence[str]) -> FileResult:
    """What a worker runs for a file a partial run only reads (``pipeline.analyze_file(light=True)``)."""
    return analyze_file(path, runtime_modules, data=data, prescan=False, light=True)


def _analyze_in_process(
    items: Sequence[tuple[str, bytes]],
    runtime_modules: Sequence[str],
    analyze: Callable[[str, bytes, Sequence[str]], FileResult],
) -> list[FileResult]:
    results = []
    with gc_paused():
        for done, (path, data) in enumerate(items, start=1):
            results.append(analyze(path, data, runtime_modules))
            if done % COLLECT_EVERY == 0:
                gc.collect()
    return results


def isolation_context(files: int) -> multiprocessing.context.BaseContext | None:
    """How to start workers for ``files`` files, or None to parse in-process."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")  # cheap, and safe without other threads
    if files >= SPAWN_THRESHOLD:
        return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return None


def strict_context() -> multiprocessing.context.BaseContext:
    """Workers for a run given a ``deadline`` (``run_files``): fork when no other thread runs, else
    a fork server that has imported the analysis already (a fresh interpreter per lint would cost
    ~0.3 s)."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return _fork_server() or multiprocessing.get_context("spawn")


def _fork_server() -> multiprocessing.context.BaseContext | None:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None  # pragma: no cover (Windows)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["fusion_lint.source.runner"])  # (it imports the pipeline and the extractor)
    return context


def start_fork_server() -> None:
    """Start the fork server ``strict_context`` will use, ahead of the first lint that needs it
    (it imports the analysis: time the language server's first answer would otherwise wait)."""
    if _fork_server() is not None:
        from multiprocessing import forkserver

        forkserver.ensure_running()


class KeptFacts:
    """Files' results kept in memory from one run to the next, by their cache key (the language
    server: a lint per keystroke would otherwise re-read and re-unpickle the whole project's cached
    facts). The key is what the per-file cache is keyed by (content, path, module name, settings,
    linter code) and is computed exactly as without this (the stat index first, then the content's
    hash), so a file changed on disk, a moved module or another config gets another key and is
    analysed again: a kept result is only ever one the cache would have served.

    Results no run used in its last ``RUNS_REMEMBERED`` uses are dropped: memory stays that of the
    projects being edited, not of every version of every file they ever had."""

    RUNS_REMEMBERED = 8

    def __init__(self) -> None:
        self.results: dict[str, FileResult] = {}
        self.used = RecentlyUsed(self.RUNS_REMEMBERED)
        self.last: FactsLease | None = None  # the last run's use of it (what the tests count)
        self.stat_indexes: Remembered = {}  # what the runs' stat indexes saved last (``StatIndex``)

    def forget_unused(self, used: set[str]) -> None:
        self.used.forget_unused(self.results, used)

    def clear(self) -> None:
        """Keep nothing: what a run raised while reusing may have come from here."""
        self.results.clear()
        self.stat_indexes.clear()


@dataclass
class FactsLease:
    """One run's use of ``KeptFacts``, and what it did (the tests count it; no timing)."""

    kept: KeptFacts
    used: set[str] = field(default_factory=set)
    from_memory: int = 0  # results served from memory
    from_disk: list[str] = field(default_factory=list)  # paths whose cached result was unpickled
    analysed: list[str] = field(default_factory=list)  # paths parsed and their facts extracted
    early: dict[str, Future[FileResult]] = field(default_factory=dict)  # key -> a buffer's analysis, begun early
    # Equal spans loaded under this lease share one object (a third of a project's objects,
    # ``diagnostics.SharedSpans``); the table is this lease's only, so it never outlives what it shared.
    spans: dict[tuple[int, ...], Span] = field(default_factory=dict)

    def get(self, key: str | None, path: str) -> FileResult | None:
        if key is None:
            return None
        early = self.early.pop(key, None)
        # Not begun yet (another document's buffer holds the early worker): parsed as usual instead.
        if early is not None and not early.cancel():
            try:
                result = early.result()
            except Exception:  # pragma: no cover (the pool reports a worker's death as FL000)
                return None
            if result.path == path:
                self.analysed.append(path)
                if not _transient(result):  # a deadline met is this run's FL000, not parsed twice
                    self.keep(key, result)
                return result
        kept = self.kept.results.get(key)
        if kept is None or kept.path != path:
            return None
        self.used.add(key)
        self.from_memory += 1
        return kept

    def analyse_early(self, path: str, data: bytes, runtime_modules: Sequence[str], deadline: float) -> None:
        """Begin analysing a buffer in its worker now (within ``deadline`` seconds, as the run's
        files are), while this process walks and stats the project: ``get`` then waits for it. Its
        key is the one ``run_files`` will compute only if ``runtime_modules`` are the run's;
        otherwise it is never asked for, and parsed as usual."""
        if len(data) > KEPT_BUFFER_BYTES:
            return
        key = FileCache(Path("."), runtime_modules).key(path, *module_of(path)[:2], data)
        if key not in self.kept.results and key not in self.early:
            early = _early_thread().submit(_analyse_isolated, path, data, tuple(runtime_modules), deadline, self.spans)
            self.early[key] = early

    def keep(self, key: str, result: FileResult) -> None:
        self.used.add(key)
        self.kept.results[key] = result


@contextmanager
def facts_kept_in(kept: KeptFacts) -> Iterator[FactsLease]:
    """A lease of ``kept`` for the runs of this block that are given it (``run_files``'s
    ``lease``): files whose cache key ``kept`` holds are not read from the cache, and what is read
    or analysed is kept there for the next block."""
    lease = FactsLease(kept)
    try:
        yield lease
    finally:
        for early in lease.early.values():  # a superseded run's buffer: not parsed if not begun yet
            early.cancel()
        kept.forget_unused(lease.used)
        kept.last = lease
        hand_back_freed_memory()


_early: list[ThreadPoolExecutor] = []


def _early_thread() -> ThreadPoolExecutor:
    """One thread, and so one kept worker, begins the buffers' analyses (``FactsLease.analyse_early``)."""
    with _all_kept_lock:
        if not _early:
            from concurrent.futures import ThreadPoolExecutor

            _early.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="fusion-lint-early"))
        return _early[0]


def _analyse_isolated(
    path: str, data: bytes, runtime_modules: tuple[str, ...], deadline: float, spans: dict[tuple[int, ...], Span]
) -> FileResult:
    with gc_paused():
        pool = _kept_pool(runtime_modules, strict_context(), deadline)
        result, _ = pool.run([(path, data)], spans)[0], pool.take_payloads()  # (a buffer: never cached)
    return result


_kept = threading.local()  # this thread's pool for runs given a deadline
_all_kept: list[WorkerPool] = []
_all_kept_lock = threading.Lock()


def _kept_pool(
    runtime_modules: Sequence[str], context: multiprocessing.context.BaseContext, deadline: float
) -> WorkerPool:
    """One worker per thread that lints with a deadline, kept from one lint to the next."""
    pool: WorkerPool | None = getattr(_kept, "pool", None)
    if pool is None or pool.runtime_modules != tuple(runtime_modules) or pool.context is not context:
        if pool is not None:
            pool.close()
        pool = WorkerPool(analyze_one, runtime_modules, 1, context, deadline, keep=True)
        _kept.pool = pool
        with _all_kept_lock:
            _all_kept.append(pool)
    pool.deadline_s = deadline
    return pool


class KeptWorker:
    """One worker kept across many one-file ``run_files`` calls: the files the project index loads
    on demand while it resolves (a service, a callee's module), one at a time. A worker started
    per file would cost each a fork of the whole parent, holding every fact of the run (measured
    on ../shared/corpus: ~1 s a file on a busy machine, 198 files)."""

    def __init__(self, runtime_modules: Sequence[str]):
        self.runtime_modules = tuple(runtime_modules)
        self.pool: WorkerPool | None = None

    def pool_for(self, context: multiprocessing.context.BaseContext) -> WorkerPool:
        if self.pool is None or self.pool.context is not context:
            self.close()
            self.pool = WorkerPool(analyze_one, self.runtime_modules, 1, context, keep=True)
        return self.pool

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


def close_kept_pools() -> None:
    """End the workers kept for runs given a deadline (the language server, at shutdown)."""
    with _all_kept_lock:
        pools, _all_kept[:] = list(_all_kept), []
    for pool in pools:
        pool.close()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def run_files(
    paths: Sequence[str],
    settings: Settings,
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    cache_root: Path | None = None,
    prescan: bool = True,
    overrides: dict[str, bytes] | None = None,
    probe: Callable[[list[FileResult]], bool] | None = None,
    isolate: bool = True,
    kept: KeptWorker | None = None,
    read_back: dict[str, bytes] | None = None,
    contents: dict[str, bytes] | None = None,
    light: Callable[[dict[str, bytes], set[str]], set[str]] | None = None,
    lease: FactsLease | None = None,
    deadline: float | None = None,
) -> list[FileResult]:
    """Results in the order of ``paths``, whatever the number of processes. Without ``isolate``
    (snippets we wrote ourselves, such as the rule examples), files are parsed in this process.

    ``lease`` (the language server's, ``facts_kept_in``): facts kept in memory between its lints
    serve and keep, with the cache. ``deadline``: every file is parsed in a worker process, even
    when there is one, each within this many seconds (the language server lints buffers so: a
    pathological one costs a worker and an FL000, never the server's memory or its time).

    ``light`` (a run without the cache only: light facts are never stored) is shown the content
    of every file read, those the pre-scan skips included, and the files to analyse, and answers
    which of them get light facts (``analyze_light``).

    ``probe`` sees every file's result before any fact is loaded or parsed: files to analyse
    carry only their cache key. When it returns True (the whole run is remembered), those
    partial results are returned as they are, and ``read_back`` gets the bytes read to key
    them; a later call given them as ``contents`` keys and analyses those bytes instead of
    reading the files again (the run's snapshot loads what an edit reaches so, ``snapshot_run``).
    """
    runtime_modules = tuple(settings.runtime_modules)
    cache = FileCache(cache_directory(settings.cache_dir, cache_root), runtime_modules) if use_cache else None
    # Files whose stat has not moved since the last run keep their key without being read or hashed.
    # (The walk's files only: a file loaded alone later, prescan off, is read as before.)
    # One index per project root: two projects sharing a cache directory do not evict each other.
    lease = lease if cache is not None else None
    spans = lease.spans if lease is not None else None  # (what the lease loads shares equal spans)
    stats = (
        StatIndex(cache.directory, cache.salt + f"|{cache_root}".encode(), lease.kept.stat_indexes if lease else None)
        if cache is not None and prescan
        else None
    )
    results: list[FileResult] = []
    to_analyse: list[tuple[int, bytes | None]] = []  # index into results, content (None: not read yet)
    seen: dict[str, bytes] = {}  # every file read, skipped ones included, for ``light``
    # A buffer's key for the facts kept in memory (a text reopened, an undo), never for the disk.
    buffer_keys: dict[int, str] = {}
    for path in paths:
        data = (overrides or {}).get(path)
        # An unsaved buffer (stdin, the editor) changes with every keystroke: caching each version
        # would only fill the cache directory with entries that are never read again.
        cached_file = cache is not None and data is None
        if cached_file and contents is not None:
            data = contents.get(path)
        module, is_package, _ = module_of(path) if cached_file else ("", False, "")
        now = signature(path) if stats is not None and cached_file else None
        known = stats.verdict(path, module, is_package, now) if stats is not None else None
        if known in (SKIPPED, BUILDS_SERVER):
            results.append(FileResult(path, skipped=True, builds_server=known == BUILDS_SERVER))
            continue
        if known is not None:
            to_analyse.append((len(results), None))
            results.append(FileResult(path, key=known))
            continue
        if data is None:
            read = read_source(path)
            if isinstance(read, Unreadable):
                results.append(FileResult(path, problem=read))
                continue
            data = read
        if len(data) > MAX_FILE_BYTES:  # a buffer: files are never read past the limit
            results.append(FileResult(path, problem=too_large(len(data))))
            continue
        if light is not None:
            seen[path] = data
        if prescan and not mentions_runtime(data, runtime_modules):
            builds = builds_a_server(data)
            if stats is not None and cached_file and now is not None and now[2] == len(data):
                stats.record(path, module, is_package, now, BUILDS_SERVER if builds else SKIPPED)
            results.append(FileResult(path, skipped=True, builds_server=builds))
            continue
        key = None
        if cache is not None and cached_file:
            key = cache.key(path, module, is_package, data)
            if stats is not None and now is not None and now[2] == len(data):  # not written while read
                stats.record(path, module, is_package, now, key)
        if lease is not None and cache is not None and not cached_file and len(data) <= KEPT_BUFFER_BYTES:
            buffer_keys[len(results)] = cache.key(path, *module_of(path)[:2], data)
        to_analyse.append((len(results), data))
        results.append(FileResult(path, key=key))
    if stats is not None:
        stats.save(keep=set(paths))  # a file no longer in the walk is forgotten
    if probe is not None and probe(results):
        if read_back is not None:
            read_back.update((results[index].path, data) for index, data in to_analyse if data is not None)
        return results

    pending: list[tuple[int, bytes]] = []
    with gc_paused():  # unpickling cached results allocates as much as parsing
        for index, data in to_analyse:
            partial = results[index]
            kept_result = lease.get(partial.key or buffer_keys.get(index), partial.path) if lease is not None else None
            if kept_result is not None:
                # (the same content's result, as a buffer or a file: the key is this run's own)
                results[index] = (
                    kept_result if kept_result.key == partial.key else replace(kept_result, key=partial.key)
                )
                continue
            cached = cache.get(partial.key, spans) if cache is not None and partial.key is not None else None
            if isinstance(cached, FileResult) and cached.path == partial.path:
                cached.key = partial.key
                results[index] = cached
                if lease is not None:
                    lease.from_disk.append(partial.path)
                    lease.keep(partial.key, cached)  # type: ignore[arg-type]  # not None: cached was found by it
                continue
            if data is None:  # its stat said unchanged, but its entry is gone or damaged: read it now
                again = _read_again(partial.path, module_of(partial.path), cache)
                if isinstance(again, Unreadable):
                    results[index] = FileResult(partial.path, problem=again)
                    continue
                results[index] = FileResult(partial.path, key=again[1])
                data = again[0]
            pending.append((index, data))

    lighter: set[str] = set()
    if light is not None and cache is None:
        lighter = light(seen, {results[index].path for index, _ in pending})
    if lighter:
        full = [(index, data) for index, data in pending if results[index].path not in lighter]
        read_only = [(index, data) for index, data in pending if results[index].path in lighter]
        pending = full + read_only
        computed, payloads = _compute(
            [(results[i].path, d) for i, d in full], runtime_modules, jobs, isolate, kept, deadline, spans
        )
        more, more_payloads = _compute(
            [(results[i].path, d) for i, d in read_only],
            runtime_modules,
            jobs,
            isolate,
            kept,
            deadline,
            spans,
            analyze_light,
        )
        computed, payloads = computed + more, payloads + more_payloads
    else:
        computed, payloads = _compute(
            [(results[i].path, d) for i, d in pending], runtime_modules, jobs, isolate, kept, deadline, spans
        )
    for (index, _), result, payload in zip(pending, computed, payloads):
        key = results[index].key
        result.key = key
        results[index] = result
        if lease is not None:
            lease.analysed.append(result.path)
            if index in buffer_keys and not _transient(result):
                lease.keep(buffer_keys[index], result)
        if cache is None or key is None or _transient(result):
            continue
        if lease is not None:
            lease.keep(key, result)
        if payload is not None:
            cache.put_pickled(key, payload)
        else:
            cache.put(key, result)
    return results


def _compute(
    items: list[tuple[str, bytes]],
    runtime_modules: Sequence[str],
    jobs: int | None,
    isolate: bool,
    kept: KeptWorker | None,
    deadline: float | None,
    spans: dict[tuple[int, ...], Span] | None,
    light: Callable[[str, bytes, Sequence[str]], FileResult] | None = None,
) -> tuple[list[FileResult], list[bytes | None]]:
    """Each item's result (in-process, or in isolated workers) and, from a worker, its pickle
    (unpickled sharing ``spans``, ``diagnostics.SharedSpans``). ``light``: what analyses them
    instead of ``analyze_one`` (in a pool of their own)."""
    analyze = light or analyze_one
    if not items or not isolate:
        context = None
    else:
        context = strict_context() if deadline is not None else isolation_context(len(items))
    payloads: list[bytes | None] = [None] * len(items)
    if context is None:
        return _analyze_in_process(items, runtime_modules, analyze), payloads
    workers = min(jobs or default_jobs(), len(items)) if len(items) >= PARALLEL_THRESHOLD else 1
    if light is not None:
        pool = WorkerPool(analyze, runtime_modules, workers, context)
    elif deadline is not None:
        pool = _kept_pool(runtime_modules, context, deadline)
    elif kept is not None and workers == 1:
        pool = kept.pool_for(context)
    else:
        pool = WorkerPool(analyze_one, runtime_modules, workers, context)
    with gc_paused():  # the parent unpickles every result the workers send
        computed = pool.run(items, spans)
    return computed, pool.take_payloads()


def _read_again(
    path: str, module: tuple[str, bool, str], cache: FileCache | None
) -> tuple[bytes, str | None] | Unreadable:
    """The content of a file the stat index vouched for, whose cache entry was missing: its key
    is computed from what is read now (the file may have changed since the stat was taken)."""
    data = read_source(path)
    if isinstance(data, Unreadable):
        return data
    return data, cache.key(path, module[0], module[1], data) if cache is not None else None


def _transient(result: FileResult) -> bool:
    return result.problem is not None and result.problem.transient
