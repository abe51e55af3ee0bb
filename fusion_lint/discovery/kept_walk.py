"""The walk's listings kept between runs of one process (the language server, issue 15): a folder
whose stat has not moved since it was listed is not listed again, nor are its entries judged again.

What a folder contributes to a walk is its entries in name order, each a file to lint or a folder
to descend into, after the excludes and ``.gitignore`` rules that judge them. That is a function of

* the folder's listing: names and kinds. Adding, removing or renaming an entry moves the folder's
  ``mtime``/``ctime``; a folder replaced by another has another inode. A folder modified within
  ``RACY_S`` of being listed could change again within the clock's granularity without its stat
  moving, so it is not kept (git's "racily clean" rule). A ``.py`` entry that is a symbolic link
  may change kind without its folder's stat moving (its target replaced): a folder holding one is
  never kept;
* the rules that judge its entries: those of the config governing it and its ``.gitignore`` chain.
  They are not trusted to a stat: every walk builds them from the files as they are now (as
  without this), and a kept listing is used only when they are equal to those it was judged by.

So a kept listing is only ever what listing the folder again would give. Folders no walk visited
in the last ``RUNS_REMEMBERED`` runs are forgotten.
"""

from __future__ import annotations

import os
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import fusion_lint.base.modules as modules
from fusion_lint.base.memory import RecentlyUsed

#: A folder whose stat moved less than this before it was listed is listed again next time.
RACY_S = 2.0

Signature = tuple[int, int, int, int]  # device, inode, mtime_ns, ctime_ns
#: A folder's contribution: (is a folder to descend into, full path) per entry kept, in name order.
Entries = tuple[tuple[bool, str], ...]


def folder_signature(directory: str) -> tuple[Signature, bool] | None:
    """The folder's stat now, and whether a listing taken after it may be kept (not racy)."""
    try:
        info = os.stat(directory)
    except (OSError, ValueError):
        return None
    now = time.time_ns()
    settled = now - info.st_mtime_ns >= RACY_S * 1e9 and now - info.st_ctime_ns >= RACY_S * 1e9
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns), settled


@dataclass(frozen=True)
class Listing:
    signature: Signature
    rules: Hashable  # what judged the entries (``Walker.judged_by``)
    entries: Entries


class KeptWalk:
    """Folder -> its ``Listing``, shared by the runs that use it (``walks_kept_in``)."""

    RUNS_REMEMBERED = 8

    def __init__(self) -> None:
        self.listings: dict[str, Listing] = {}
        self.used = RecentlyUsed(self.RUNS_REMEMBERED)
        self.last: WalkLease | None = None  # the last run's use of it (what the tests count)

    def forget_unused(self, used: set[str]) -> None:
        self.used.forget_unused(self.listings, used)

    def clear(self) -> None:
        """Keep nothing: what a run raised while reusing may have come from here."""
        self.listings.clear()


@dataclass
class WalkLease:
    """One run's use of a ``KeptWalk``, and what it did (the tests count it; no timing)."""

    kept: KeptWalk
    used: set[str] = field(default_factory=set)
    reused: int = 0  # folders whose kept listing served
    listed: list[str] = field(default_factory=list)  # folders listed (a miss, or not keepable)

    def entries(self, directory: str, rules: Hashable) -> Entries | None:
        """The kept entries of ``directory``, if its stat has not moved and ``rules`` judged them."""
        listing = self.kept.listings.get(directory)
        if listing is None or listing.rules != rules:
            return None
        now = folder_signature(directory)
        if now is None or now[0] != listing.signature:
            return None
        self.used.add(directory)
        self.reused += 1
        return listing.entries

    def record(self, directory: str, before: tuple[Signature, bool] | None, rules: Hashable, entries: Entries) -> None:
        """Keep what listing ``directory`` gave; ``before``: its stat taken before it was listed."""
        self.listed.append(directory)
        known = self.kept.listings.get(directory)
        if known is None or before is None or known.signature != before[0]:
            # A folder's entries may have moved: a ``__init__.py`` may have come or gone, and the
            # module names of the files below it with it (``modules`` remembers them per process).
            modules.forget_packages()
        if before is None or not before[1]:
            self.kept.listings.pop(directory, None)
            return
        self.used.add(directory)
        self.kept.listings[directory] = Listing(before[0], rules, entries)


@contextmanager
def walks_kept_in(kept: KeptWalk) -> Iterator[WalkLease]:
    """A lease of ``kept`` for the walks of this block that are given it (``Walker``'s ``lease``):
    they reuse and keep folder listings in ``kept``."""
    lease = WalkLease(kept)
    try:
        yield lease
    finally:
        kept.forget_unused(lease.used)
        kept.last = lease
