"""Running the per-file pipeline over many files: cache first, then processes when it pays.

A libcst crash (the native parser can segfault on inputs that pass CPython's gate) or a hang must
cost one file, not the run: worker death is detected, the files it held are re-run one per
process, and the one that kills its process becomes FL000.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from concurrent.futures import ProcessPoolExecutor, TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Optional, Sequence

from . import __version__
from .config import Settings
from .pipeline import FileResult, _module_of, analyze_file, mentions_runtime
from .source import Unreadable

#: Below this many files to parse, worker start-up costs more than it saves.
PARALLEL_THRESHOLD = 12
#: A single file that takes longer than this to parse is treated as a parser hang.
FILE_TIMEOUT_S = 60.0


class Cache:
    """``<cache-dir>/<key>.pickle``, keyed by content, module name, settings and version.

    Writes go to a temporary file and are renamed into place, so concurrent runs never read a
    half-written entry; an entry that fails to load is a miss.
    """

    def __init__(self, directory: Path, settings: Settings):
        self.directory = directory
        self.salt = f"{__version__}|{','.join(settings.runtime_modules)}".encode()

    def key(self, path: str, data: bytes) -> str:
        module, is_package, _ = _module_of(path)
        digest = hashlib.sha256(self.salt)
        digest.update(f"|{path}|{module}|{is_package}|".encode())
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str) -> Optional[FileResult]:
        try:
            with open(self.directory / f"{key}.pickle", "rb") as handle:
                result = pickle.load(handle)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            return None
        return result if isinstance(result, FileResult) else None

    def put(self, key: str, result: FileResult) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# created by fusion-lint\n*\n")
            fd, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.directory / f"{key}.pickle")
        except OSError:
            pass  # a read-only tree still lints, just without a cache


def _analyze_batch(batch: list[tuple[str, bytes]], runtime_modules: Sequence[str]) -> list[FileResult]:
    return [analyze_file(path, runtime_modules, data=data, prescan=False) for path, data in batch]


def _analyze_isolated(path: str, data: bytes, runtime_modules: Sequence[str]) -> FileResult:
    """One file in a process of its own: what kills or hangs it is this file's FL000."""
    with ProcessPoolExecutor(max_workers=1) as pool:
        future = pool.submit(_analyze_batch, [(path, data)], tuple(runtime_modules))
        try:
            return future.result(timeout=FILE_TIMEOUT_S)[0]
        except BrokenProcessPool:
            return FileResult(path, problem=Unreadable("FL000", "the libcst parser crashed on this file"))
        except FutureTimeout:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            return FileResult(path, problem=Unreadable("FL000", f"parsing took over {FILE_TIMEOUT_S:.0f} s"))


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def run_files(
    paths: Sequence[str],
    settings: Settings,
    *,
    jobs: Optional[int] = None,
    use_cache: bool = True,
    cache_root: Optional[Path] = None,
    prescan: bool = True,
    overrides: Optional[dict[str, bytes]] = None,
) -> list[FileResult]:
    """Results in the order of ``paths``, whatever the number of processes."""
    runtime_modules = tuple(settings.runtime_modules)
    cache = None
    if use_cache:
        directory = Path(settings.cache_dir)
        if not directory.is_absolute():
            directory = (cache_root or Path.cwd()) / directory
        cache = Cache(directory, settings)
    results: dict[str, FileResult] = {}
    pending: list[tuple[str, bytes, Optional[str]]] = []
    for path in paths:
        data = (overrides or {}).get(path)
        if data is None:
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                results[path] = FileResult(path, problem=Unreadable("FL001", f"cannot read file: {exc.strerror or exc}"))
                continue
        if prescan and not mentions_runtime(data, runtime_modules):
            results[path] = FileResult(path, skipped=True)
            continue
        key = cache.key(path, data) if cache is not None else None
        cached = cache.get(key) if cache is not None and key is not None else None
        if cached is not None:
            results[path] = cached
        else:
            pending.append((path, data, key))

    workers = min(jobs or default_jobs(), len(pending))
    if workers > 1 and len(pending) >= PARALLEL_THRESHOLD:
        computed = _run_parallel([(p, d) for p, d, _ in pending], runtime_modules, workers)
    else:
        computed = _analyze_batch([(p, d) for p, d, _ in pending], runtime_modules)
    for (path, _, key), result in zip(pending, computed):
        results[path] = result
        if cache is not None and key is not None:
            cache.put(key, result)
    return [results[path] for path in paths]


def _run_parallel(items: list[tuple[str, bytes]], runtime_modules: tuple[str, ...], workers: int) -> list[FileResult]:
    # Interleaved batches: neighbouring files are often alike in size, so this balances the load.
    batches = [items[i::workers * 4] for i in range(workers * 4)]
    batches = [b for b in batches if b]
    by_path: dict[str, FileResult] = {}
    survivors: list[tuple[str, bytes]] = []
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [(batch, pool.submit(_analyze_batch, batch, runtime_modules)) for batch in batches]
            for batch, future in futures:
                try:
                    for result in future.result():
                        by_path[result.path] = result
                except BrokenProcessPool:
                    survivors.extend(item for item in batch if item[0] not in by_path)
    except BrokenProcessPool:
        pass
    survivors.extend(item for item in items if item[0] not in by_path and item not in survivors)
    for path, data in survivors:
        by_path[path] = _analyze_isolated(path, data, runtime_modules)
    return [by_path[path] for path, _ in items]
