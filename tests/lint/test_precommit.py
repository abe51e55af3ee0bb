"""The pre-commit hooks, run by pre-commit itself (issue 6, DESIGN §6).

``pre-commit try-repo`` clones a hook repository at a commit, so the test commits a copy of what
the hook needs (the manifest and the installable package) into a temporary repository: the
checkout the tests run from may have uncommitted work. pre-commit then builds the hook's virtualenv
with pip from that copy, which needs a package index for the dependencies (PyPI, or the
``PIP_INDEX_URL`` the environment configures); only when pip cannot reach one is the test skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

# Property, determinism and pre-commit tests are the slow part of the suite: `-m "not slow"` skips them.
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
MANIFEST = REPO_ROOT / ".pre-commit-hooks.yaml"
#: What ``pip install .`` of the hook repository needs.
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "fusion_lint", "mcp_fusion")
#: pip's ways of saying it could not reach an index (the only reason to skip).
OFFLINE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|"
    r"Network is unreachable|No matching distribution found|Could not find a version that satisfies|"
    r"ProxyError|ConnectTimeoutError|ReadTimeoutError|SSLError",
)
BAD_TOOL = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool


@tool("lookup", errors=[ErrorContract(reason="missing", code=JsonRpcErrorCode.NOT_FOUND,
                                      when="No such key", recovery="Call lookup again with an existing key.")])
def lookup(key: str, ctx: Context) -> str:
    if not key:
        ctx.fail("missing")
    return key
"""


def test_manifest_declares_both_hooks() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load(MANIFEST.read_text())}
    lint = hooks["fusion-lint"]
    assert (lint["entry"], lint["language"], lint["types"], lint["require_serial"]) == (
        "fusion-lint",
        "python",
        ["python"],
        True,
    )
    lock = hooks["fusion-lint-lock"]
    assert (lock["entry"], lock["language"], lock["pass_filenames"]) == (
        "fusion-lint lock --check --allow-missing",
        "python",
        False,
    )
    assert re.search(lock["files"], "fusion-contracts.lock") and re.search(lock["files"], "app/tools.py")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=fusion-lint tests",
            "-c",
            "user.email=tests@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def copy_sources(names: tuple[str, ...], target: Path) -> Path:
    """Copy these files and folders of the working tree (without build and cache debris) to ``target``."""
    target.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".fusion_lint_cache")
    for name in names:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            shutil.copy2(source, target / name)
    return target


def _hook_repository(target: Path) -> Path:
    copy_sources(PACKAGE_FILES, target)
    _git(target, "init", "-q")
    _git(target, "add", ".")
    _git(target, "commit", "-q", "-m", "hook repository under test")
    return target


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("pre_commit", reason="pre-commit is a dev dependency")
    if shutil.which("git") is None:
        pytest.skip("pre-commit needs git")
    return _hook_repository(tmp_path_factory.mktemp("precommit") / "hooks")


def _project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    return root


def _pre_commit(project: Path, *args: str) -> tuple[int, str]:
    """Run pre-commit in ``project``; skip only when pip could not reach an index for the hook's env."""
    home = project.parent / "pre-commit-home"
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    environment.pop("VIRTUAL_ENV", None)  # the hook gets its own virtualenv, not the test's
    run = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args, "--color", "never"],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = run.stdout + run.stderr
    if run.returncode != 0 and not re.search(r"fusion-lint\.+(Passed|Failed)", output):
        log = home / "pre-commit.log"
        details = output + (log.read_text() if log.exists() else "")
        if OFFLINE.search(details):
            pytest.skip("pip cannot reach a package index to build the hook's environment")
        pytest.fail(f"pre-commit could not run the hook:\n{details}")
    return run.returncode, output


def test_try_repo_reports_the_diagnostic_and_fails(tmp_path: Path, hook_repository: Path) -> None:
    project = _project(
        tmp_path / "project",
        {
            "app/__init__.py": "",
            "app/tools.py": BAD_TOOL,
            "app/notes.txt": "not Python: the hook's types keep it out\n",
        },
    )
    code, output = _pre_commit(project, "try-repo", str(hook_repository), "fusion-lint", "--all-files")
    assert code == 1, output
    assert re.search(r"app/tools\.py:8:9: FL204 .*fail-not-raised", output), output
    assert re.search(r"fusion-lint\.+Failed", output), output


def test_documented_config_passes_a_clean_project(tmp_path: Path, hook_repository: Path) -> None:
    """The README's ``repo:``/``rev:`` usage on the fixed file exits 0: the failure above is the
    finding, not a hook that always fails."""
    revision = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repository, check=True, capture_output=True, text=True
    ).stdout.strip()
    config = f"repos:\n  - repo: {hook_repository}\n    rev: {revision}\n    hooks:\n      - id: fusion-lint\n"
    fixed = BAD_TOOL.replace('        ctx.fail("missing")', '        raise ctx.fail("missing")')
    project = _project(tmp_path / "project", {"tools.py": fixed, ".pre-commit-config.yaml": config})
    code, output = _pre_commit(project, "run", "--all-files")
    assert code == 0, output
    assert re.search(r"fusion-lint\.+Passed", output), output


def test_the_readmes_snippet_with_the_lock_hook_passes_a_first_commit(tmp_path: Path, hook_repository: Path) -> None:
    """The README's pre-commit snippet as written (its repo and rev pointed at the hook repository):
    before any lockfile the lock hook passes and says so, creating nothing; once `fusion-lint lock`
    wrote it, a contract change fails the hook until the lockfile is written again."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    snippet = readme.split("```yaml\nrepos:\n", 1)[1].split("```", 1)[0]
    revision = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repository, check=True, capture_output=True, text=True
    ).stdout.strip()
    snippet = re.sub(r"repo: \S+", f"repo: {hook_repository}", snippet, count=1)
    snippet = re.sub(r"rev: [^\n]*", f"rev: {revision}", snippet, count=1)
    assert "id: fusion-lint-lock" in snippet
    fixed = BAD_TOOL.replace('        ctx.fail("missing")', '        raise ctx.fail("missing")')
    project = _project(tmp_path / "project", {"tools.py": fixed, ".pre-commit-config.yaml": "repos:\n" + snippet})

    code, output = _pre_commit(project, "run", "--all-files", "--verbose")
    assert code == 0, output
    assert re.search(r"fusion-lint lock --check\.+Passed", output), output
    assert "no lockfile yet, nothing to check" in output and "run `fusion-lint lock`" in output
    assert not (project / "fusion-contracts.lock").exists()

    locked = subprocess.run([sys.executable, "-m", "fusion_lint", "lock"], cwd=project, capture_output=True, text=True)
    assert locked.returncode == 0, locked.stderr
    _git(project, "add", ".")
    assert _pre_commit(project, "run", "--all-files")[0] == 0
    (project / "tools.py").write_text(
        fixed.replace('reason="missing"', 'reason="missing_key"').replace(
            'ctx.fail("missing")', 'ctx.fail("missing_key")'
        )
    )
    code, output = _pre_commit(project, "run", "--all-files")
    assert code == 1 and re.search(r"fusion-lint lock --check\.+Failed", output), output
