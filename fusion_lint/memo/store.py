"""The cache's own directory and its signed entries (DESIGN §12.4).

**It never touches what it did not write.** The cache owns one directory, which it creates with a
``CACHEDIR.TAG`` and a signature file (and a ``.gitignore`` of ``*``, inside it). A configured
``cache-dir`` that exists and is not such a directory is never written to: the cache goes to a
``fusion-lint`` folder inside it, and when that too exists and is not a cache, the run refuses it
(exit 2, naming it). Pruning removes only entries it names itself, in its own directory.

**It never trusts what it did not check.** Every entry carries an HMAC of its name and content
under a per-user key kept outside any repository (``$XDG_CACHE_HOME/fusion-lint/key``, else
``~/.cache/fusion-lint/key``; 0600, created on first use): a damaged entry, one written by another
user, or one planted in a checkout is a miss, never a result. An entry is read only if it is a
regular file (a FIFO there is never opened), then unpickled by an unpickler that builds only the
linter's own data classes. Entries are written to a temporary file and renamed into place, so
concurrent runs never read a half-written entry. Without a usable key (an unwritable home), the
run lints without a cache.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import importlib
import io
import os
import pickle
import re
import shutil
import stat
import tempfile
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from fusion_lint.base.diagnostics import SharedSpans, Span
from fusion_lint.base.files import read_regular
from fusion_lint.base.memory import gc_paused
from fusion_lint.config.settings import ConfigError

#: zlib's default level: a file's facts pickle shrinks ~4x, to ~0.9x the file (level 1: ~1.0x).
COMPRESSION_LEVEL = 6
#: An entry larger than this is not read (the facts of a 4 MB file pickle to well under it).
ENTRY_MAX_BYTES = 256 * 1024 * 1024

SUBFOLDER = "fusion-lint"
SIGNATURE_FILE = "FUSION_LINT_CACHE"
SIGNATURE = b"This directory is a fusion-lint cache: fusion-lint owns and may delete every file in it.\n"
CACHEDIR_TAG = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# This file is a cache directory tag created by fusion-lint.\n"
    b"# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
# The .gitignore the cache wrote before it signed its directory: such a directory holding nothing
# but entries is adopted, so an upgrade does not nest a new cache inside the old one.
_LEGACY_GITIGNORE = b"# created by fusion-lint\n*\n"
ENTRY_NAME = re.compile(r"^(?:run-|stat-|rules-|snap-)?[0-9a-f]{64}\.pickle$")
_TEMPORARY_NAME = re.compile(r"^tmp[\w-]+\.tmp$")
# 4: the pickle is zlib-compressed (the cache ~0.9x the source, not 2.6x); 5: with a preset
# dictionary of the data classes' names (``_dictionary``: each entry ~7% smaller).
_MAGIC = b"FLC5"
_MAC_SIZE = hashlib.sha256().digest_size

# Where the classes an entry may contain live. Anything else in a pickle is refused.
_SAFE_MODULES = frozenset(
    {
        "fusion_lint.facts.model",
        "fusion_lint.source.pipeline",
        "fusion_lint.source.gate",
        "fusion_lint.base.diagnostics",
        "fusion_lint.memo.cache",
    }
)
_SAFE_BUILTINS = frozenset({"frozenset", "set", "tuple", "list", "dict"})
# Functions that build one of those classes from plain values (a span shared with an equal one).
_SAFE_CONSTRUCTORS = frozenset({("fusion_lint.base.diagnostics", "_unpickled_span")})


class _DataOnlyUnpickler(SharedSpans):
    """Builds only the linter's data classes and plain containers; refuses every other global.
    Spans are shared through the loader's table, if it gives one (``SharedSpans``)."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _SAFE_BUILTINS:
            return getattr(builtins, name)
        if module in _SAFE_MODULES:
            found = getattr(importlib.import_module(module), name, None)
            if (isinstance(found, type) or (module, name) in _SAFE_CONSTRUCTORS) and found.__module__ == module:
                return super().find_class(module, name)
        raise pickle.UnpicklingError(f"the cache may not reference {module}.{name}")


# ----- the per-user key ----------------------------------------------------------------------------


