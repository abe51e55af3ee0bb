"""The linted code is never imported or executed, and configuration is data (DESIGN §11, issue 9).

Every planted file would write a marker file if Python imported or ran it: a tool module, the
service it calls, the package ``__init__``, a ``conftest.py`` and a ``setup.py`` beside them, a
``.pth`` file. After linting, the marker must not exist and no planted module may be in
``sys.modules``.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import fusion_lint.cli.main as cli
import fusion_lint.source.runner as runner
from fusion_lint.check.engine import Options, lint


def _trap(marker: Path, who: str) -> str:
    return f"open({str(marker)!r}, 'a').write({who!r} + '\\n')\n"


def plant(root: Path, marker: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    package = root / "trapped_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("import mcp_fusion\n" + _trap(marker, "__init__"))
    (package / "services.py").write_text(
        "import mcp_fusion\n" + _trap(marker, "services") + "\n\ndef fetch(item_id):\n    return {'id': item_id}\n"
    )
    handler_trap = "    " + _trap(marker, "handler")
    (package / "tools.py").write_text(
        "from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool\n"
        "from .services import fetch\n" + _trap(marker, "tools") + "\n\n"
        "@tool('get_item', errors=[ErrorContract(reason='Missing', code=JsonRpcErrorCode.NOT_FOUND,\n"
        "      when='No item', recovery='Check the id, then call get_item again.')])\n"
        "def get_item(item_id: str, ctx: Context) -> dict:\n" + handler_trap + "    found = fetch(item_id)\n"
        "    if not found:\n"
        "        raise ctx.fail('Missing')\n"
        "    return found\n"
    )
    for name in ("conftest.py", "setup.py", "__main__.py"):
        (root / name).write_text("import mcp_fusion\n" + _trap(marker, name))
    (root / "trapped.pth").write_text("import os; " + _trap(marker, "pth"))


@pytest.mark.parametrize("isolated", [True, False], ids=["workers", "in-process"])
def test_linting_imports_and_runs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated: bool) -> None:
    if not isolated:
        monkeypatch.setattr(runner, "isolation_context", lambda files: None)
    marker = tmp_path / "MARKER"
    root = tmp_path / "project"
    root.mkdir()
    plant(root, marker)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli.main, [".", "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "FL107" in result.output  # it was linted: the reason 'Missing' is not snake_case
    assert not marker.exists(), marker.read_text()
    loaded = [m for m in list(sys.modules.values()) if str(getattr(m, "__file__", "") or "").startswith(str(root))]
    assert loaded == []


def test_configuration_is_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Values that would run code if evaluated are rejected or used as plain strings."""
    marker = tmp_path / "MARKER"
    code = f"__import__('os').system('touch {marker}')"
    (tmp_path / "app.py").write_text("import mcp_fusion\n")
    (tmp_path / "pyproject.toml").write_text(f'[tool.fusion-lint]\nruntime-modules = ["{code}"]\n')
    monkeypatch.chdir(tmp_path)
    rejected = CliRunner().invoke(cli.main, ["."], catch_exceptions=False)
    assert rejected.exit_code == 2
    (tmp_path / "pyproject.toml").write_text(f'[tool.fusion-lint]\ncache-dir = "{code}"\nexclude = ["{code}"]\n')
    accepted = CliRunner().invoke(cli.main, ["."], catch_exceptions=False)
    assert accepted.exit_code == 0, accepted.output
    assert not marker.exists()


def test_a_cache_planted_in_the_checkout_cannot_run_code(tmp_path: Path) -> None:
    """A hostile repository may ship ``.fusion_lint_cache/``: its entries are read as data only."""
    marker = tmp_path / "MARKER"
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (root / "app.py").write_text("import mcp_fusion\n")
    options = Options(paths=[str(root)], jobs=1)
    lint(options)  # writes the genuine entries, at the names a planted cache would use

    class Payload:
        def __reduce__(self) -> tuple:
            return (os.system, (f"touch {marker}",))

    entries = list((root / ".fusion_lint_cache").glob("*.pickle"))
    assert entries
    for entry in entries:
        entry.write_bytes(pickle.dumps(Payload()))
    report = lint(options)
    assert report.diagnostics == []
    assert not marker.exists()
