"""Change detection before hashing (issue 15, DESIGN §10): a file whose ``stat`` has not moved since the
last run keeps the cache key (or the pre-scan's "skipped") it had then, without being read.

The record of a file is its device, inode, size, ``mtime_ns`` and ``ctime_ns`` with the module name
it had: an edit moves the size or mtime, a ``touch -d`` or an ``rsync -t`` that puts the mtime back
still moves the ctime (which no user can set), a replaced file has another inode, and a new
``__init__.py`` above it changes its module name. A file modified within ``RACY_S`` of being recorded
could change again within the clock's granularity without its stat moving, so it is not recorded
(git's "racily clean" rule): it is read and hashed next time too.

The index is one entry of the cache, signed and checked like every other (``cache_store``): a
damaged or planted index is a miss, and every file is read and hashed as without it. It only ever
answers with a key the run would have computed; whether that key's entry exists and is intact is
still the cache's check.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from pathlib import Path
from typing import TypeGuard

from fusion_lint.memo.store import load_entry, store_entry, user_key

#: A file modified less than this before it was recorded is read again next time.
RACY_S = 2.0
SKIPPED = ""  # the verdict of a file the pre-scan skipped (a key is 64 hex digits)
BUILDS_SERVER = "server"  # skipped, but it builds a server: the second look's hub (``pipeline.builds_a_server``)
_VERDICT = re.compile(r"(?:[0-9a-f]{64}|server)?")

Signature = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns
Record = tuple[Signature, str, bool, str]  # stat, module name, is a package, verdict


def signature(path: str) -> Signature | None:
    """The stat of a regular file (following a symlink, as reading it does), or None."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None  # a FIFO, a device: read (and reported) as before, never remembered
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


#: (cache directory, index name) -> the records an index saved last (``StatIndex``'s ``remembered``).
Remembered = dict[tuple[str, str], dict[str, Record]]


class StatIndex:
    """``<cache-dir>/stat-<key>.pickle``: path -> ``Record``, one index per cache salt (settings and
    linter code), so a verdict is reused only by runs that would have reached the same one."""

    def __init__(self, directory: Path, salt: bytes, remembered: Remembered | None = None):
        """``remembered`` (a long-lived process: the language server's kept facts): the records an
        index saved last there are used instead of loading and checking the file again; they are as
        true (each the key of a content whose stat has not moved) whoever wrote the file since."""
        self.directory = directory
        self.name = f"stat-{hashlib.sha256(salt + b'|stat-index').hexdigest()}.pickle"
        self.signing_key = user_key()
        self.remembered = remembered
        kept = remembered.get((str(directory), self.name)) if remembered is not None else None
        if kept is not None:
            self.records: dict[str, Record] = dict(kept)  # (a run's own copy: runs may overlap)
        else:
            loaded = load_entry(directory / self.name, self.signing_key)
            self.records = loaded if _well_formed(loaded) else {}
        self.changed = False
        self.started = time.time_ns()

    def verdict(self, path: str, module: str, is_package: bool, now: Signature | None) -> str | None:
        """The key (or ``SKIPPED``) recorded for this path, if its stat and module have not moved."""
        record = self.records.get(path)
        if now is None or record is None or record[0] != now or record[1] != module or record[2] != is_package:
            return None
        return record[3]

    def record(self, path: str, module: str, is_package: bool, now: Signature | None, verdict: str) -> None:
        if now is None:
            return
        if self.started - now[3] < RACY_S * 1e9 or self.started - now[4] < RACY_S * 1e9:
            if self.records.pop(path, None) is not None:  # racily clean: its next edit may not move the stat
                self.changed = True
            return
        record = (now, module, is_package, verdict)
        if self.records.get(path) != record:
            self.records[path] = record
            self.changed = True

    def save(self, keep: set[str]) -> None:
        """Write the index if it changed, holding only the paths in ``keep`` (this run's walk)."""
        gone = [path for path in self.records if path not in keep]
        for path in gone:
            del self.records[path]
        if self.changed or gone:
            store_entry(self.directory, self.name, self.records, self.signing_key)
            self.changed = False
        if self.remembered is not None:
            self.remembered[(str(self.directory), self.name)] = self.records


def _well_formed(loaded: object) -> TypeGuard[dict[str, Record]]:
    """A signed entry is ours, but its shape is still checked before any verdict is used from it."""
    if not isinstance(loaded, dict):
        return False
    for path, record in loaded.items():
        if not (isinstance(path, str) and isinstance(record, tuple) and len(record) == 4):
            return False
        signature_, module, is_package, verdict = record
        if not (isinstance(signature_, tuple) and len(signature_) == 5 and all(type(n) is int for n in signature_)):
            return False
        if not (isinstance(module, str) and isinstance(is_package, bool) and _is_verdict(verdict)):
            return False
    return True


def _is_verdict(verdict: str | object) -> bool:
    return isinstance(verdict, str) and _VERDICT.fullmatch(verdict) is not None
