"""What each framework sends the model when a tool raises: measured, not assumed (DESIGN §12.2).

    python bench/framework_messages.py /tmp/fw-venvs              # every framework below
    python bench/framework_messages.py /tmp/fw-venvs --only mcp1 --json out.json

For each framework it makes a venv under the directory given (never the repository's environment),
installs the framework from PyPI, and runs a probe in that venv: a server with three tools — one raising
``ValueError("secret host db1.internal")``, one the framework's ``ToolError("x")``, one the SDK's
``McpError``/``MCPError`` — called through the framework's in-memory client, once as constructed by
default and once with ``mask_error_details=True`` where the constructor takes it. It prints (and writes
with ``--json``) exactly what the client saw: ``is_error``, the content text, or the error the client
raised (a JSON-RPC error: code and message). Existing venvs are reused.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

# name -> (pip requirements, probe kind)
# The floors are the corpus's own pins: awslabs' mcp[cli]>=1.23.0, chroma's mcp[cli]>=1.2.1 (the oldest
# FastMCP pin; it imports a pydantic internal that 2.11 removed, hence the cap), qdrant's fastmcp==2.7.0.
FRAMEWORKS = {
    "mcp1": (["mcp<2"], "mcp1"),
    "mcp1.23": (["mcp==1.23.0"], "mcp1"),
    "mcp1.2": (["mcp==1.2.1", "pydantic>=2.10,<2.11"], "mcp1"),
    "mcp2": (["mcp>=2,<3"], "mcp2"),
    "fastmcp2": (["fastmcp<3"], "fastmcp"),
    "fastmcp2.7": (["fastmcp==2.7.0", "mcp>=1.9,<1.10", "pydantic>=2.10,<2.11"], "fastmcp"),  # of its day
    "fastmcp3": (["fastmcp>=3,<4"], "fastmcp"),
    "fastmcp4": (["fastmcp>=4,<5"], "fastmcp"),
}

PROBE = textwrap.dedent("""
    import asyncio, json, sys, traceback
    from importlib.metadata import version, PackageNotFoundError

    KIND = sys.argv[1]
    SECRET = "secret host db1.internal"

    def versions():
        out = {}
        for dist in ("mcp", "fastmcp"):
            try:
                out[dist] = version(dist)
            except PackageNotFoundError:
                pass
        return out

    def describe_result(result):
        is_error = getattr(result, "is_error", None)
        if is_error is None:
            is_error = getattr(result, "isError", None)
        texts = [getattr(c, "text", repr(c)) for c in (getattr(result, "content", None) or [])]
        structured = getattr(result, "structured_content", None)
        if structured is None:
            structured = getattr(result, "structuredContent", None)
        return {"is_error": is_error, "content": texts, "structured": structured}

    def describe_exception(error):
        data = getattr(error, "error", None)
        out = {"raised": type(error).__module__ + "." + type(error).__name__, "str": str(error)}
        if data is not None:
            out["code"] = getattr(data, "code", None)
            out["message"] = getattr(data, "message", None)
        return out

    # -- servers -------------------------------------------------------------------------------

    def build(mask):
        if KIND == "mcp1":
            from mcp.server.fastmcp import FastMCP
            from mcp.server.fastmcp.exceptions import ToolError
            from mcp.shared.exceptions import McpError
            from mcp.types import ErrorData
            kwargs = {"mask_error_details": True} if mask else {}
            server = FastMCP("probe", **kwargs)
            protocol_error = lambda: McpError(ErrorData(code=-32001, message="y"))
        elif KIND == "mcp2":
            from mcp.server.mcpserver import MCPServer
            from mcp.server.mcpserver.exceptions import ToolError
            try:
                from mcp.shared.exceptions import MCPError as ProtocolError
            except ImportError:
                from mcp import MCPError as ProtocolError
            kwargs = {"mask_error_details": True} if mask else {}
            server = MCPServer("probe", **kwargs)
            def protocol_error():
                try:
                    return ProtocolError(code=-32001, message="y")
                except TypeError:
                    from mcp_types import ErrorData
                    return ProtocolError(ErrorData(code=-32001, message="y"))
        else:
            from fastmcp import FastMCP
            from fastmcp.exceptions import ToolError
            try:
                from mcp.shared.exceptions import McpError as ProtocolError
                from mcp.types import ErrorData
                protocol_error = lambda: ProtocolError(ErrorData(code=-32001, message="y"))
            except ImportError:
                from mcp.shared.exceptions import MCPError as ProtocolError
                protocol_error = lambda: ProtocolError(code=-32001, message="y")
            kwargs = {"mask_error_details": True} if mask else {}
            server = FastMCP("probe", **kwargs)

        @server.tool()
        def leak() -> str:
            raise ValueError(SECRET)

        @server.tool()
        def tool_error() -> str:
            raise ToolError("x")

        @server.tool()
        def mcp_error() -> str:
            raise protocol_error()

        made = protocol_error()
        server.probe_classes = {"ToolError": ToolError.__module__ + "." + ToolError.__name__,
                                "protocol error": type(made).__module__ + "." + type(made).__name__}
        return server

    # -- clients -------------------------------------------------------------------------------

    async def call_all(server):
        out = {}
        if KIND == "mcp1":
            from mcp.shared.memory import create_connected_server_and_client_session
            async with create_connected_server_and_client_session(server._mcp_server) as client:
                for name in ("leak", "tool_error", "mcp_error"):
                    try:
                        out[name] = describe_result(await client.call_tool(name, {}))
                    except Exception as error:
                        out[name] = describe_exception(error)
        elif KIND == "mcp2":
            from mcp import Client
            async with Client(server) as client:
                for name in ("leak", "tool_error", "mcp_error"):
                    try:
                        out[name] = describe_result(await client.call_tool(name, {}))
                    except Exception as error:
                        out[name] = describe_exception(error)
        else:
            from fastmcp import Client
            async with Client(server) as client:
                for name in ("leak", "tool_error", "mcp_error"):
                    try:
                        if hasattr(client, "call_tool_mcp"):
                            result = await client.call_tool_mcp(name, {})
                        else:
                            result = await client.call_tool(name, {}, raise_on_error=False)
                        out[name] = describe_result(result)
                    except Exception as error:
                        out[name] = describe_exception(error)
        return out

    async def main():
        report = {"versions": versions(), "python": sys.version.split()[0]}
        for label, mask in (("default", False), ("mask_error_details=True", True)):
            try:
                server = build(mask)
            except TypeError as error:
                if "mask_error_details" not in str(error):
                    raise
                report[label] = {"constructor": f"rejected: {error}"}
                continue
            report[label] = await call_all(server)
            report["classes"] = server.probe_classes
        print(json.dumps(report))

    asyncio.run(main())
