"""The cache under ``<cache-dir>`` (DESIGN §10, §12.4): what a file contributes, and what a run reported.

* ``FileCache``: one ``FileResult`` per file, keyed by the file's bytes, its path and module name,
  the settings that shape facts, and a fingerprint of the linter's own source, of the Python that
  runs it (a file Python 3.11 cannot parse may parse on 3.12). Cross-file facts are
  never cached per file: they are recomputed every run from these, so a changed contract module
  changes the diagnostics of every file that imports it.
* ``ReportCache``: the diagnostics of a whole run, keyed by the per-file keys of every analysed file,
  the paths of every file the walk saw, the settings, the enabled rules and the reported paths. A
  file read outside that set (a contract module the project view loaded, a text a fix needed) is
  recorded with its digest and re-checked before an entry is used. An unchanged tree then re-lints
  without running a single rule.

Where entries live and how they are signed and checked: ``cache_store``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusion_lint import __version__
from fusion_lint.base.diagnostics import Span
from fusion_lint.base.files import read_regular
from fusion_lint.base.memory import gc_paused
from fusion_lint.memo.store import (
    ENTRY_NAME,
    cache_directory,
    load_entry,
    ownership,
    store_bytes,
    store_entry,
    user_key,
)

if TYPE_CHECKING:
    from fusion_lint.config.settings import Settings

__all__ = ["FileCache", "ReportCache", "RunEntry", "RunMemo", "cache_directory", "gc_paused", "load_entry"]

#: Bumped when the layout of an entry changes (the code fingerprint covers everything else).
CACHE_FORMAT = "3"
#: Whole-run entries kept: one per recent (selection, paths, tree state).
RUN_ENTRIES_KEPT = 16
#: A per-file entry no run used for this long is removed when a run writes its own entry.
STALE_AFTER_S = 14 * 24 * 3600
#: Files read outside the run's key are digested up to this size (larger: recomputed every run).
OUTSIDE_MAX_BYTES = 64 * 1024 * 1024


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the linter's and the runtime's source files and the Python running them.

    Facts extracted by other code are never read back, even when the version number did not
    change (an editable install under development, a patched copy), nor facts (or FL000s) of
    another Python: what parses, and the tree the facts are read from, are CPython's.
    """
    digest = hashlib.sha256(f"{__version__}|{CACHE_FORMAT}|{sys.implementation.name}|{sys.version}".encode())
    for package in ("fusion_lint", "mcp_fusion"):
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            base = Path(location)
            for source in sorted(base.rglob("*.py")):
                digest.update(f"|{package}/{source.relative_to(base).as_posix()}|".encode())
                try:
                    digest.update(source.read_bytes())
                except OSError:
                    digest.update(b"?")
    return digest.hexdigest()


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileCache:
    """``<cache-dir>/<key>.pickle``: one ``FileResult`` per file content."""

    def __init__(self, directory: Path, runtime_modules: Iterable[str]):
        self.directory = directory
        self.salt = f"{code_fingerprint()}|{','.join(runtime_modules)}".encode()
        self.signing_key = user_key()

    def key(self, path: str, module: str, is_package: bool, data: bytes) -> str:
        digest = hashlib.sha256(self.salt)
        digest.update(f"|{path}|{module}|{is_package}|".encode())
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str, spans: dict[tuple[int, ...], Span] | None = None) -> object:
        """The cached result of ``key`` (``spans``: the loader's table of shared spans, ``SharedSpans``)."""
        return load_entry(self.directory / f"{key}.pickle", self.signing_key, spans)

    def put(self, key: str, result: object) -> None:
        store_entry(self.directory, f"{key}.pickle", result, self.signing_key)

    def put_pickled(self, key: str, payload: bytes) -> None:
        """An entry a worker pickled already: written as it is, not pickled twice."""
        store_bytes(self.directory, f"{key}.pickle", payload, self.signing_key)


@dataclass
class RunEntry:
    """What one run reported, and the files outside its key that it read, with their digests."""

    diagnostics: list[Any]
    outside: dict[str, str | None] = field(default_factory=dict)  # path -> digest (None: unreadable)
    texts: list[str] = field(default_factory=list)  # files whose decoded text the report carries
    definitions: dict[str, int] = field(default_factory=dict)  # the summary's counts of definitions


def digest_of_file(path: str) -> str | None:
    try:
        return content_digest(read_regular(path, OUTSIDE_MAX_BYTES))
    except OSError:
        return None


