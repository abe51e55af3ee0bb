"""Garbage collection while a run allocates in bulk (parsing, unpickling, running rules)."""

from __future__ import annotations

import gc
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

#: Cyclic garbage is collected once per this many files while collection is paused.
COLLECT_EVERY = 200


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic cyclic garbage collection while files are parsed or results unpickled.

    Both allocate hundreds of thousands of objects that reference counting frees (syntax trees
    hold no cycles; a file leaves a few hundred objects of closures behind), yet every 700
    allocations trigger a collection that scans the growing set of retained results: measured on
    the dense benchmark corpus, ~15% of the analysis time, and most of loading a run's report
    once the files' facts are in memory.

    Pauses nest and overlap across threads (the language server's lints): collection resumes when
    the last one ends, if it ran when the first began. (Each restoring what it saw would let the
    first to end turn collection back on under the others, and the last leave it off for good.)
    """
    global _active
    with _lock:
        if _active == 0:
            _resume_after[0] = gc.isenabled()
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _resume_after[0]:
                gc.enable()


_lock = threading.Lock()
_active = 0  # pauses running now, in any thread
_resume_after = [False]  # whether collection ran when the first of them began


def hand_back_freed_memory() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; nothing elsewhere).

    What a lint frees (a cold open's results and their pickles, a project's facts loaded again)
    stays in the process's resident set otherwise: glibc gives back only the top of its heap, and a
    long-lived server's heap top is whatever it kept last. Measured at 3,000 modules: ~110 MB, 1–10 ms."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl, or no glibc by that name
        return None


class RecentlyUsed:
    """What the language server keeps between runs (files' facts, folders' listings), forgotten
    once none of the last ``runs`` runs used it: memory stays that of what is being edited, not
    of every version of every file the session ever saw."""

    def __init__(self, runs: int) -> None:
        self.recent: deque[set[Any]] = deque(maxlen=runs)
        self.lock = threading.Lock()

    def forget_unused(self, kept: dict[Any, Any], used: set[Any]) -> None:
        """Record this run's ``used`` keys and drop from ``kept`` what no remembered run used."""
        with self.lock:
            self.recent.append(used)
            wanted = set().union(*self.recent)
            # (a copy of the keys: another thread's run may be adding to ``kept`` meanwhile)
            for key in [key for key in list(kept) if key not in wanted]:
                kept.pop(key, None)
