"""Touching one file safely (DESIGN §11, §12.4): read only regular files, never more than a bound,
and write a fixed file back keeping its owner, group and mode.

* **Reading.** A FIFO would block the run forever, a device (``/dev/zero``, or a ``.py`` symlink to
  it) would be read without end: the file is ``stat``-ed first and only a regular file is opened,
  non-blocking (a file swapped for a FIFO after the ``stat`` cannot block the ``open``), then
  checked again on the open descriptor. A regular file is read up to ``limit + 1`` bytes whatever
  its size claims (``/proc`` files report 0), so nothing more than the cap is ever held.
* **Writing** (``--fix``). A temporary file next to the target, renamed over it, is atomic but is a
  *new* file: owned by whoever runs the fix, with that user's group. It is used only when the
  original owner and group can be given to it (root, or the runner owns the file and is in its
  group) and the file has no other hard links; otherwise the file is rewritten in place, on a
  descriptor checked to be the very file that was read. A file without a write permission bit
  (``chmod a-w``) is left alone even by root; otherwise the operating system decides.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_CHUNK = 1 << 20
_ANY_WRITE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory: never opened for reading."""

    def __init__(self, kind: str):
        super().__init__(errno.EINVAL, f"not a regular file ({kind})")
        self.kind = kind


class FileTooLarge(OSError):
    """The file holds more than the bound; ``size`` is what was seen (at least ``limit + 1``)."""

    def __init__(self, size: int, limit: int):
        super().__init__(errno.EFBIG, f"larger than {limit} bytes")
        self.size, self.limit = size, limit


def kind_of(mode: int) -> str | None:
    """What a non-regular file is ("a FIFO", …); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a file")


def open_regular(path: str, *, follow_symlinks: bool = True) -> int:
    """A read-only descriptor of ``path``, which must be a regular file (``NotRegularFile``)."""
    info = os.stat(path) if follow_symlinks else os.lstat(path)
    kind = kind_of(info.st_mode)
    if kind is not None:
        raise NotRegularFile(kind)
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow_symlinks else _NOFOLLOW)
    fd = os.open(path, flags)
    try:
        kind = kind_of(os.fstat(fd).st_mode)  # swapped since the stat: still never read
        if kind is not None:
            raise NotRegularFile(kind)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_descriptor(fd: int, limit: int | None) -> bytes:
    """Everything up to ``limit`` bytes from ``fd``; ``FileTooLarge`` past it."""
    size = os.fstat(fd).st_size
    if limit is not None and size > limit:
        raise FileTooLarge(size, limit)
    chunks: list[bytes] = []
    total = 0
    while True:
        want = _READ_CHUNK if limit is None else min(_READ_CHUNK, limit + 1 - total)
        chunk = os.read(fd, want)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if limit is not None and total > limit:
            raise FileTooLarge(total, limit)  # the size lied (a /proc file, a growing file)


def read_regular(path: str, limit: int | None = None, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them (see the module docstring)."""
    fd = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        return read_descriptor(fd, limit)
    finally:
        os.close(fd)


# ----- writing a fixed file back ---------------------------------------------------------------------


@dataclass(slots=True)
class Snapshot:
    """The file as it was read: what must still be on disk when the fixed text is written."""

    data: bytes
    size: int
    mtime_ns: int
    device: int = 0
    inode: int = 0

    def matches(self, data: bytes, info: os.stat_result) -> bool:
        return (data, info.st_size, info.st_mtime_ns, info.st_dev, info.st_ino) == (
            self.data,
            self.size,
            self.mtime_ns,
            self.device,
            self.inode,
        )


def read_snapshot(path: str, limit: int | None = None) -> tuple[bytes, Snapshot]:
    data, info = _read_with_info(path, limit)
    return data, Snapshot(data, info.st_size, info.st_mtime_ns, info.st_dev, info.st_ino)


def _read_with_info(path: str, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    fd = open_regular(path)
    try:
        return read_descriptor(fd, limit), os.fstat(fd)
    finally:
        os.close(fd)


def write_back(path: str, data: bytes, snapshot: Snapshot) -> str | None:
    """Replace the file's content with ``data`` unless it changed since ``snapshot``; the problem
    if it was not written. A symlink is written through (the link stays a link)."""
    target = os.path.realpath(path)
    try:
        current, info = _read_with_info(target)
    except OSError as exc:
        return f"cannot read it again before writing: {exc.strerror or exc}"
    if not snapshot.matches(current, info):
        return "changed on disk since it was read"
    if not stat.S_IMODE(info.st_mode) & _ANY_WRITE or not os.access(target, os.W_OK):
        return "no permission to write it (not fixed)"
    if info.st_nlink == 1 and _can_give(info):
        directory, name = os.path.split(target)
        try:
            fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".fusion-lint.tmp")
        except OSError:
            pass  # a directory the user may not write into: the file itself may still be writable
        else:
            return _replace(fd, temporary, target, data, info)
    return _rewrite_in_place(target, data, snapshot)


def _can_give(info: os.stat_result) -> bool:
    """Whether a new file of ours can take the original's owner and group."""
    if not hasattr(os, "fchown"):  # pragma: no cover (Windows: no owners to keep)
        return True
    if os.geteuid() == 0:
        return True
    return info.st_uid == os.geteuid() and (info.st_gid == os.getegid() or info.st_gid in os.getgroups())


def _replace(fd: int, temporary: str, target: str, data: bytes, info: os.stat_result) -> str | None:
    """Atomic: the temporary file gets the original's owner, group and mode, then replaces it."""
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if hasattr(os, "fchown"):
                os.fchown(handle.fileno(), info.st_uid, info.st_gid)
            os.fchmod(handle.fileno(), stat.S_IMODE(info.st_mode))  # after chown, which clears set-id bits
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return f"cannot write it: {exc.strerror or exc}"
    return None


def _rewrite_in_place(target: str, data: bytes, snapshot: Snapshot) -> str | None:
    """Same inode, so owner, group, mode and hard links stay. Written on a descriptor checked to be
    the file that was read, after reserving the space it needs; a failed write puts the original
    bytes back."""
    try:
        fd = os.open(target, os.O_RDWR | _NONBLOCK | _CLOEXEC | _NOFOLLOW)
    except OSError as exc:
        return f"cannot write it: {exc.strerror or exc}"
    try:
        info = os.fstat(fd)
        try:
            same = kind_of(info.st_mode) is None and snapshot.matches(read_descriptor(fd, snapshot.size), info)
        except FileTooLarge:
            same = False
        if not same:
            return "changed on disk since it was read"
        if len(data) > info.st_size and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fd, 0, len(data))  # a full disk fails here, before any byte changed
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                    raise
        try:
            _overwrite(fd, data)
        except OSError:
            _overwrite(fd, snapshot.data)
            raise
    except OSError as exc:
        return f"cannot write it: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return None


def _overwrite(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.ftruncate(fd, len(data))
    os.fsync(fd)
