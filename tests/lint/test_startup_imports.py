"""Start-up cost (issue 15): a warm run of the command line imports only what it needs. The
linter's tables come from ``mcp_fusion`` (DESIGN §2.1), whose package is lazy, so reading them
must not pull in pydantic (``ErrorContract``'s model), asyncio (``contracted``) or the MCP SDK;
a run without a config table validates nothing, so it needs no pydantic either. Not a timing
assertion: which modules a run loaded, checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Top-level packages a warm lint run has no use for (each costs 10-100 ms to import).
HEAVY = (
    "pydantic",
    "pydantic_core",
    "asyncio",
    "mcp",
    "mcp_types",
    "anyio",
    "libcst",
    "importlib.metadata",
    "concurrent.futures",
    "email",
)
#: Formats the run did not print are not imported.
UNUSED_FORMATS = (
    "fusion_lint.output.sarif",
    "fusion_lint.output.junit",
    "fusion_lint.output.github",
    "fusion_lint.output.json",
)

PROBE = """
import json, sys
from fusion_lint.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""

SERVER = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool

MISSING = ErrorContract(reason="missing", code=JsonRpcErrorCode.NOT_FOUND, when="No such item",
                        recovery="Call list_items to see which ids exist.")


@tool("get_item", errors=[MISSING])
def get_item(ctx, item_id: str) -> str:
    if not item_id:
        ctx.fail("missing")
    return item_id
"""


def loaded_by_a_run(*args: str, cwd: Path) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    return outcome["exit"], set(outcome["modules"])


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if any(name == heavy or name.startswith(heavy + ".") for heavy in HEAVY))


@pytest.mark.slow
def test_a_warm_run_imports_no_heavy_module(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "other.py").write_text("def helper():\n    return 1\n")
    cold_exit, _ = loaded_by_a_run(".", cwd=tmp_path)  # fills the cache

    warm_exit, modules = loaded_by_a_run(".", cwd=tmp_path)
    alone_exit, alone = loaded_by_a_run("server.py", cwd=tmp_path)

    assert (tmp_path / ".fusion_lint_cache").is_dir()
    assert cold_exit == warm_exit == alone_exit
    assert heavy_in(modules) == [] and heavy_in(alone) == []
    assert "fusion_lint.output.text" in modules
    assert sorted(modules.intersection(UNUSED_FORMATS)) == []
    assert "fusion_lint.lsp.server" not in modules and "fusion_lint.fix.apply" not in modules


@pytest.mark.slow
def test_the_runtime_tables_are_read_without_pydantic() -> None:
    probe = (
        "import sys\n"
        "from mcp_fusion import CONTRACT_FIELDS, REQUIRED_FIELDS, SEVERITIES, FACTORY_CODES, JsonRpcErrorCode\n"
        "assert 'pydantic' not in sys.modules and 'asyncio' not in sys.modules, sorted(sys.modules)\n"
        "from mcp_fusion import ErrorContract, contract\n"  # the model and the decorator still load on demand
        "assert CONTRACT_FIELDS == tuple(ErrorContract.model_fields), CONTRACT_FIELDS\n"
        "assert callable(contract) and contract.__module__ == 'mcp_fusion.contracted'\n"
        "import mcp_fusion.contract\n"  # the submodule's import does not rebind the public name
        "import mcp_fusion\n"
        "assert mcp_fusion.contract is contract\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.slow
def test_a_config_table_is_still_validated_strictly(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\nfollow-calls = '3'\n")
    (tmp_path / "server.py").write_text(SERVER)

    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "."], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )

    assert done.returncode == 2
    assert "key 'follow-calls': expected a valid integer (got '3')" in done.stderr
