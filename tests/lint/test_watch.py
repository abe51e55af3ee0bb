"""``check --watch`` (DESIGN §13.5): a real ``fusion-lint`` process watching a real folder; a burst
of edits is one re-run (debounced), an unrelated file is none, a config edit re-reads the config,
Ctrl-C ends it with exit 0.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fusion_lint.cli.watch import watched_places
from fusion_lint.config.watched import relevant

APP = """\
from mcp_fusion import tool


@tool("lookup", errors=[])
def lookup(key: str) -> str:
    if not key:
        raise ValueError("bad")
    return key
"""
RERUN = "File change detected"
WATCHING = "Watching for file changes."


class Watcher:
    """The process, its stderr lines as they come, its stdout at the end."""

    def __init__(self, root: Path, *args: str):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("FUSION_LINT_OUTPUT_FORMAT", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fusion_lint", "check", "--watch", "--no-cache", *args, "."],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.stdout: list[str] = []
        threading.Thread(target=self._pump, args=(self.process.stderr, self.lines), daemon=True).start()
        threading.Thread(target=self._collect, daemon=True).start()

    @staticmethod
    def _pump(stream, into: queue.Queue[str]) -> None:
        for line in stream:
            into.put(line)

    def _collect(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.stdout.append(line)

    def wait_for(self, fragment: str, count: int, timeout: float = 30.0) -> None:
        """Until ``fragment`` has been seen on stderr ``count`` times in all."""
        deadline = time.monotonic() + timeout
        while sum(fragment in line for line in self.seen) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"waited for {count} x {fragment!r}; saw {self.seen}")
            try:
                self.seen.append(self.lines.get(timeout=left))
            except queue.Empty:
                continue

    def settle(self, seconds: float) -> None:
        """Collect what arrives in ``seconds`` of quiet."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.seen.append(self.lines.get(timeout=left))
            except queue.Empty:
                break

    def wait_for_reports(self, count: int, timeout: float = 30.0) -> None:
        """Until ``count`` reports have ended on stdout: stdout and stderr are read by separate
        threads, so stderr's "Watching" line can arrive before the report printed ahead of it."""
        deadline = time.monotonic() + timeout
        while self.reports() < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"waited for {count} reports; stdout was {self.stdout}")
            time.sleep(0.02)

    def reports(self) -> int:
        return sum(line.startswith(("Found", "All checks passed")) for line in self.stdout)

    def count(self, fragment: str) -> int:
        return sum(fragment in line for line in self.seen)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.mark.slow
def test_a_burst_of_edits_is_one_rerun_and_a_config_edit_rereads_the_config(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles", reason="--watch needs the watch extra (watchfiles)")
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(APP)
    watcher = Watcher(tmp_path)
    try:
        watcher.wait_for(WATCHING, 1)
        watcher.wait_for_reports(1)
        assert watcher.count(RERUN) == 0
        assert sum("FL300" in line for line in watcher.stdout) == 1

        # Not a file fusion-lint reads: no re-run.
        (tmp_path / "notes.txt").write_text("hello\n")
        watcher.settle(2.5)
        assert watcher.count(RERUN) == 0, watcher.seen

        # Three writes in quick succession (an editor saving twice, a second module): one re-run.
        (tmp_path / "app.py").write_text(APP + "\n# edited\n")
        time.sleep(0.03)
        (tmp_path / "app.py").write_text(APP + "\n# edited again\n")
        (tmp_path / "other.py").write_text("X = 1\n")
        watcher.wait_for(RERUN, 1)
        watcher.wait_for(WATCHING, 2)
        watcher.wait_for_reports(2)
        watcher.settle(2.5)  # longer than the debounce: a second re-run would have come by now
        assert watcher.count(RERUN) == 1, watcher.seen
        assert sum("FL300" in line for line in watcher.stdout) == 2

        # The config changes: the next run reads it (FL300 is ignored from now on).
        (tmp_path / "pyproject.toml").write_text('[tool.fusion-lint]\nignore = ["FL300"]\n')
        watcher.wait_for(RERUN, 2)
        watcher.wait_for(WATCHING, 3)
        watcher.wait_for_reports(3)
        watcher.settle(1.0)
        assert watcher.count(RERUN) == 2, watcher.seen
        assert sum("FL300" in line for line in watcher.stdout) == 2  # none in the third report
        assert watcher.reports() == 3
    finally:
        code = watcher.stop()
    assert code == 0


def test_watch_refuses_what_it_cannot_repeat(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "check", "--watch", "--diff", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--watch cannot be combined with --diff" in done.stderr


def test_what_triggers_a_rerun(tmp_path: Path) -> None:
    base = tmp_path / "shared" / "base.toml"
    places, extra = watched_places(
        [str(tmp_path / "svc" / "app.py")], tmp_path / "svc", [tmp_path / "svc" / "pyproject.toml", base]
    )
    # The project and the shared base above it are watched; the base triggers whatever its name.
    assert places == [str((tmp_path / "svc").resolve()), str(base.resolve())]
    assert relevant(str(base.resolve()), extra)
    for name in ("app.py", "stubs.pyi", "pyproject.toml", "fusion-lint.toml", ".fusion-lint.toml", ".gitignore"):
        assert relevant(f"/p/{name}", extra), name
    assert relevant("/p/fusion-contracts.lock", extra)
    for name in ("notes.txt", "data.json", "app.py.orig", "other.toml"):
        assert not relevant(f"/p/{name}", extra), name