def key_path() -> Path:
    """Outside any repository, per user: ``$XDG_CACHE_HOME/fusion-lint/key`` or ``~/.cache/…``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec ignores a relative value
        base = os.environ.get("LOCALAPPDATA", "") if os.name == "nt" else ""
        base = base or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / SUBFOLDER / "key"


def user_key() -> bytes | None:
    """The key entries are signed with (created on first use), or None when there is none to use."""
    return _key_at(str(key_path()))


@lru_cache(maxsize=8)
def _key_at(path: str) -> bytes | None:
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not _private(os.lstat(directory)):
            return None  # others could swap the key: no key is better than theirs
        key = _read_key(path)
        if key is not None:
            return key
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".key.")  # 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(32))
            if os.path.lexists(path):
                os.replace(temporary, path)  # a symlink, a short key, one others could read: replaced
            else:
                try:
                    os.link(temporary, path)  # whole or not at all, and never over another run's new key
                except FileExistsError:
                    pass
        finally:
            if os.path.lexists(temporary):
                os.unlink(temporary)
    except OSError:
        return None
    return _read_key(path)


def _private(info: os.stat_result) -> bool:
    """Owned by this user, and nobody else may write (a directory) or read (the key) it."""
    if not hasattr(os, "geteuid"):  # pragma: no cover (Windows: the profile directory is private)
        return True
    return info.st_uid == os.geteuid() and not info.st_mode & (0o022 if stat.S_ISDIR(info.st_mode) else 0o077)


def _read_key(path: str) -> bytes | None:
    """The key if the file is a regular file of 32 bytes that only its owner, this user, can read."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size != 32 or not _private(info):
            return None
        return read_regular(path, 32, follow_symlinks=False)
    except OSError:
        return None


def _mac(key: bytes, name: str, payload: bytes) -> bytes:
    return hmac.new(key, name.encode("utf-8") + b"\0" + payload, hashlib.sha256).digest()


# ----- the cache's own directory ---------------------------------------------------------------------


def cache_directory(configured: str, root: Path | None) -> Path:
    """Where the cache lives for ``cache-dir`` (relative to the project root): the directory itself
    when it is a fusion-lint cache or does not exist yet, else its ``fusion-lint`` folder;
    ``ConfigError`` (exit 2) when neither may be used."""
    directory = Path(configured)
    directory = directory if directory.is_absolute() else cache_home(root or Path.cwd()) / directory
    verdict = ownership(directory)
    if verdict is not False:
        return directory
    inside = directory / SUBFOLDER
    if ownership(inside) is not False:
        return inside
    raise ConfigError(
        f"cache-dir '{configured}': {directory} is not a fusion-lint cache, and neither is {inside}; "
        "fusion-lint writes only into a cache directory of its own: set cache-dir to a new directory"
    )


def cache_home(root: Path) -> Path:
    """The folder a relative ``cache-dir`` is under: the project root, lifted out of any package it
    is (``fusion-lint src/pkg`` with no config roots the project at the package, and a cache
    written there would ship in the package's wheel and show in its listing)."""
    home = root
    while (home / "__init__.py").is_file() and home.parent != home:
        home = home.parent
    return home


def remove_cache(directory: Path) -> bool | None:
    """``fusion-lint clean``: delete ``directory`` when it is a fusion-lint cache (signed, a real
    folder, not a link); anything else is left untouched. True: removed; None: nothing there;
    False: something that is not ours (kept)."""
    verdict = ownership(directory)
    if verdict is not True:
        return verdict
    shutil.rmtree(directory)  # a link inside is removed as a link, never followed
    _OWNED.clear()
    return True


def ownership(directory: Path) -> bool | None:
    """None: nothing there yet; True: a fusion-lint cache; False: anything else."""
    try:
        info = os.lstat(directory)
    except OSError:  # missing, or unreachable (a parent is a file): creating it will fail harmlessly
        return None
    if not stat.S_ISDIR(info.st_mode):
        return False
    key = (str(directory), info.st_dev, info.st_ino)
    if key in _OWNED:
        return True  # checked once per process: a run writes hundreds of entries
    owned = _signed(directory) or _adopt_legacy(directory)
    if owned:
        _OWNED.add(key)
    return owned


_OWNED: set[tuple[str, int, int]] = set()


def _signed(directory: Path) -> bool:
    try:
        return read_regular(
            str(directory / SIGNATURE_FILE), len(SIGNATURE), follow_symlinks=False
        ) == SIGNATURE and read_regular(str(directory / "CACHEDIR.TAG"), 4096, follow_symlinks=False).startswith(
            CACHEDIR_TAG[:44]
        )
    except OSError:
        return False


def _adopt_legacy(directory: Path) -> bool:
    """A cache written before directories were signed: its ``.gitignore`` and nothing but entries."""
    try:
        if read_regular(str(directory / ".gitignore"), 64, follow_symlinks=False) != _LEGACY_GITIGNORE:
            return False
        with os.scandir(directory) as entries:
            for entry in entries:
                regular = entry.is_file(follow_symlinks=False)
                if entry.name != ".gitignore" and not (
                    regular and (ENTRY_NAME.match(entry.name) or _TEMPORARY_NAME.match(entry.name))
                ):
                    return False
    except OSError:
        return False
    return _sign(directory)


