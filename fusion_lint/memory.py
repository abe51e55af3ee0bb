"""Garbage collection while a run allocates in bulk (parsing, unpickling, running rules)."""
from __future__ import annotations

import gc
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
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
