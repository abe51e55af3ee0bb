"""Files that are not what they seem (DESIGN §12.4, issue 17): FIFOs, devices and sockets are FL001
"not a regular file" and never opened for reading; a file over the size cap is FL001 without more
than the cap being read; a directory the walk cannot read is FL001 at that directory; a file name
that is not UTF-8 never breaks a report.

A regression here blocks the run instead of failing it, so every lint runs under ``deadline``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

import fusion_lint.base.files as files
import fusion_lint.cli.main as cli
import fusion_lint.discovery.walk as discovery
import fusion_lint.source.pipeline as pipeline
from fusion_lint.check.engine import Options, Report, lint

TOOL = b"""from mcp_fusion import tool


@tool("get_item")
def get_item(item_id: str) -> dict:
    raise ValueError("no such item")
"""


class Blocked(BaseException):
    """Not an ``OSError`` (which ``TimeoutError`` is): the code under test must not swallow it."""


@contextmanager
def deadline(seconds: int = 30) -> Iterator[None]:
    """A blocked ``open`` or ``read`` (a FIFO without a writer) raises instead of hanging the suite."""

    def expired(signum: int, frame: object) -> None:
        raise Blocked(f"still running after {seconds} s: something blocked on a special file")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def project(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (root / "app.py").write_bytes(TOOL)


def run(*paths: Path) -> Report:
    with deadline():
        return lint(Options(paths=[str(p) for p in paths], use_cache=False, jobs=1))


def by_name(report: Report) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for d in report.diagnostics:
        found.setdefault(os.path.basename(d.path), []).append((d.code, d.message))
    return found


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


@needs_fifo
def test_a_fifo_in_the_tree_is_fl001_and_the_run_goes_on(tmp_path: Path) -> None:
    project(tmp_path)
    os.mkfifo(tmp_path / "pipe.py")
    found = by_name(run(tmp_path))
    assert found["pipe.py"] == [("FL001", "not a regular file (a FIFO): fusion-lint reads regular files only")]
    assert [code for code, _ in found["app.py"]] == ["FL300"]


@needs_fifo
def test_a_fifo_given_by_name_is_fl001(tmp_path: Path) -> None:
    project(tmp_path)
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "named_pipe")  # not even a .py name: given by name, it is checked
    found = by_name(run(tmp_path / "pipe.py", tmp_path / "named_pipe"))
    assert [code for code, _ in found["pipe.py"]] == ["FL001"]
    assert "a FIFO" in found["named_pipe"][0][1]


@needs_fifo
def test_a_fifo_is_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path)
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: object, *args: object, **kwargs: object) -> int:
        opened.append(os.fsdecode(path))  # type: ignore[arg-type]
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files.os, "open", recording_open)
    run(tmp_path)
    assert str(fifo) not in opened
    assert str(tmp_path / "app.py") in opened


@needs_fifo
def test_a_fifo_named_gitignore_or_pyproject_does_not_block(tmp_path: Path) -> None:
    project(tmp_path)
    os.mkfifo(tmp_path / ".gitignore")
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / "pyproject.toml")  # not a config file: the walk up goes past it
    (tmp_path / "sub" / "tool.py").write_bytes(TOOL)
    found = by_name(run(tmp_path))
    assert [code for code, _ in found["tool.py"]] == ["FL300"]
    with deadline():
        forced = CliRunner().invoke(cli.main, [str(tmp_path), "--no-cache", "--config", str(tmp_path / ".gitignore")])
    assert forced.exit_code == 2
    assert "not a regular file (a FIFO)" in forced.output


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this platform")
def test_a_socket_in_the_tree_is_fl001(tmp_path: Path) -> None:
    project(tmp_path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(tmp_path / "sock.py"))
        found = by_name(run(tmp_path))
    finally:
        server.close()
    assert found["sock.py"] == [("FL001", "not a regular file (a socket): fusion-lint reads regular files only")]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_dev_zero_by_name_or_through_a_py_symlink_is_fl001_and_never_read(tmp_path: Path) -> None:
    project(tmp_path)
    os.symlink("/dev/zero", tmp_path / "zeros.py")
    found = by_name(run(tmp_path))
    assert found["zeros.py"] == [
        ("FL001", "not a regular file (a character device): fusion-lint reads regular files only")
    ]
    named = by_name(run(Path("/dev/zero")))
    assert [code for code, _ in named["zero"]] == ["FL001"]


def bytes_read() -> int:
    """What this process has read through ``read`` system calls so far, whatever the code that
    read it (``rchar`` of ``/proc/self/io``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


needs_proc_io = pytest.mark.skipif(
    not os.path.exists("/proc/self/io"), reason="counts reads with /proc/self/io (Linux)"
)


@needs_proc_io
def test_a_file_over_the_cap_is_fl001_without_being_read(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)  # imports warmed up
    before = bytes_read()
    run(tmp_path)
    usual = bytes_read() - before  # the other files, the configuration, the workers' answers
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as handle:
        handle.write(b"import mcp_fusion\n")
        handle.truncate(64 * 1024**2)  # sparse; a regression reads 64 MB, not the 5 GB of the trials
    before = bytes_read()
    found = by_name(run(tmp_path))
    read = bytes_read() - before
    assert found["huge.py"] == [("FL001", "file too large to lint (67.1 MB; the limit is 4 MB)")]
    assert read - usual < 100_000, (read, usual)


class _LyingSize:
    """``files.os`` with ``stat``/``fstat`` claiming one file holds 100 bytes."""

    def __init__(self, liar: str):
        self.liar = liar
        self.inodes: set[int] = set()

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    @staticmethod
    def _small(info: os.stat_result) -> os.stat_result:
        fields = list(info)
        fields[6] = 100  # st_size
        return os.stat_result(fields)

    def stat(self, path: str, *args: object, **kwargs: object) -> os.stat_result:
        info = os.stat(path, *args, **kwargs)  # type: ignore[arg-type]
        if os.fspath(path) == self.liar:
            self.inodes.add(info.st_ino)
            return self._small(info)
        return info

    def fstat(self, fd: int) -> os.stat_result:
        info = os.fstat(fd)
        return self._small(info) if info.st_ino in self.inodes else info


@needs_proc_io
def test_a_file_whose_size_lies_is_read_no_further_than_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``/proc`` file says 0 bytes; a file may grow after its ``stat``: the read has its own bound."""
    project(tmp_path)
    run(tmp_path)
    before = bytes_read()
    run(tmp_path)
    usual = bytes_read() - before
    liar = tmp_path / "liar.py"
    liar.write_bytes(b"import mcp_fusion\n" + b"#" * (pipeline.MAX_FILE_BYTES + 8_000_000))
    monkeypatch.setattr(files, "os", _LyingSize(str(liar)))
    before = bytes_read()
    found = by_name(run(tmp_path))
    read = bytes_read() - before
    assert [code for code, _ in found["liar.py"]] == ["FL001"]
    assert "too large" in found["liar.py"][0][1]
    assert read - usual <= pipeline.MAX_FILE_BYTES + 100_000, (read, usual)


def test_the_read_bound_holds_on_an_endless_stream() -> None:
    """What ``/dev/zero`` would be if it looked like a file: a pipe that never ends."""
    reader, writer = os.pipe()
    try:
        os.set_blocking(writer, False)
        try:
            while True:
                os.write(writer, b"\0" * 65536)
        except BlockingIOError:
            pass
        with pytest.raises(files.FileTooLarge) as raised:
            files.read_descriptor(reader, 10_000)
        assert raised.value.size == 10_001
    finally:
        os.close(reader)
        os.close(writer)


# ----- directories the walk cannot read ------------------------------------------------------------


def test_an_unreadable_directory_is_fl001_at_that_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run as root here, where permission bits are not enforced: the refusal is simulated
    where the walk lists a directory."""
    project(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "tool.py").write_bytes(TOOL)
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if os.fspath(path) == str(locked):  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    report = run(tmp_path)
    unreadable = [d for d in report.diagnostics if d.path == str(locked)]
    assert [(d.code, d.message) for d in unreadable] == [("FL001", "cannot list directory: Permission denied")]
    only = run(locked)  # the directory named alone: never "All checks passed (0 files checked)"
    assert [d.code for d in only.diagnostics] == ["FL001"]
    monkeypatch.chdir(tmp_path)
    with deadline():
        result = CliRunner().invoke(cli.main, ["locked", "--no-cache"])
    assert result.exit_code == 1
    assert "locked:1:1: FL001" in result.output and "All checks passed" not in result.output


def test_a_path_over_path_max_is_fl001_not_a_silent_skip(tmp_path: Path) -> None:
    path_max = os.pathconf(tmp_path, "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096
    project(tmp_path)
    top = tmp_path / "deep"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    depth, component = 0, "d" * 200
    try:  # built relative to a descriptor: the full path is longer than any system call accepts
        while len(str(top)) + depth * (len(component) + 1) <= path_max + 300:
            os.mkdir(component, dir_fd=fd)
            inner = os.open(component, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd, depth = inner, depth + 1
        tool = os.open("tool.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(tool, TOOL)
        os.close(tool)
    finally:
        os.close(fd)
    try:
        report = run(tmp_path)
        deep = [d for d in report.diagnostics if d.path.startswith(str(top))]
        assert [d.code for d in deep] == ["FL001"], [(d.code, d.message) for d in deep]
        assert "too long" in deep[0].message.lower()
    finally:
        shutil.rmtree(top)


# ----- names that are not UTF-8 ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the file system there only takes Unicode names")
def test_sarif_escapes_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    project(tmp_path)
    os.makedirs(os.path.join(os.fsencode(tmp_path), b"caf\xe9"))
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9", b"r\xe9sum\xe9.py"), "wb") as handle:
        handle.write(TOOL)
    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", ".", "--no-cache", "--output-format", "sarif"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout.decode("utf-8"))
    uris = sorted(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"]
    )
    assert uris == ["app.py", "caf%E9/r%E9sum%E9.py"]
