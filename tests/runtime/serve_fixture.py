"""Serve a framework fixture (``fixtures/frameworks/billing_<framework>.py``) on stdio or Streamable HTTP.

    python tests/runtime/serve_fixture.py FRAMEWORK stdio
    python tests/runtime/serve_fixture.py FRAMEWORK http PORT

FRAMEWORK: ``mcp1``, ``mcpserver``, ``fastmcp`` or ``lowlevel``; each served by the framework's own run
(``lowlevel``: ``lowlevel_billing_server.py``'s own stdio/HTTP entry point).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "frameworks"
MODULES = {"mcp1": "billing_mcp1", "mcpserver": "billing_mcpserver", "fastmcp": "billing_fastmcp"}


def run(framework: str, app: object, transport: str, port: int | None = None) -> None:
    """Serve ``app`` (an mcp 1.x ``FastMCP``, an ``MCPServer`` or a fastmcp server) with its framework's own run."""
    if transport == "stdio":
        app.run()  # type: ignore[attr-defined]
    elif framework == "fastmcp":
        app.run(transport="http", host="127.0.0.1", port=port, show_banner=False)  # type: ignore[attr-defined]
    elif framework == "mcp1":
        app.settings.port = port  # type: ignore[attr-defined]
        app.run(transport="streamable-http")  # type: ignore[attr-defined]
    else:
        app.run(transport="streamable-http", host="127.0.0.1", port=port)  # type: ignore[attr-defined]


def main() -> None:
    framework, transport = sys.argv[1], sys.argv[2]
    sys.path.insert(0, str(FIXTURES))
    if framework == "lowlevel":
        script = Path(__file__).with_name("lowlevel_billing_server.py")
        sys.argv = [str(script), *(["http", sys.argv[3]] if transport == "http" else [])]
        runpy.run_path(sys.argv[0], run_name="__main__")
        return
    run(framework, __import__(MODULES[framework]).app, transport, int(sys.argv[3]) if transport == "http" else None)


if __name__ == "__main__":
    main()
