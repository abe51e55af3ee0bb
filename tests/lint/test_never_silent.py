"""Never a green summary over what was not seen (issue 31, DESIGN §13.3): a registration whose
handler cannot be resolved to a function of the project is counted apart in the summary, which then
never says "All checks passed", whichever rules are selected, warm as cold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SERVER = """\
from mcp.server.fastmcp import FastMCP

from pkg.plugins import load_plugins

mcp = FastMCP("plugins")

for handler in load_plugins():
    mcp.add_tool(handler)


@mcp.tool()
def ping(host: str) -> str:
    return host
"""
PLUGINS = """\
def load_plugins():
    return []


def echo(text: str) -> str:
    return text
"""


def summary(root: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "check", *args, "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.strip().splitlines()[-1]


def project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "server.py").write_text(SERVER)
    (root / "pkg" / "plugins.py").write_text(PLUGINS)
    return root


def test_unresolved_registrations_are_counted_and_never_pass_green(tmp_path: Path) -> None:
    root = project(tmp_path)
    # FL190 selected (the default): it names the registration; the summary counts it apart.
    assert summary(root, "--no-cache") == (
        "Found 0 errors, 1 warning in 1 file (2 tools; 1 registration not resolved: see FL190; 3 files checked)."
    )
    # Whatever is selected, the summary does not say "All checks passed" over the unchecked handler.
    unchecked = (
        "No findings (2 tools; 3 files checked), but 1 registration could not be resolved to a handler and "
        "went unchecked: see FL190."
    )
    for run in ("cold", "warm", "warm again"):
        assert summary(root, "--select", "FL300") == unchecked, run
    assert summary(root, "--select", "FL300", "--no-cache") == unchecked


def test_the_count_follows_an_edit_warm_as_cold(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert "could not be resolved" in summary(root, "--select", "FL300")
    # The loop registers a literal list of project functions: resolved, and all checks pass.
    (root / "pkg" / "server.py").write_text(
        SERVER.replace("from pkg.plugins import load_plugins", "from pkg.plugins import echo").replace(
            "load_plugins()", "[echo]"
        )
    )
    passed = "All checks passed (2 tools; 3 files checked)."
    assert summary(root, "--select", "FL300") == passed
    assert summary(root, "--select", "FL300", "--no-cache") == passed
    # And back: the warm run sees the handler go unresolved again.
    (root / "pkg" / "server.py").write_text(SERVER)
    assert "could not be resolved" in summary(root, "--select", "FL300")
