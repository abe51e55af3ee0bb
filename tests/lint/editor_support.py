"""What the real-editor tests (Neovim, Emacs/eglot) share: a copy of the bundled example server to
open, a ``fusion-lint`` on the PATH that is this interpreter's (the documented snippets start it by
name), and the CLI to compare the editor with."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SERVER = REPO_ROOT / "fixtures" / "example_server"


def example_project(tmp_path: Path) -> Path:
    """``tmp_path/project``: the example server and an empty fusion-lint config."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE_SERVER, project / "example_server", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    return project


def path_with_fusion_lint(tmp_path: Path) -> str:
    """A PATH whose first ``fusion-lint`` runs ``python -m fusion_lint`` with this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fusion-lint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m fusion_lint "$@"\n')
    (bin_dir / "fusion-lint").chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def cli(project: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fusion_lint", *args],
        cwd=project,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
    )
