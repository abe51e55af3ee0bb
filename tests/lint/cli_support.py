"""The CLI as the warm-versus-cold tests run it: a real ``fusion-lint check`` process in a folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def lint_json(root: Path, *args: str) -> list[dict]:
    """``fusion-lint check --output-format json [args] .`` in ``root`` (the cache on unless
    ``--no-cache`` is passed): its diagnostics; a run that does not exit 0 or 1 fails the test."""
    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "check", "--output-format", "json", *args, "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)
