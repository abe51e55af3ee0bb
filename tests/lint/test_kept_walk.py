"""The walk's listings kept between the language server's lints (issue 15 point 4, ``kept_walk``): a
folder whose stat did not move is not listed again, and whatever moved (an entry added, removed or
renamed, a folder replaced, a ``.gitignore`` or config edited in place, a linked module's target)
gives the walk a fresh run would. Counted (folders listed, listings reused), never timed."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

import fusion_lint.discovery.kept_walk as kept_walk
from fusion_lint.base.modules import module_of
from fusion_lint.check.engine import Options, lint
from fusion_lint.check.session import Lent
from fusion_lint.discovery.walk import Discovery, Walker

PAST_NS = time.time_ns() - 3_600 * 10**9  # an hour ago: a folder changed since has another mtime


@pytest.fixture(autouse=True)
def settled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    # The folders here were made just now, and the tests do not wait for them to settle: the racy
    # rule is tested on its own below. Each test sets its folders' mtime an hour back instead, so
    # any change it makes moves the stat even within the clock's granularity.
    monkeypatch.setattr(kept_walk, "RACY_S", 0.0)


def backdate(root: Path) -> None:
    for folder, _, _ in os.walk(root):
        os.utime(folder, ns=(PAST_NS, PAST_NS))


def tick() -> None:
    """Past the file system clock's granularity (a jiffy): a change now moves a stat taken before."""
    time.sleep(0.05)


def make(root: Path, *relative: str, content: str = "x = 1\n") -> None:
    for name in relative:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def walked(
    root: Path, kept: kept_walk.KeptWalk, excludes: tuple[str, ...] = ()
) -> tuple[list[str], kept_walk.WalkLease]:
    found = Discovery()
    with kept_walk.walks_kept_in(kept) as lease:
        Walker(root, list(excludes), lease=lease).walk([root], found)
    fresh = Discovery()
    Walker(root, list(excludes)).walk([root], fresh)  # what a walk without kept listings finds
    assert (found.files, found.problems) == (fresh.files, fresh.problems)
    return [Path(p).relative_to(root).as_posix() for p in found.files], lease


def test_nothing_moved_nothing_is_listed_again(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "pkg/b.py", "pkg/deep/c.py", "README.md")
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()
    first, lease = walked(tmp_path, kept)
    assert first == ["a.py", "pkg/b.py", "pkg/deep/c.py"] and len(lease.listed) == 3 and lease.reused == 0
    again, lease = walked(tmp_path, kept)
    assert again == first and lease.listed == [] and lease.reused == 3


def test_an_entry_added_removed_or_renamed_relists_its_folder_only(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "pkg/b.py", "pkg/deep/c.py")
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()
    walked(tmp_path, kept)
    make(tmp_path, "pkg/new.py")
    files, lease = walked(tmp_path, kept)
    assert "pkg/new.py" in files and lease.listed == [str(tmp_path / "pkg")] and lease.reused == 2
    tick()
    os.rename(tmp_path / "pkg/new.py", tmp_path / "pkg/deep/moved.py")
    files, lease = walked(tmp_path, kept)
    assert "pkg/new.py" not in files and "pkg/deep/moved.py" in files
    assert sorted(lease.listed) == [str(tmp_path / "pkg"), str(tmp_path / "pkg/deep")]
    tick()
    (tmp_path / "a.py").unlink()
    files, lease = walked(tmp_path, kept)
    assert "a.py" not in files and lease.listed == [str(tmp_path)]


def test_a_folder_replaced_is_listed_again(tmp_path: Path) -> None:
    make(tmp_path, "pkg/b.py")
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()
    walked(tmp_path, kept)
    shutil.rmtree(tmp_path / "pkg")
    make(tmp_path, "pkg/other.py")
    os.utime(tmp_path, ns=(PAST_NS, PAST_NS))  # (its parent's mtime put back: still another inode)
    os.utime(tmp_path / "pkg", ns=(PAST_NS, PAST_NS))
    files, lease = walked(tmp_path, kept)
    assert files == ["pkg/other.py"] and str(tmp_path / "pkg") in lease.listed


def test_a_gitignore_edited_in_place_is_seen(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "pkg/b.py", "pkg/c.py")
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg" / ".gitignore").write_text("# none\n")
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()
    assert walked(tmp_path, kept)[0] == ["a.py", "pkg/b.py", "pkg/c.py"]
    (tmp_path / "pkg" / ".gitignore").write_text("c.py\n")  # the folder's stat does not move
    files, lease = walked(tmp_path, kept)
    assert files == ["a.py", "pkg/b.py"] and lease.listed == [str(tmp_path / "pkg")]


def test_other_excludes_are_judged_again(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "pkg/b.py")
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()
    walked(tmp_path, kept)
    files, lease = walked(tmp_path, kept, excludes=("pkg",))
    assert files == ["a.py"] and lease.listed == [str(tmp_path)]


def test_a_folder_holding_a_linked_module_is_always_listed(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "target/t.py")
    os.symlink(tmp_path / "target" / "t.py", tmp_path / "link.py")
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()
    assert "link.py" in walked(tmp_path, kept)[0]
    (tmp_path / "target" / "t.py").unlink()  # the link's folder does not change
    files, lease = walked(tmp_path, kept)
    assert "link.py" not in files and str(tmp_path) in lease.listed


def test_a_folder_changed_just_before_it_was_listed_is_listed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_walk, "RACY_S", 2.0)
    make(tmp_path, "a.py")  # just now: a change within the clock's granularity may not move its stat
    kept = kept_walk.KeptWalk()
    walked(tmp_path, kept)
    _, lease = walked(tmp_path, kept)
    assert lease.listed == [str(tmp_path)] and lease.reused == 0


def test_a_package_made_by_a_new_init_renames_its_modules(tmp_path: Path) -> None:
    make(tmp_path, "sub/m.py")
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()
    walked(tmp_path, kept)
    assert module_of(str(tmp_path / "sub" / "m.py"))[0] == "m"
    make(tmp_path, "sub/__init__.py")
    walked(tmp_path, kept)
    assert module_of(str(tmp_path / "sub" / "m.py"))[0] == "sub.m"


def test_a_config_exclude_edited_in_place_is_seen_by_the_lint(tmp_path: Path) -> None:
    tool = "from mcp_fusion import tool\n@tool('{0}', errors=[])\ndef {0}(): ...\n"
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    make(tmp_path, "a.py", content=tool.format("a"))
    make(tmp_path, "pkg/b.py", content=tool.format("b"))
    backdate(tmp_path)
    kept = kept_walk.KeptWalk()

    def files_linted() -> tuple[list[str], kept_walk.WalkLease]:
        with kept_walk.walks_kept_in(kept) as lease:
            report = lint(Options(paths=[str(tmp_path)], use_cache=False, lent=Lent(walks=lease)))
        return sorted({Path(d.path).name for d in report.diagnostics}), lease

    assert files_linted()[0] == ["a.py", "b.py"]
    assert files_linted()[1].listed == []
    (tmp_path / "pyproject.toml").write_text('[tool.fusion-lint]\nextend-exclude = ["pkg"]\n')  # (in place)
    files, lease = files_linted()
    assert files == ["a.py"] and lease.listed == [str(tmp_path)]