class ReportCache:
    """``<cache-dir>/run-<key>.pickle``: the diagnostics of a whole run."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.signing_key = user_key()

    @staticmethod
    def key(parts: Iterable[str]) -> str:
        digest = hashlib.sha256(f"{code_fingerprint()}|run".encode())
        for part in parts:
            digest.update(part.encode("utf-8", "surrogateescape"))
            digest.update(b"\0")
        return digest.hexdigest()

    def get(self, key: str) -> RunEntry | None:
        entry = load_entry(self.directory / f"run-{key}.pickle", self.signing_key)
        if not isinstance(entry, RunEntry):
            return None
        for path, recorded in entry.outside.items():
            if digest_of_file(path) != recorded:
                return None  # a file the run read besides the tree changed: recompute
        return entry

    def put(self, key: str, entry: RunEntry, used_file_keys: set[str]) -> None:
        store_entry(self.directory, f"run-{key}.pickle", entry, self.signing_key)
        self.prune(used_file_keys)

    def prune(self, used_file_keys: set[str]) -> None:
        """Keep the directory bounded: the newest run entries, and file entries used lately. Only
        in a directory of the cache's own, and only files named as the cache names its entries."""
        if ownership(self.directory) is not True:
            return
        try:
            with os.scandir(self.directory) as listing:
                entries = [entry for entry in listing if ENTRY_NAME.match(entry.name)]
        except OSError:
            return
        now = time.time()
        runs = []
        for entry in entries:
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                modified = entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            if entry.name.startswith("run-"):
                runs.append((modified, entry.path))
            elif entry.name[: -len(".pickle")] not in used_file_keys and now - modified > STALE_AFTER_S:
                _remove(entry.path)
        for _, path in sorted(runs, reverse=True)[RUN_ENTRIES_KEPT:]:
            _remove(path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass  # another run removed it first


class RunMemo:
    """The whole-run cache as the engine uses it: ``open`` once the files' keys are known (None
    when the run cannot be cached), ``lookup`` before any cached fact is even loaded, ``store``
    after the rules ran."""

    def __init__(self, cache: ReportCache, key: str, keyed_paths: set[str], used_file_keys: set[str], frame: str = ""):
        self.cache, self.key = cache, key
        # The key of everything but the files' contents and stats: what the run's snapshot must
        # match (``snapshot_run``), the files themselves compared one by one.
        self.frame = frame
        self.keyed_paths = keyed_paths  # files whose content the key covers
        self.used_file_keys = used_file_keys
        self.entry: RunEntry | None = None  # what ``lookup`` found

    @classmethod
    def open(
        cls,
        settings: Settings,
        root: Path,
        report_set: set[str],
        walk_problems: list[tuple[str, str]],
        results: list[Any],
        enabled: Iterable[str],
        report_unused_suppressions: bool,
        configs: Iterable[str] = (),
    ) -> RunMemo | None:
        """The memo of a run over files on disk (a run over buffers or ``--fix`` rounds, whose
        text is not on disk, is not opened: the caller does not ask). ``configs``: what else the
        report depends on (each reported file's config, the command line's settings)."""
        parts = [
            f"settings={settings.model_dump_json()}",
            *configs,
            f"root={root}",
            f"enabled={','.join(sorted(enabled))}",
            f"unused-suppressions={report_unused_suppressions}",
            *(f"report={path}" for path in sorted(report_set)),
            *(f"walk-problem={path}|{why}" for path, why in walk_problems),
        ]
        frame = ReportCache.key([*parts, "frame"])
        keyed_paths: set[str] = set()
        used: set[str] = set()
        for result in results:
            if result.key is not None:
                parts.append(f"file={result.path}|{result.key}")
                keyed_paths.add(result.path)
                used.add(result.key)
            elif result.skipped:
                parts.append(f"skipped={result.path}")  # its existence matters to module lookups
            elif result.problem is not None and not result.problem.transient:
                problem = result.problem
                parts.append(f"problem={result.path}|{problem.code}|{problem.line}|{problem.col}|{problem.message}")
            else:
                return None  # a crash or a timeout: try again next time
        directory = cache_directory(settings.cache_dir, root)
        return cls(ReportCache(directory), ReportCache.key(parts), keyed_paths, used, frame)

    def lookup(self) -> RunEntry | None:
        self.entry = self.cache.get(self.key)
        return self.entry

    def store(
        self,
        diagnostics: list[Any],
        results: Iterable[Any],
        files: Iterable[str],
        texts: dict[str, str],
        definitions: dict[str, int] | None = None,
    ) -> None:
        """``results``: the analysed files (a crash or a timeout among them: nothing is stored);
        ``files``: every file whose facts the run used; ``texts``: the texts the rules read."""
        results = list(results)
        if any(result.problem is not None and result.problem.transient for result in results):
            return
        # Every file the run analysed or reported a problem of, beyond those the key covers: one
        # the pre-scan skipped and the second look admitted is "skipped" in the key, so its
        # content is not in it — a syntax error there, then repaired, must not replay the error.
        analysed = {result.path for result in results if not result.skipped}
        read = set(files) | analysed | {path for path, text in texts.items() if text}
        outside = {path: digest_of_file(path) for path in sorted(read - self.keyed_paths)}
        entry = RunEntry(
            diagnostics, outside, sorted(path for path, text in texts.items() if text), dict(definitions or {})
        )
        self.cache.put(self.key, entry, self.used_file_keys)
