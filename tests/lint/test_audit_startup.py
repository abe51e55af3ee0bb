"""Start-up cost: a run that parses nothing must not import libcst (~0.1 s). Every rule module
imports ``fixes``, so ``fixes`` imports libcst only when a fix is actually built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import sys
from fusion_lint.check.engine import Options, lint
report = lint(Options(paths=[sys.argv[1]], use_cache=False, jobs=1))
print(len(report.diagnostics), len(report.enabled), "libcst" in sys.modules)
"""


def run_probe(root: Path) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.slow
def test_a_tree_without_the_runtime_never_imports_libcst(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "plain.py").write_text("def f():\n    return 1\n")

    diagnostics, rules, imported = run_probe(tmp_path)

    assert int(rules) > 30  # every rule module (and so ``fixes``) was loaded
    assert (diagnostics, imported) == ("0", "False")


@pytest.mark.slow
def test_a_finding_with_a_fix_still_gets_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\nselect = ['FL101']\n")
    (tmp_path / "app.py").write_text("from mcp_fusion import tool\n\n@tool('t', errors=[])\ndef t():\n    return 1\n")
    probe = PROBE.replace('"libcst" in sys.modules', "report.diagnostics[0].fix.message")

    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split(maxsplit=2)[2].strip() == "Drop the empty errors=[]"
