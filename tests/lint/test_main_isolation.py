"""``python -m fusion_lint`` never imports code from the working directory (DESIGN §11, §12.4,
issue 17): in a checkout, a local ``click/`` ran and a vendored ``mcp_fusion/`` broke the lint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_python_dash_m_ignores_packages_in_the_working_directory(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    (tmp_path / "click").mkdir()
    (tmp_path / "click" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(7)\n")
    (tmp_path / "mcp_fusion").mkdir()
    (tmp_path / "mcp_fusion" / "__init__.py").write_text("raise ImportError('the vendored copy was imported')\n")
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\nextend-exclude = ['click/', 'mcp_fusion/']\n")
    (tmp_path / "app.py").write_text(
        "from mcp_fusion import tool\n\n\n@tool('get_item')\ndef get_item(item_id: str) -> dict:\n"
        "    raise ValueError('no such item')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", ".", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not marker.exists()
    assert done.returncode == 1, done.stderr
    assert "app.py:6:5: FL300" in done.stdout
    assert "ImportError" not in done.stderr
