"""Discovery (DESIGN §6, issue 3 point 1): which files are read and reported, in what order;
``.gitignore`` and excludes honoured, also for files passed by name; loops and missing paths.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, UsageError, lint
from fusion_lint.discovery.walk import Discovery, Walker

# FL101 on line 2 of every such file: proves the file was linted and reported.
EMPTY_CONTRACT = "from mcp_fusion import tool\n@tool('t', errors=[])\ndef t(): ...\n"


def reported(linted) -> list[str]:
    return sorted({linted.relative(d) for d in linted.diagnostics})


def walk(root: Path, paths: list[Path], excludes: list[str] = (), gitignore: bool = True) -> list[str]:
    found = Discovery()
    Walker(root, list(excludes), gitignore).walk(paths, found)
    return [Path(p).relative_to(root).as_posix() for p in found.files]


def make(root: Path, *relative: str, content: str = "x = 1\n") -> None:
    for name in relative:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def test_walk_is_sorted_and_python_only(tmp_path: Path) -> None:
    make(tmp_path, "b.py", "a.py", "pkg/z.py", "pkg/a.py", "README.md", "data.json", "pkg/c.pyi.txt")
    assert walk(tmp_path, [tmp_path]) == ["a.py", "b.py", "pkg/a.py", "pkg/z.py"]


def test_same_file_given_twice_is_listed_once(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "pkg/b.py")
    assert walk(tmp_path, [tmp_path / "a.py", tmp_path, tmp_path / "pkg"]) == ["a.py", "pkg/b.py"]


def test_gitignore_is_respected(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n*_generated.py\n!keep_generated.py\n/top_only.py\n")
    make(
        tmp_path,
        "app.py",
        "build/out.py",
        "x_generated.py",
        "keep_generated.py",
        "top_only.py",
        "sub/top_only.py",
        "sub/deep/.gitignore",
        "sub/deep/local.py",
        "sub/deep/other.py",
    )
    (tmp_path / "sub/deep/.gitignore").write_text("local.py\n")
    assert walk(tmp_path, [tmp_path]) == ["app.py", "keep_generated.py", "sub/deep/other.py", "sub/top_only.py"]
    # respect-gitignore = false reads everything
    assert len(walk(tmp_path, [tmp_path], gitignore=False)) == 8


def test_gitignore_applies_to_files_given_by_name(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n")
    make(tmp_path, "build/out.py", "app.py")
    assert walk(tmp_path, [tmp_path / "build" / "out.py", tmp_path / "app.py"]) == ["app.py"]


def test_gitignore_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    # The project is a repository of its own; a .gitignore above it belongs to something else.
    (tmp_path / ".gitignore").write_text("*.py\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    make(project, "app.py")
    assert walk(project, [project]) == ["app.py"]


def test_gitignore_above_a_project_outside_any_repository_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.py\n")
    project = tmp_path / "project"
    make(project, "app.py")
    (project / ".gitignore").write_text("skip.py\n")
    make(project, "skip.py")
    assert walk(project, [project]) == ["app.py"]


def test_gitignore_of_the_repository_applies_to_a_project_inside_it(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n")
    project = tmp_path / "services" / "api"
    make(project, "app.py", "generated/x.py")
    assert walk(project, [project]) == ["app.py"]


def test_default_excludes(tmp_path: Path) -> None:
    make(tmp_path, "app.py", ".venv/lib/x.py", "node_modules/y.py", ".git/hooks/z.py", "dist/w.py")
    linted_paths = walk(tmp_path, [tmp_path], excludes=[".venv", "node_modules", ".git", "dist"])
    assert linted_paths == ["app.py"]


def test_exclude_and_extend_exclude_through_lint(lint_project) -> None:
    files = {
        "app.py": EMPTY_CONTRACT,
        "gen/api.py": EMPTY_CONTRACT,
        "legacy/old.py": EMPTY_CONTRACT,
        ".venv/site.py": EMPTY_CONTRACT,
    }
    assert reported(lint_project(files, dedent=False)) == ["app.py", "gen/api.py", "legacy/old.py"]
    extended = lint_project(files, config='extend-exclude = ["gen/", "old.py"]\n', dedent=False)
    assert reported(extended) == ["app.py"]
    # ``exclude`` replaces the defaults: .venv is linted again
    replaced = lint_project(files, config='exclude = ["gen"]\n', dedent=False)
    assert reported(replaced) == [".venv/site.py", "app.py", "legacy/old.py"]


def test_excludes_apply_to_files_passed_explicitly(lint_project) -> None:
    files = {"app.py": EMPTY_CONTRACT, "gen/api.py": EMPTY_CONTRACT, "legacy/old.py": EMPTY_CONTRACT}
    linted = lint_project(
        files,
        config='extend-exclude = ["gen/", "legacy/old.py"]\n',
        paths=["app.py", "gen/api.py", "legacy/old.py"],
        dedent=False,
    )
    assert reported(linted) == ["app.py"]
    assert linted.report.files_checked == 1


def test_excluded_directory_passed_explicitly_is_skipped(lint_project) -> None:
    files = {"gen/api.py": EMPTY_CONTRACT}
    linted = lint_project(files, config='extend-exclude = ["gen"]\n', paths=["gen"], dedent=False)
    assert linted.report.files_checked == 0 and reported(linted) == []


def test_symlink_loop_is_walked_once(tmp_path: Path) -> None:
    make(tmp_path, "pkg/a.py", "pkg/sub/b.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "sub" / "loop")
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "again")
    assert walk(tmp_path, [tmp_path]) == ["pkg/a.py", "pkg/sub/b.py"]


def test_symlink_loop_through_lint_terminates(lint_project, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    os.symlink(tmp_path, tmp_path / "pkg" / "up")
    linted = lint_project({"pkg/app.py": EMPTY_CONTRACT}, dedent=False)
    assert linted.summary() == [("FL101", "pkg/app.py", 2)]


def test_symlinked_directory_given_by_name_is_walked(tmp_path: Path) -> None:
    make(tmp_path, "real/a.py")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert walk(tmp_path, [tmp_path / "link"]) == ["link/a.py"]


def test_dangling_symlink_is_ignored(tmp_path: Path) -> None:
    make(tmp_path, "a.py")
    os.symlink(tmp_path / "missing.py", tmp_path / "b.py")
    assert walk(tmp_path, [tmp_path]) == ["a.py"]


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads everything")
def test_unreadable_directory_is_fl001_and_the_run_goes_on(lint_project, tmp_path: Path) -> None:
    make(tmp_path, "locked/a.py")
    os.chmod(tmp_path / "locked", 0)
    try:
        linted = lint_project({"app.py": EMPTY_CONTRACT}, dedent=False)
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    assert ("FL001", "locked", 1) in linted.summary() and ("FL101", "app.py", 2) in linted.summary()


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory"):
        lint(Options(paths=[str(tmp_path / "nope")], use_cache=False, jobs=1))


def test_order_is_deterministic_across_jobs(lint_project) -> None:
    # Enough files to take the process pool (the parallel threshold is a dozen).
    files = {f"m{n:02d}.py": EMPTY_CONTRACT for n in range(14)}
    files["pkg/__init__.py"] = ""
    files["pkg/z.py"] = EMPTY_CONTRACT
    serial = lint_project(files, dedent=False)
    from fusion_lint.check.engine import Options as _Options

    parallel = lint(_Options(paths=[str(serial.root)], use_cache=False, jobs=2))
    assert [(d.path, d.span.line, d.code, d.message) for d in parallel.diagnostics] == [
        (d.path, d.span.line, d.code, d.message) for d in serial.diagnostics
    ]
    assert [serial.relative(d) for d in serial.diagnostics] == sorted(files.keys() - {"pkg/__init__.py"})


def test_syntax_error_is_fl000_and_other_files_are_linted(lint_project) -> None:
    files = {
        "a_broken.py": "from mcp_fusion import tool\ndef broken(:\n    pass\n",
        "b_ok.py": EMPTY_CONTRACT,
        "c_nul.py": "from mcp_fusion import tool\nx = 1\x00\n",
    }
    linted = lint_project(files, dedent=False)
    assert [t for t in linted.summary()] == [
        ("FL000", "a_broken.py", 2),
        ("FL101", "b_ok.py", 2),
        ("FL000", "c_nul.py", 1),
    ]
    assert "syntax error" in linted.of("FL000", "a_broken.py")[0].message


def test_invalid_utf8_is_fl001(lint_project, tmp_path: Path) -> None:
    lint_project({"b_ok.py": EMPTY_CONTRACT}, dedent=False)
    (tmp_path / "a_bad.py").write_bytes(b"from mcp_fusion import tool\nx = '\xff\xfe'\n")
    linted = lint_project({}, dedent=False)
    assert linted.summary() == [("FL001", "a_bad.py", 1), ("FL101", "b_ok.py", 2)]


def test_files_without_the_runtime_are_counted_but_not_parsed(lint_project) -> None:
    files = {f"plain{n}.py": "def f(:\n" for n in range(3)}  # would be FL000 if parsed
    files["app.py"] = EMPTY_CONTRACT
    linted = lint_project(files, dedent=False)
    assert linted.summary() == [("FL101", "app.py", 2)]
    assert linted.report.files_checked == 4


def test_a_directory_gone_before_it_is_listed_is_skipped_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A concurrent run's cache staging directory can vanish between its parent's listing and its
    own: nothing was there to lint, so it is no FL001 (a race the cache test met on CI)."""
    make(tmp_path, "a.py", "gone/b.py")
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "gone":
            raise FileNotFoundError(2, "No such file or directory")
        return real_scandir(path)

    monkeypatch.setattr("fusion_lint.discovery.walk.os.scandir", scandir)
    found = Discovery()
    Walker(tmp_path, [], True).walk([tmp_path], found)
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found.files] == ["a.py"]
    assert found.problems == []
