"""``--fix`` keeps a file's owner, group and mode, and leaves a file the user cannot write alone
(DESIGN §12.4, issue 17: a 0444 file was rewritten, a file of another user became root's).

The suite runs as root here, where permission bits do not stop a write: a file without any write
bit is still left alone (``chmod a-w`` says "do not change this"), and root can give a fixed
file its owner back. What a user who is not root meets (a file of someone else in a group it
shares) is simulated where the fix decides it cannot give the original owner to a new file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import fusion_lint.base.files as files
from fusion_lint.check.engine import Options, lint
from fusion_lint.fix.apply import apply_fixes

SOURCE = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool


@tool("get_item", errors=[
    ErrorContract(reason="item_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item has that id",
                  recovery="Check the id with the user, then call get_item again."),
])
async def get_item(item_id: str, ctx) -> dict:
    if not item_id:
        ctx.fail("item_missing")
    return {}
"""
FIXED = SOURCE.replace('        ctx.fail("item_missing")', '        raise ctx.fail("item_missing")')


def fix(root: Path) -> list[str]:
    options = Options(paths=[str(root)], use_cache=False, jobs=1)
    report, _ = apply_fixes(lint(options), options, write=True)
    return [d.code for d in report.diagnostics]


def project(root: Path, *names: str) -> list[Path]:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    paths = [root / name for name in names]
    for path in paths:
        path.write_text(SOURCE)
    return paths


def test_a_read_only_file_is_left_alone_and_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    read_only, writable = project(tmp_path, "frozen.py", "app.py")
    read_only.chmod(0o444)
    remaining = fix(tmp_path)
    assert read_only.read_text() == SOURCE and stat.S_IMODE(read_only.stat().st_mode) == 0o444
    assert writable.read_text() == FIXED
    assert remaining == ["FL204"]  # what was not fixed is still reported
    err = capsys.readouterr().err
    assert "frozen.py: no permission to write it (not fixed); left alone" in err
    assert "Fixed 1 finding in 1 file." in err


@pytest.mark.skipif(not hasattr(os, "chown") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_keeps_its_owner_group_and_mode(tmp_path: Path) -> None:
    (theirs,) = project(tmp_path, "theirs.py")
    nobody = 65534
    os.chown(theirs, nobody, nobody)
    theirs.chmod(0o664)
    inode = theirs.stat().st_ino
    fix(tmp_path)
    info = theirs.stat()
    assert theirs.read_text() == FIXED
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (nobody, nobody, 0o664)
    assert info.st_ino != inode  # root could give the new file its owner: replaced atomically
    assert not list(tmp_path.glob(".*.tmp"))


def test_without_the_right_to_give_the_owner_back_the_file_is_rewritten_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a user who is not root gets for a file owned by someone else that it may write."""
    (shared,) = project(tmp_path, "shared.py")
    shared.chmod(0o664)
    before = shared.stat()
    monkeypatch.setattr(files, "_can_give", lambda info: False)
    fix(tmp_path)
    after = shared.stat()
    assert shared.read_text() == FIXED
    assert (after.st_ino, after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (
        before.st_ino,
        before.st_uid,
        before.st_gid,
        0o664,
    )


def test_a_file_with_hard_links_is_rewritten_in_place_so_every_link_sees_the_fix(tmp_path: Path) -> None:
    (linked,) = project(tmp_path, "linked.py")
    os.link(linked, tmp_path / "other_name.txt")
    fix(tmp_path)
    assert linked.read_text() == FIXED
    assert (tmp_path / "other_name.txt").read_text() == FIXED
    assert linked.stat().st_nlink == 2


def test_a_directory_the_user_cannot_write_into_still_gets_its_writable_file_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (app,) = project(tmp_path, "app.py")

    def no_temporary_here(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files.tempfile, "mkstemp", no_temporary_here)
    fix(tmp_path)
    assert app.read_text() == FIXED


def test_a_failed_write_in_place_puts_the_original_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (app,) = project(tmp_path, "app.py")
    monkeypatch.setattr(files, "_can_give", lambda info: False)
    real_write, inode, calls = os.write, app.stat().st_ino, []

    def failing_write(fd: int, data: bytes) -> int:
        if os.fstat(fd).st_ino == inode:
            calls.append(len(data))
            if len(calls) == 1:
                real_write(fd, bytes(data[:10]))  # part of the new text lands, then the disk is full
                raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(files.os, "write", failing_write)
    fix(tmp_path)
    assert app.read_text() == SOURCE
    assert "app.py: cannot write it: No space left on device; left alone" in capsys.readouterr().err
