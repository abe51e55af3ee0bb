"""Worker processes that analyse one file at a time (DESIGN §11).

libcst's native parser is hostile territory: CPython's gate stops what is known to crash it, but
inputs the gate admits can still make it run for a minute (measured: a 2,900-link subscript chain,
58 s), and an unknown input may still kill the process. So files are analysed in workers that take
one file at a time. The parent knows which file each worker holds: a worker that dies costs that
file an FL000 and is replaced; a file that runs past its deadline has its worker killed and
replaced, and becomes FL000 too. Every other file is analysed as usual.

Results come back in the order of the input whatever the number of workers, so output never
depends on ``--jobs``.
"""
from __future__ import annotations

import gc
import itertools
import multiprocessing
import pickle
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Callable, Optional, Sequence

from . import source
from .pipeline import FileResult
from .source import Unreadable

#: Every file gets this long, plus ``TIMEOUT_PER_MB_S`` per megabyte of source, before its worker
#: is killed. A 100 kB module parses in about 0.1 s; a legitimate file never comes near this.
TIMEOUT_BASE_S = 10.0
TIMEOUT_PER_MB_S = 30.0

WORKER_RECURSION_LIMIT = 20_000

Analyze = Callable[[str, bytes, Sequence[str]], FileResult]


def deadline_for(data: bytes) -> float:
    return TIMEOUT_BASE_S + TIMEOUT_PER_MB_S * len(data) / 1_000_000


def _serve(connection: Connection, analyze: Analyze, runtime_modules: Sequence[str]) -> None:
    """A worker's life: receive ``(path, data)``, send back its ``FileResult``; ``None`` ends it."""
    from .runner import COLLECT_EVERY, gc_paused  # noqa: PLC0415 (the runner imports this module)

    # The parent handles Ctrl-C and ends the workers; a worker dying on it first would be reported
    # as a crash of the file it held.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # CPython's gate admits expressions nested up to ~3,000 levels; walking them takes a few
    # Python frames per level. Here, a stack overflow costs one file, not the run (see above).
    source.analysis_recursion_limit = WORKER_RECURSION_LIMIT
    with gc_paused():
        for done in itertools.count(1):
            try:
                task = connection.recv()
            except EOFError:
                return
            if task is None:
                return
            path, data = task
            connection.send_bytes(_portable(analyze(path, data, runtime_modules)))
            if done % COLLECT_EVERY == 0:
                gc.collect()


def _portable(result: FileResult) -> bytes:
    """The pickled result, made here under the interpreter's default recursion limit (not the
    raised one the analysis ran under): what cannot be pickled here could not be cached or walked
    in the parent either, so it is this file's FL000 instead of the parent's RecursionError."""
    with source.shallow_recursion():
        try:
            return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except RecursionError:
            pass
    too_deep = Unreadable("FL000", "the file parses, but nests too deeply for fusion-lint to analyse it")
    return pickle.dumps(FileResult(result.path, problem=too_deep), protocol=pickle.HIGHEST_PROTOCOL)


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    connection: Connection
    task: Optional[int] = None  # index of the file it holds
    deadline: float = 0.0


class WorkerPool:
    """``workers`` processes analysing ``items``; see the module docstring."""

    def __init__(self, analyze: Analyze, runtime_modules: Sequence[str], workers: int, context: multiprocessing.context.BaseContext):
        self.analyze = analyze
        self.runtime_modules = tuple(runtime_modules)
        self.size = max(1, workers)
        self.context = context
        self.workers: list[_Worker] = []

    def _start(self) -> _Worker:
        parent, child = self.context.Pipe(duplex=True)
        process = self.context.Process(
            target=_serve, args=(child, self.analyze, self.runtime_modules), daemon=True, name="fusion-lint-worker"
        )
        process.start()
        child.close()
        worker = _Worker(process, parent)
        self.workers.append(worker)
        return worker

    def _retire(self, worker: _Worker, kill: bool) -> None:
        self.workers.remove(worker)
        if kill and worker.process.is_alive():
            worker.process.kill()
        worker.process.join(timeout=5)
        worker.connection.close()

    def run(self, items: Sequence[tuple[str, bytes]]) -> list[FileResult]:
        """The results in the order of ``items``; ``payloads`` then holds each as the worker pickled
        it (None for a file whose worker died or was killed), for the cache to write as it is."""
        results: list[Optional[FileResult]] = [None] * len(items)
        self.payloads: list[Optional[bytes]] = [None] * len(items)
        queue = list(range(len(items) - 1, -1, -1))  # popped from the end: input order
        try:
            for _ in range(min(self.size, len(items))):
                self._start()
            while queue or any(w.task is not None for w in self.workers):
                for worker in [w for w in self.workers if w.task is None]:
                    if not queue:
                        break
                    self._assign(worker, queue.pop(), items)
                self._collect(items, results)
        finally:
            self.close()
        return [r if r is not None else _lost(items[i][0]) for i, r in enumerate(results)]

    def _assign(self, worker: _Worker, index: int, items: Sequence[tuple[str, bytes]]) -> None:
        worker.task = index
        worker.deadline = time.monotonic() + deadline_for(items[index][1])
        try:
            worker.connection.send(items[index])
        except (BrokenPipeError, ConnectionError, OSError):
            pass  # it died already: the next wait sees its sentinel

    def _collect(self, items: Sequence[tuple[str, bytes]], results: list[Optional[FileResult]]) -> None:
        busy = [w for w in self.workers if w.task is not None]
        if not busy:
            return
        timeout = max(0.0, min(w.deadline for w in busy) - time.monotonic())
        ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy], timeout))
        for worker in busy:
            index = worker.task
            assert index is not None
            path = items[index][0]
            if worker.connection in ready:
                try:
                    payload = worker.connection.recv_bytes()
                    results[index] = pickle.loads(payload)
                    self.payloads[index] = payload
                    worker.task = None
                    continue
                except (EOFError, OSError):
                    pass  # died while answering: a crash, below
            if worker.connection in ready or worker.process.sentinel in ready:
                self._retire(worker, kill=True)
                results[index] = _crashed(path, worker.process.exitcode)
                self._start()
            elif time.monotonic() >= worker.deadline:
                self._retire(worker, kill=True)
                results[index] = FileResult(
                    path,
                    problem=Unreadable(
                        "FL000", f"parsing did not finish within {deadline_for(items[index][1]):.0f} s", transient=True
                    ),
                )
                self._start()

    def close(self) -> None:
        for worker in list(self.workers):
            if worker.task is None:
                try:
                    worker.connection.send(None)
                except (BrokenPipeError, ConnectionError, OSError):
                    pass
        for worker in list(self.workers):
            worker.process.join(timeout=0.5 if worker.task is None else 0)
            self._retire(worker, kill=True)


def _crashed(path: str, exitcode: Optional[int]) -> FileResult:
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"was killed by signal {-exitcode}"
    else:
        how = f"exited with status {exitcode}"
    return FileResult(path, problem=Unreadable("FL000", f"the parser process {how} while reading this file", transient=True))


def _lost(path: str) -> FileResult:  # pragma: no cover (every index is filled unless interrupted)
    return FileResult(path, problem=Unreadable("FL000", "the parser process was lost before reading this file", transient=True))
