"""The cache under ``<cache-dir>`` (DESIGN §10): what a file contributes, and what a run reported.

* ``FileCache``: one ``FileResult`` per file, keyed by the file's bytes, its path and module name,
  the settings that shape facts, and a fingerprint of the linter's own source. Cross-file facts are
  never cached per file: they are recomputed every run from these, so a changed contract module
  changes the diagnostics of every file that imports it.
* ``ReportCache``: the diagnostics of a whole run, keyed by the per-file keys of every analysed file,
  the paths of every file the walk saw, the settings, the enabled rules and the reported paths. A
  file read outside that set (a contract module the project view loaded, a text a fix needed) is
  recorded with its digest and re-checked before an entry is used. An unchanged tree then re-lints
  without running a single rule.

Entries are written to a temporary file and renamed into place, so concurrent runs never read a
half-written entry; anything that fails to load is a miss. Entries are pickles read through an
unpickler that only builds the linter's own data classes: a cache directory planted in a hostile
checkout cannot run code (DESIGN §11).
"""
from __future__ import annotations

import builtins
import hashlib
import importlib
import importlib.util
import io
import os
import pickle
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional

from . import __version__
from .memory import gc_paused

if TYPE_CHECKING:
    from .config import Settings

#: Bumped when the layout of an entry changes (the code fingerprint covers everything else).
CACHE_FORMAT = "2"
#: Whole-run entries kept: one per recent (selection, paths, tree state).
RUN_ENTRIES_KEPT = 16
#: A per-file entry no run used for this long is removed when a run writes its own entry.
STALE_AFTER_S = 14 * 24 * 3600

# Where the classes an entry may contain live. Anything else in a pickle is refused.
_SAFE_MODULES = frozenset(
    {"fusion_lint.facts.model", "fusion_lint.pipeline", "fusion_lint.source", "fusion_lint.diagnostics",
     "fusion_lint.cache"}
)
_SAFE_BUILTINS = frozenset({"frozenset", "set", "tuple", "list", "dict"})


class _DataOnlyUnpickler(pickle.Unpickler):
    """Builds only the linter's data classes and plain containers; refuses every other global."""

    def find_class(self, module: str, name: str) -> object:
        if module == "builtins" and name in _SAFE_BUILTINS:
            return getattr(builtins, name)
        if module in _SAFE_MODULES:
            found = getattr(importlib.import_module(module), name, None)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"the cache may not reference {module}.{name}")


def load_entry(path: Path) -> object:
    """An entry's content, or None when it is missing, damaged or refused."""
    try:
        with open(path, "rb") as handle, gc_paused():
            return _DataOnlyUnpickler(io.BytesIO(handle.read())).load()
    except Exception:  # noqa: BLE001 (any damage to the cache is a miss, never a crash)
        return None


def store_entry(directory: Path, name: str, value: object) -> None:
    """Pickle ``value`` into ``directory/name`` (see ``store_bytes``)."""
    try:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, RecursionError):
        return  # facts nested too deeply to pickle: linted, just not cached
    store_bytes(directory, name, payload)


def store_bytes(directory: Path, name: str, payload: bytes) -> None:
    """Write atomically: a reader sees the old entry or the new one, never a partial one."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        gitignore = directory / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("# created by fusion-lint\n*\n")
        fd, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
            os.replace(temporary, directory / name)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass  # a read-only tree still lints, just without a cache


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the linter's and the runtime's source files.

    Facts extracted by other code are never read back, even when the version number did not
    change (an editable install under development, a patched copy).
    """
    digest = hashlib.sha256(f"{__version__}|{CACHE_FORMAT}".encode())
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

    def key(self, path: str, module: str, is_package: bool, data: bytes) -> str:
        digest = hashlib.sha256(self.salt)
        digest.update(f"|{path}|{module}|{is_package}|".encode())
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str) -> object:
        return load_entry(self.directory / f"{key}.pickle")

    def put(self, key: str, result: object) -> None:
        store_entry(self.directory, f"{key}.pickle", result)

    def put_pickled(self, key: str, payload: bytes) -> None:
        """An entry a worker pickled already: written as it is, not pickled twice."""
        store_bytes(self.directory, f"{key}.pickle", payload)


