"""Importing mcp_fusion never loads (or needs) the MCP SDK; only serving does (DESIGN §3.7)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from runtime_testing import REPO_ROOT

PURE_MODULES = [
    "mcp_fusion",
    "mcp_fusion.errors",
    "mcp_fusion.contract",
    "mcp_fusion.context",
    "mcp_fusion.definitions",
    "mcp_fusion.envelope",
    "mcp_fusion.validation",
    "mcp_fusion.bounding",
    "mcp_fusion.lockfile",
    "mcp_fusion.builder",
    "mcp_fusion.boundary",
    "mcp_fusion.wire",
    "mcp_fusion.client",
]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60
    )


def test_import_does_not_load_the_sdk() -> None:
    completed = run_python(
        f"""
        import importlib, sys
        for name in {PURE_MODULES!r}:
            importlib.import_module(name)
        from mcp_fusion import tool, resource, prompt, ErrorContract, JsonRpcErrorCode, Context, tool_error
        loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'anyio'))
        assert 'mcp' not in sys.modules, loaded
        assert not loaded, loaded
        print('ok')
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


def test_import_works_when_the_sdk_is_not_installed() -> None:
    # A None entry in sys.modules makes `import mcp` raise ImportError, as if it were not installed.
    completed = run_python(
        """
        import sys
        for blocked in ('mcp', 'mcp_types', 'anyio'):
            sys.modules[blocked] = None
        import mcp_fusion
        from mcp_fusion import tool, Context, ErrorContract, JsonRpcErrorCode

        @tool("ping", errors=[{"reason": "down", "code": JsonRpcErrorCode.TIMEOUT,
                               "when": "w", "recovery": "Call ping again in a minute."}])
        def ping(ctx: Context) -> str:
            return "pong"

        assert ping.context().fail("down").code is JsonRpcErrorCode.TIMEOUT
        try:
            mcp_fusion.FusionServer
        except ImportError as exc:
            print(exc)
            assert exc.__cause__ is None and exc.__suppress_context__
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == (
        "FusionServer needs the MCP SDK ('anyio' is not installed): pip install \"fusion-lint[server]\""
    )


def test_a_missing_server_extra_is_one_line_naming_it() -> None:
    # A user script importing FusionServer without the extra: the error is that one line, not the SDK's chain.
    completed = run_python(
        """
        import sys
        sys.modules['anyio'] = None
        from mcp_fusion import FusionServer
        """
    )
    assert completed.returncode == 1
    last_line = completed.stderr.strip().splitlines()[-1]
    assert last_line == (
        "ImportError: FusionServer needs the MCP SDK ('anyio' is not installed): pip install \"fusion-lint[server]\""
    )
    assert "During handling of the above exception" not in completed.stderr


def test_fusion_server_is_exported_lazily() -> None:
    completed = run_python(
        """
        import sys, mcp_fusion
        assert 'mcp' not in sys.modules
        from mcp_fusion import FusionServer
        assert 'mcp' in sys.modules
        assert FusionServer.__module__ == 'mcp_fusion.server'
        print('ok')
        """
    )
    assert completed.returncode == 0, completed.stderr