""")


def ensure_venv(root: Path, name: str, requirements: list, python: str) -> Path:
    target = root / name
    python_bin = target / "bin" / "python"
    marker = target / ".installed"
    wanted = " ".join(requirements)
    if marker.is_file() and marker.read_text() == wanted:
        return python_bin
    if not python_bin.exists():
        if python == sys.executable:
            venv.EnvBuilder(with_pip=True).create(target)
        else:
            subprocess.run([python, "-m", "venv", str(target)], check=True)
    subprocess.run(
        [str(python_bin), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    marker.write_text(wanted)
    return python_bin


def probe(python_bin: Path, kind: str, root: Path) -> dict:
    script = root / "probe.py"
    script.write_text(PROBE)
    completed = subprocess.run(
        [str(python_bin), str(script), kind], capture_output=True, text=True, timeout=300, cwd=str(root)
    )
    if completed.returncode != 0:
        return {"probe_failed": completed.stderr.strip().splitlines()[-5:]}
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", help="where the venvs go (a temporary directory, never the repository)")
    parser.add_argument("--only", action="append", choices=sorted(FRAMEWORKS), help="only these frameworks")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the venvs")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    args = parser.parse_args(argv)
    root = Path(args.workdir).resolve()
    repo = Path(__file__).resolve().parents[1]
    if root == repo or repo in root.parents:
        parser.error("the venvs must live outside the repository")
    root.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in args.only or FRAMEWORKS:
        requirements, kind = FRAMEWORKS[name]
        try:
            python_bin = ensure_venv(root, name, requirements, args.python)
        except subprocess.CalledProcessError as error:
            results[name] = {"install_failed": f"{' '.join(requirements)}: exit {error.returncode}"}
            print(f"{name}: install failed ({' '.join(requirements)})")
            continue
        results[name] = probe(python_bin, kind, root)
        print(
            f"== {name} ({' '.join(requirements)}): {json.dumps(results[name].get('versions'))} "
            f"raising {json.dumps(results[name].get('classes'))}"
        )
        for label in ("default", "mask_error_details=True"):
            seen = results[name].get(label)
            if seen is None:
                continue
            print(f"  {label}:")
            if "constructor" in seen:
                print(f"    {seen['constructor']}")
                continue
            for tool, what in seen.items():
                print(f"    {tool}: {json.dumps(what, ensure_ascii=False)}")
        if "probe_failed" in results[name]:
            print("  probe failed:", *results[name]["probe_failed"], sep="\n    ")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