def _sign(directory: Path) -> bool:
    for name, content in (
        (SIGNATURE_FILE, SIGNATURE),
        ("CACHEDIR.TAG", CACHEDIR_TAG),
        (".gitignore", b"# created by fusion-lint\n*\n"),
    ):
        if not _write_file(directory, name, content):
            return False
    return True


def _claim(directory: Path) -> bool:
    """Make sure ``directory`` is ours before writing into it: create it signed if it does not
    exist (its missing parents are created too, and hold nothing else), never write into a
    directory that is something else."""
    verdict = ownership(directory)
    if verdict is not None:
        return verdict
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=directory.parent, prefix=".fusion-lint-cache-", suffix=".tmp"))
    except OSError:
        return False
    # Signed before it appears under its name: a concurrent run never sees it unsigned (and
    # would take it for someone else's directory).
    try:
        if _sign(staging):
            os.rename(staging, directory)
            return True
    except OSError:
        pass  # another run created it first
    shutil.rmtree(staging, ignore_errors=True)  # ours: made just above
    return ownership(directory) is True


def _write_file(directory: Path, name: str, payload: bytes) -> bool:
    """Atomically: a reader sees the old file or the new one, never a partial one."""
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
            os.replace(temporary, directory / name)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return False  # a read-only tree still lints, just without a cache
    return True


# ----- entries ---------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _dictionary() -> bytes:
    """zlib's preset dictionary: the module, class and field names of the data classes entries
    hold, spelled as a pickle spells them. An entry is one file's facts, too short for zlib to
    learn those names from itself; given them, it stores each as a back-reference."""
    import dataclasses
    import inspect

    def spelled(name: str) -> bytes:
        raw = name.encode()
        return b"\x8c" + bytes([len(raw)]) + raw + b"\x94"  # SHORT_BINUNICODE, MEMOIZE

    parts = []
    for module_name in sorted(_SAFE_MODULES - {"fusion_lint.memo.cache"}):
        module = importlib.import_module(module_name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if dataclasses.is_dataclass(cls) and cls.__module__ == module_name:
                parts.append(spelled(module_name) + spelled(name) + b"\x93\x94")  # STACK_GLOBAL, MEMOIZE
                parts.extend(spelled(f.name) for f in dataclasses.fields(cls))
    parts.extend(spelled(module) + spelled(name) + b"\x93\x94" for module, name in sorted(_SAFE_CONSTRUCTORS))
    return b"".join(parts)


def load_entry(path: Path, key: bytes | None, spans: dict[tuple[int, ...], Span] | None = None) -> object:
    """An entry's content, or None when it is missing, damaged, unsigned or refused."""
    if key is None:
        return None
    try:
        data = read_regular(str(path), ENTRY_MAX_BYTES, follow_symlinks=False)  # a FIFO is never opened
    except OSError:
        return None
    mac, packed = data[len(_MAGIC) : len(_MAGIC) + _MAC_SIZE], data[len(_MAGIC) + _MAC_SIZE :]
    if not data.startswith(_MAGIC) or not hmac.compare_digest(mac, _mac(key, path.name, packed)):
        return None  # damaged, or not written by this user's fusion-lint
    try:
        inflate = zlib.decompressobj(zdict=_dictionary())
        payload = inflate.decompress(packed, ENTRY_MAX_BYTES)  # bounded, even for a signed entry
        if inflate.unconsumed_tail or not inflate.eof:
            return None
        with gc_paused():
            return _DataOnlyUnpickler(io.BytesIO(payload), spans).load()
    except Exception:  # noqa: BLE001 (any damage to the cache is a miss, never a crash)
        return None


def store_entry(directory: Path, name: str, value: object, key: bytes | None) -> None:
    """Pickle ``value`` into ``directory/name`` (see ``store_bytes``)."""
    if key is None:
        return
    try:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, RecursionError):
        return  # facts nested too deeply to pickle: linted, just not cached
    store_bytes(directory, name, payload, key)


def store_bytes(directory: Path, name: str, payload: bytes, key: bytes | None) -> None:
    """Sign and write atomically, only into a directory of the cache's own."""
    if key is not None and _claim(directory):
        deflate = zlib.compressobj(COMPRESSION_LEVEL, zdict=_dictionary())
        packed = deflate.compress(payload) + deflate.flush()
        _write_file(directory, name, _MAGIC + _mac(key, name, packed) + packed)
