"""Garbage collection while a run allocates in bulk (parsing, unpickling, running rules)."""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

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
