"""``.gitignore`` as git reads it (DESIGN §13.5): a corpus of patterns — escapes, trailing spaces,
anchoring, ``**``, character classes, directory-only patterns, negation overridden by a deeper
``.gitignore``, ``.git/info/exclude`` and ``core.excludesFile`` — judged by the walker and by
``git check-ignore``, which must agree on every path."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fusion_lint.discovery.walk import Discovery, Walker

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")

ROOT_IGNORE = "\n".join(
    [
        "# a comment, then a blank line",
        "",
        "*.log",
        "!important.log",
        "/rooted.py",
        "build/",
        "doc/**/*.txt",
        "\\#hash.py",
        "\\!bang.py",
        "trailing\\ ",
        "spaces.py   ",
        "a?c.py",
        "[ab]x.py",
        "**/deep/",
        "foo/**",
        "[z-a]broken.py",
        "only_dir/",
    ]
)
FILES = [
    "debug.log",
    "important.log",
    "rooted.py",
    "sub/rooted.py",
    "build/x.py",
    "sub/build/y.py",
    "doc/a/b/c.txt",
    "doc/c.txt",
    "#hash.py",
    "!bang.py",
    "trailing ",
    "trailing",
    "spaces.py",
    "abc.py",
    "ax.py",
    "bx.py",
    "cx.py",
    "x/deep/d.py",
    "foo/bar.py",
    "foo.py",
    "only_dir",  # a file: 'only_dir/' names folders only
    "sub/keep.log",  # re-included by sub/.gitignore
    "sub/other.log",
    "sub/local.py",  # ignored by sub/.gitignore
    "info_excluded.py",  # .git/info/exclude
    "sub/info_excluded.py",
    "global_excluded.py",  # core.excludesFile
    "plain.py",
]


def _git(root: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert GIT is not None
    return subprocess.run([GIT, *args], cwd=root, env=env, input=stdin, capture_output=True, text=True, timeout=60)


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "repo"
    root.mkdir()
    # git and the walker read the same user configuration: this test's own home, nothing of the machine's.
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"  # (the walker honours it as git does)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _git(root, env, "init", "-q", ".").returncode == 0
    (root / ".gitignore").write_text(ROOT_IGNORE + "\n")
    (root / "sub").mkdir()
    (root / "sub" / ".gitignore").write_text("!keep.log\nlocal.py\n")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("info_excluded.py\n")
    (home / "global-ignore").write_text("global_excluded.py\n")
    assert _git(root, env, "config", "core.excludesFile", "~/global-ignore").returncode == 0
    for relative in FILES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("")
    return root, env


def _ours(root: Path) -> set[str]:
    walker = Walker(root)
    ignored = set()
    for relative in FILES:
        path = root / relative
        if walker._any_parent_excluded(path) or walker.excluded(path, False):
            ignored.add(relative)
    return ignored


def test_the_walker_ignores_exactly_what_git_ignores(repository: tuple[Path, dict[str, str]]) -> None:
    root, env = repository
    checked = _git(root, env, "check-ignore", "--no-index", "--stdin", stdin="\n".join(FILES) + "\n")
    assert checked.returncode in (0, 1), checked.stderr
    by_git = set(checked.stdout.splitlines())
    assert by_git == _ours(root)
    # The corpus is worth its name: each source of patterns decides some path both ways.
    assert {"debug.log", "sub/other.log", "#hash.py", "!bang.py", "trailing ", "spaces.py"} <= by_git
    assert {"info_excluded.py", "sub/info_excluded.py", "global_excluded.py", "sub/local.py"} <= by_git
    assert {"important.log", "sub/keep.log", "sub/rooted.py", "trailing", "cx.py", "only_dir", "plain.py"}.isdisjoint(
        by_git
    )


def test_a_walk_skips_what_git_ignores(repository: tuple[Path, dict[str, str]]) -> None:
    root, _ = repository
    found = Discovery()
    Walker(root).walk([root], found)
    walked = {Path(path).relative_to(root).as_posix() for path in found.files}
    assert walked == {"sub/rooted.py", "foo.py", "cx.py", "plain.py"}


def test_a_worktree_reads_the_exclude_file_of_its_main_repository(tmp_path: Path, monkeypatch) -> None:
    from fusion_lint.discovery.walk import repository_excludes

    main = tmp_path / "main"
    (main / ".git" / "info").mkdir(parents=True)
    (main / ".git" / "info" / "exclude").write_text("from_main.py\n")
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing"))
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    (rules,) = repository_excludes(worktree)
    assert rules.base == worktree and rules.decide(worktree / "from_main.py", False) is True
