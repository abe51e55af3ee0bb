"""Worker processes that analyse one file at a time (DESIGN §11).

An unknown input may still make the analysis run for minutes or kill the process (libcst's native
parser, which the facts were read from until issue 19, did both on inputs CPython admits; CPython's
own parser is not immune either). So files are analysed in workers that take one file at a time. The parent knows which file each worker holds: a worker that dies costs that
file an FL000 and is replaced; a file that runs past its deadline has its worker killed and
replaced, and becomes FL000 too. Every other file is analysed as usual.

Results come back in the order of the input whatever the number of workers, so output never
depends on ``--jobs``.
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

import fusion_lint.source.gate as source
from fusion_lint.base.diagnostics import Span, unpickled
from fusion_lint.base.memory import COLLECT_EVERY, gc_paused
from fusion_lint.source.gate import Unreadable
from fusion_lint.source.pipeline import FileResult

#: Every file gets this long, plus ``TIMEOUT_PER_MB_S`` per megabyte of source, before its worker
#: is killed. A 100 kB module parses in about 0.1 s; a legitimate file never comes near this.
TIMEOUT_BASE_S = 10.0
TIMEOUT_PER_MB_S = 30.0

WORKER_RECURSION_LIMIT = 20_000
#: A kept worker (``WorkerPool(keep=True)``) that read a file larger than this is not kept.
RECYCLE_AFTER_BYTES = 1_000_000

Analyze = Callable[[str, bytes, Sequence[str]], FileResult]


def deadline_for(data: bytes) -> float:
    return TIMEOUT_BASE_S + TIMEOUT_PER_MB_S * len(data) / 1_000_000


def _serve(connection: Connection, analyze: Analyze, runtime_modules: Sequence[str]) -> None:
    """A worker's life: receive a list of ``(path, data)``, send back each file's pickled
    ``FileResult`` in that order as soon as it is done; ``None`` ends it."""
    # The parent handles Ctrl-C and ends the workers; a worker dying on it first would be reported
    # as a crash of the file it held.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # CPython's gate admits expressions nested up to ~3,000 levels; walking them takes a few
    # Python frames per level. Here, a stack overflow costs one file, not the run (see above).
    source.analysis_recursion_limit = WORKER_RECURSION_LIMIT
    # What the worker inherited (a forked parent's facts, the fork server's imports) is never its
    # garbage: collections here skip it, and so never touch (and copy) the pages it shares.
    gc.freeze()
    done = 0
    with gc_paused():
        while True:
            try:
                batch = connection.recv()
            except EOFError:
                return
            if batch is None:
                return
            for path, data in batch:
                connection.send_bytes(_portable(analyze(path, data, runtime_modules)))
                done += 1
                if done % COLLECT_EVERY == 0:
                    gc.collect()
            # A batch answered: its garbage cycles are collected now, in the youngest generation
            # (what its files allocated; cheap, their results are sent and dropped). A kept worker
            # (the language server's, one buffer a lint) would otherwise grow by a buffer's
            # garbage every lint until its 200th file.
            gc.collect(0)


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
    # Indices of the files sent and not answered yet, in the order the worker takes them: the
    # first is the one it is reading now, and the one to blame if it dies or runs out of time.
    held: deque[int] = field(default_factory=deque)
    deadline: float = 0.0
    grown: bool = False  # it read a file large enough to leave its memory grown
    read: int = 0  # bytes it analysed in this run


class WorkerPool:
    """``workers`` processes analysing ``items``; see the module docstring.

    Each worker gets a few files at a time (``BATCH``) and answers file by file, so the parent
    unpickles one result while the worker reads the next file instead of both waiting in turn.
    """

    BATCH = 8

    def __init__(
        self,
        analyze: Analyze,
        runtime_modules: Sequence[str],
        workers: int,
        context: multiprocessing.context.BaseContext,
        deadline_s: float | None = None,
        keep: bool = False,
    ):
        self.analyze = analyze
        self.runtime_modules = tuple(runtime_modules)
        self.size = max(1, workers)
        self.context = context
        self.deadline_s = deadline_s  # a cap on ``deadline_for`` (the language server's)
        self.keep = keep  # workers outlive ``run`` (see there)
        self.workers: list[_Worker] = []
        self.payloads: list[bytes | None] = []

    def _deadline(self, index: int) -> float:
        allowed = deadline_for(self.items[index][1])
        return allowed if self.deadline_s is None else min(allowed, self.deadline_s)

    def _start(self) -> _Worker:
        parent, child = self.context.Pipe(duplex=True)
        process = self.context.Process(  # type: ignore[attr-defined]  # every context get_context() makes has one
            target=_serve, args=(child, self.analyze, self.runtime_modules), daemon=True, name="fusion-lint-worker"
        )
        process.start()
        child.close()
        worker = _Worker(process, parent)
        self.workers.append(worker)
        return worker

    def _retire(self, worker: _Worker, grace: float = 0.0) -> None:
        """End it: after ``grace`` seconds to exit by itself (a dying one reports how it died)."""
        self.workers.remove(worker)
        if grace:
            worker.process.join(timeout=grace)
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(timeout=5)
        worker.connection.close()

    def run(
        self, items: Sequence[tuple[str, bytes]], spans: dict[tuple[int, ...], Span] | None = None
    ) -> list[FileResult]:
        """The results in the order of ``items``; ``payloads`` then holds each as the worker pickled
        it (None for a file whose worker died or was killed), for the cache to write as it is.
        ``spans``: the loader's table of shared spans (``diagnostics.SharedSpans``).

        A pool made with ``keep`` keeps its workers for the next run (the language server lints
        one buffer at a time: a process per lint would cost its start and a cold interpreter),
        except one that read a file over ``RECYCLE_AFTER_BYTES``, or more than that in this run (a
        cold open's whole project), whose memory stays grown."""
        self.items, self.spans = items, spans
        self.results: list[FileResult | None] = [None] * len(items)
        self.payloads = [None] * len(items)
        self.queue: deque[int] = deque(range(len(items)))
        finished = False
        try:
            for worker in [w for w in self.workers if not w.process.is_alive()]:
                self._retire(worker)  # died between runs: no file of this run is to blame
            for worker in self.workers:
                worker.read = 0
            while len(self.workers) < min(self.size, len(items)):
                self._start()
            while self.queue or any(w.held for w in self.workers):
                for worker in self.workers:
                    if not worker.held and self.queue:
                        self._assign(worker)
                self._collect()
            finished = True
        finally:
            if not (self.keep and finished):
                self.close()
        for worker in [w for w in self.workers if w.grown]:
            self._retire(worker)
        results = [r if r is not None else _lost(items[i][0]) for i, r in enumerate(self.results)]
        # A kept pool outlives this run: holding its files' contents and results until the next
        # one would keep a cold open's whole project twice (the language server: ~100 MB at 3,000 modules).
        self.items, self.results = (), []
        return results

    def take_payloads(self) -> list[bytes | None]:
        """The last run's ``payloads``, handed over once (a kept pool does not hold them after)."""
        payloads, self.payloads = self.payloads, []
        return payloads

    def _assign(self, worker: _Worker) -> None:
        # Smaller batches near the end, so that no worker is left with a long tail alone.
        size = max(1, min(self.BATCH, len(self.queue) // (2 * len(self.workers))))
        worker.held.extend(self.queue.popleft() for _ in range(min(size, len(self.queue))))
        worker.deadline = time.monotonic() + self._deadline(worker.held[0])
        try:
            worker.connection.send([self.items[index] for index in worker.held])
        except (BrokenPipeError, ConnectionError, OSError):
            pass  # it died already: the next wait sees its sentinel

    def _collect(self) -> None:
        busy = [w for w in self.workers if w.held]
        if not busy:
            return
        timeout = max(0.0, min(w.deadline for w in busy) - time.monotonic())
        ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy], timeout))
        for worker in busy:
            index = worker.held[0]
            if worker.connection in ready:
                try:
                    payload = worker.connection.recv_bytes()
                except (EOFError, OSError):
                    pass  # died while answering: a crash, below
                else:
                    self.results[index] = unpickled(payload, self.spans)
                    self.payloads[index] = payload
                    worker.read += len(self.items[index][1])
                    worker.grown |= worker.read > RECYCLE_AFTER_BYTES
                    worker.held.popleft()
                    if worker.held:  # the clock starts for the next file it holds
                        worker.deadline = time.monotonic() + self._deadline(worker.held[0])
                    continue
            path = self.items[index][0]
            if worker.connection in ready or worker.process.sentinel in ready:
                self._retire(worker, grace=1.0)  # its pipe closed first: let it finish dying
                self._replace(worker, _crashed(path, worker.process.exitcode))
            elif time.monotonic() >= worker.deadline:
                self._retire(worker)
                limit = self._deadline(index)
                problem = Unreadable("FL000", f"parsing did not finish within {limit:.0f} s", transient=True)
                self._replace(worker, FileResult(path, problem=problem))

    def _replace(self, worker: _Worker, result: FileResult) -> None:
        """After a dead or stuck worker: its current file gets ``result``, the files it had not
        started go back to the front of the queue, and a new worker takes its place."""
        self.results[worker.held.popleft()] = result
        self.queue.extendleft(reversed(worker.held))
        self._start()

    def close(self) -> None:
        for worker in list(self.workers):
            if not worker.held:
                try:
                    worker.connection.send(None)
                except (BrokenPipeError, ConnectionError, OSError):
                    pass
        for worker in list(self.workers):
            worker.process.join(timeout=0.5 if not worker.held else 0)
            self._retire(worker)


def _crashed(path: str, exitcode: int | None) -> FileResult:
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"was killed by signal {-exitcode}"
    else:
        how = f"exited with status {exitcode}"
    return FileResult(
        path, problem=Unreadable("FL000", f"the parser process {how} while reading this file", transient=True)
    )


def _lost(path: str) -> FileResult:  # pragma: no cover (every index is filled unless interrupted)
    return FileResult(
        path, problem=Unreadable("FL000", "the parser process was lost before reading this file", transient=True)
    )