@dataclass
class RunEntry:
    """What one run reported, and the files outside its key that it read, with their digests."""

    diagnostics: list
    outside: dict[str, Optional[str]] = field(default_factory=dict)  # path -> digest (None: unreadable)
    texts: list[str] = field(default_factory=list)  # files whose decoded text the report carries


def digest_of_file(path: str) -> Optional[str]:
    try:
        return content_digest(Path(path).read_bytes())
    except OSError:
        return None


class ReportCache:
    """``<cache-dir>/run-<key>.pickle``: the diagnostics of a whole run."""

    def __init__(self, directory: Path):
        self.directory = directory

    @staticmethod
    def key(parts: Iterable[str]) -> str:
        digest = hashlib.sha256(f"{code_fingerprint()}|run".encode())
        for part in parts:
            digest.update(part.encode("utf-8", "surrogateescape"))
            digest.update(b"\0")
        return digest.hexdigest()

    def get(self, key: str) -> Optional[RunEntry]:
        entry = load_entry(self.directory / f"run-{key}.pickle")
        if not isinstance(entry, RunEntry):
            return None
        for path, recorded in entry.outside.items():
            if digest_of_file(path) != recorded:
                return None  # a file the run read besides the tree changed: recompute
        return entry

    def put(self, key: str, entry: RunEntry, used_file_keys: set[str]) -> None:
        store_entry(self.directory, f"run-{key}.pickle", entry)
        self.prune(used_file_keys)

    def prune(self, used_file_keys: set[str]) -> None:
        """Keep the directory bounded: the newest run entries, and file entries used lately."""
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return
        now = time.time()
        runs = []
        for entry in entries:
            if not entry.name.endswith(".pickle"):
                continue
            try:
                modified = entry.stat().st_mtime
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

    def __init__(self, cache: ReportCache, key: str, keyed_paths: set[str], used_file_keys: set[str]):
        self.cache, self.key = cache, key
        self.keyed_paths = keyed_paths  # files whose content the key covers
        self.used_file_keys = used_file_keys
        self.entry: Optional[RunEntry] = None  # what ``lookup`` found

    @classmethod
    def open(
        cls,
        settings: "Settings",
        root: Path,
        report_set: set[str],
        walk_problems: list[tuple[str, str]],
        results: list,
        enabled: Iterable[str],
        report_unused_suppressions: bool,
    ) -> Optional["RunMemo"]:
        """The memo of a run over files on disk (a run over buffers or ``--fix`` rounds, whose
        text is not on disk, is not opened: the caller does not ask)."""
        parts = [
            f"settings={settings.model_dump_json()}",
            f"root={root}",
            f"enabled={','.join(sorted(enabled))}",
            f"unused-suppressions={report_unused_suppressions}",
            *(f"report={path}" for path in sorted(report_set)),
            *(f"walk-problem={path}|{why}" for path, why in walk_problems),
        ]
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
        return cls(ReportCache(directory), ReportCache.key(parts), keyed_paths, used)

    def lookup(self) -> Optional[RunEntry]:
        self.entry = self.cache.get(self.key)
        return self.entry

    def store(self, diagnostics: list, results: Iterable, files: Iterable[str], texts: dict[str, str]) -> None:
        """``results``: the analysed files (a crash or a timeout among them: nothing is stored);
        ``files``: every file whose facts the run used; ``texts``: the texts the rules read."""
        if any(result.problem is not None and result.problem.transient for result in results):
            return
        read = set(files) | {path for path, text in texts.items() if text}
        outside = {path: digest_of_file(path) for path in sorted(read - self.keyed_paths)}
        entry = RunEntry(diagnostics, outside, sorted(path for path, text in texts.items() if text))
        self.cache.put(self.key, entry, self.used_file_keys)


def cache_directory(configured: str, root: Optional[Path]) -> Path:
    """``cache-dir`` as configured: relative to the project root."""
    directory = Path(configured)
    return directory if directory.is_absolute() else (root or Path.cwd()) / directory
