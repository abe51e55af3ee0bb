"""The corpus census (``bench/census.py``) on small synthetic units: every server and registration form it
claims to recognise, the names the frameworks would compute, and what it must not count.

The census is the ground truth the linter's recognition is measured against, so each form here is one
the corpus uses (see ``bench/corpus-survey.md``). Nothing here needs the corpus or any framework.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _census():
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("census", BENCH / "census.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


census = _census()


def make_corpus(root: Path, units: dict) -> Path:
    """``units``: unit name -> (folder, README tool count, {relative path: source})."""
    rows = ["| unit | folder | commit | framework (from imports) | pins | tools |", "|---|---|---|---|---|---|"]
    for unit, (folder, tools, files) in units.items():
        rows.append(f"| {unit} | {folder} | 0000 | test |  | {tools} |")
        for relative, source in files.items():
            path = root / folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
    (root / "README.md").write_text("# corpus\n\n" + "\n".join(rows) + "\n")
    return root


def run_one(tmp_path: Path, files: dict, folder: str = "owner+repo/.") -> dict:
    corpus = make_corpus(tmp_path, {"u": (folder, 0, files)})
    (result,) = census.run_census(corpus)
    return result


def names(result: dict, kind: str = "tool") -> list:
    return sorted(r["name"] for r in result["registrations"] if r["kind"] == kind)


def test_mcp1_forms_any_spelling_and_alias(tmp_path):
    result = run_one(
        tmp_path,
        {
            "server.py": """
        from mcp.server.fastmcp import FastMCP as F
        app = F("demo")

        @app.tool()
        def plain(): ...

        @app.tool(name="renamed")
        def b(): ...

        @app.tool("positional_name")
        def c(): ...

        def d(): ...
        app.tool(name="called")(d)

        def e(): ...
        app.add_tool(e, name="added")
        app.add_tool(e, "added_positionally")

        @app.resource("res://x")
        def res(): ...

        @app.prompt()
        def ask(): ...
    """
        },
    )
    assert names(result) == ["added", "added_positionally", "called", "plain", "positional_name", "renamed"]
    assert names(result, "resource") == ["res"]
    assert names(result, "prompt") == ["ask"]
    assert {r["framework"] for r in result["registrations"]} == {"mcp1-FastMCP"}
    forms = {r["name"]: r["form"] for r in result["registrations"]}
    assert forms["plain"] == "@tool()" and forms["called"] == "tool(name=)(fn)" and forms["added"] == "add_tool(fn)"


def test_mcp2_module_import_and_fastmcp_forms(tmp_path):
    result = run_one(
        tmp_path,
        {
            "two.py": """
            import mcp.server.mcpserver as ms
            server = ms.MCPServer("two")

            @server.tool()
            def two_tool(): ...
        """,
            "fast.py": """
            import fastmcp
            from fastmcp.tools import Tool

            mcp = fastmcp.FastMCP("fast", mask_error_details=True)

            @mcp.tool
            def bare(): ...

            def direct(): ...
            mcp.tool(direct)

            def made(): ...
            mcp.add_tool(Tool.from_function(made, name="from_function_name"))
        """,
        },
    )
    by_name = {r["name"]: r for r in result["registrations"]}
    assert by_name["two_tool"]["framework"] == "mcp2-MCPServer"
    assert {by_name[n]["framework"] for n in ("bare", "direct", "from_function_name")} == {"fastmcp"}
    assert by_name["bare"]["form"] == "@tool" and by_name["direct"]["form"] == "tool(fn)"
    assert by_name["from_function_name"]["form"] == "add_tool(Tool)"
    assert [s["mask_error_details"] for s in result["servers"] if s["name"] == "fast"] == [True]


def test_bare_decorator_on_mcp1_is_counted_with_the_runtime_error_noted(tmp_path):
    result = run_one(
        tmp_path,
        {
            "s.py": """
        from mcp.server.fastmcp import FastMCP
        mcp = FastMCP("x")

        @mcp.tool
        def oops(): ...
    """
        },
    )
    (registration,) = result["registrations"]
    assert registration["name"] == "oops" and "TypeError" in " ".join(registration["notes"])


def test_servers_in_other_files_subclasses_attributes_and_class_attributes(tmp_path):
    result = run_one(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
            from fastmcp import FastMCP

            class MyServer(FastMCP):
                def __init__(self):
                    super().__init__("mine")
                    self.tool(name="from_subclass")(self.handle)

                def handle(self): ...
        """,
            "pkg/app.py": """
            from mcp.server.fastmcp import FastMCP
            from pkg.base import MyServer

            server = MyServer()

            class Holder:
                shared = FastMCP("class-attr")

                def __init__(self):
                    self.mcp = FastMCP("attr")
                    self.mcp.tool()(self.on_attr)

                def on_attr(self): ...

            @Holder.shared.tool()
            def on_class_attr(): ...

            holder = Holder()
        """,
            "pkg/tools.py": """
            from pkg.app import server

            @server.tool()
            def imported_server(): ...
        """,
        },
    )
    by_name = {r["name"]: r for r in result["registrations"]}
    assert sorted(by_name) == ["from_subclass", "imported_server", "on_attr", "on_class_attr"]
    assert by_name["from_subclass"]["handler"] == "MyServer.handle"
    assert by_name["from_subclass"]["handler_form"] == "self.method"
    assert by_name["imported_server"]["framework"] == "fastmcp"


def test_annotated_and_unannotated_receivers(tmp_path):
    result = run_one(
        tmp_path,
        {
            "annotated.py": """
            from mcp.server.fastmcp import FastMCP

            def setup_tools(mcp: "FastMCP") -> None:
                @mcp.tool()
                def from_annotated(): ...
        """,
            "handlers.py": """
            import mcp.types  # any import from the mcp package makes receivers count

            class Handler:
                def register(self, mcp):
                    mcp.tool(name="from_unannotated")(self.run)

                def run(self): ...
        """,
            "unrelated.py": """
            class Registry:
                def tool(self, name=None):
                    return lambda f: f

            def wire(registry):
                registry.tool(name="not_a_tool")(print)
        """,
        },
    )
    by_name = {r["name"]: r for r in result["registrations"]}
    assert sorted(by_name) == ["from_annotated", "from_unannotated"]
    assert by_name["from_annotated"]["reached"] is False  # nothing calls setup_tools: read standalone


def test_helpers_loops_getattr_partial_and_decorators(tmp_path):
    result = run_one(
        tmp_path,
        {
            "tools/__init__.py": "",
            "tools/math.py": """
            __all__ = ["add", "sub"]
            def add(): ...
            def sub(): ...
        """,
            "server.py": """
            import functools
            from fastmcp import FastMCP
            from tools import math

            mcp = FastMCP("x")

            def audited_tool(server, name):
                def decorator(func):
                    @functools.wraps(func)
                    def wrapper(*args, **kwargs):
                        return func(*args, **kwargs)
                    server.tool(name=name)(wrapper)
                    return wrapper
                return decorator

            def first(): ...
            def second(): ...
            audited_tool(mcp, "audited_one")(first)
            audited_tool(mcp, "audited_two")(second)

            for module in (math,):
                for tool_name in module.__all__:
                    mcp.tool(getattr(module, tool_name))

            def looped_a(): ...
            def looped_b(): ...
            for fn in [looped_a, looped_b]:
                mcp.tool()(fn)

            def base(x, y): ...
            mcp.tool(name="partial_tool")(functools.partial(base, 1))

            def keeps_name(f):
                @functools.wraps(f)
                def inner(*a):
                    return f(*a)
                return inner

            def loses_name(f):
                def inner(*a):
                    return f(*a)
                return inner

            @mcp.tool()
            @keeps_name
            def decorated(): ...

            @mcp.tool()
            @loses_name
            def renamed_by_decorator(): ...

            def main():
                if True:
                    @mcp.tool()
                    def in_main(): ...

            if __name__ == "__main__":
                main()
        """,
        },
    )
    by_name = {r["name"]: r for r in result["registrations"]}
    assert sorted(by_name) == [
        "add",
        "audited_one",
        "audited_two",
        "decorated",
        "in_main",
        "inner",
        "looped_a",
        "looped_b",
        "partial_tool",
        "sub",
    ]
    assert by_name["audited_one"]["handler"] == "first" and by_name["audited_one"]["via"][0] == "audited_tool.decorator"
    assert by_name["add"]["loop"] and by_name["add"]["handler_file"].endswith("tools/math.py")
    assert by_name["partial_tool"]["handler"] == "base" and by_name["partial_tool"]["handler_form"].startswith(
        "partial"
    )
    assert by_name["decorated"]["decorators"] == ["keeps_name"]
    assert by_name["inner"]["handler"] == "renamed_by_decorator"  # the framework names it after the wrapper
    assert by_name["in_main"]["conditional"] and by_name["in_main"]["scope"] == "main"


def test_mount_prefix_and_one_definition_per_name(tmp_path):
    result = run_one(
        tmp_path,
        {
            "s.py": """
        from fastmcp import FastMCP
        weather = FastMCP("weather")
        main = FastMCP("main")

        @weather.tool()
        def forecast(): ...

        def make():
            @weather.tool(name="forecast")
            def forecast_again(): ...

        make()
        make()
        main.mount(weather, prefix="w")
    """
        },
    )
    (registration,) = [r for r in result["registrations"] if r["kind"] == "tool"]
    assert registration["name"] == "forecast" and registration["mounted_as"] == ["w_forecast"]
    assert any("registered again" in note for note in registration["notes"])


def test_lowlevel_servers_listed_tools_and_dispatchers(tmp_path):
    result = run_one(
        tmp_path,
        {
            "one.py": """
            from enum import Enum
            import mcp.types as types
            from mcp.server.lowlevel import Server

            class Names(str, Enum):
                STATUS = "git_status"

            async def serve():
                server = Server("git")

                @server.list_tools()
                async def list_tools():
                    return [types.Tool(name=Names.STATUS, inputSchema={}),
                            types.Tool(name="git_log", inputSchema={})]

                @server.call_tool()
                async def call_tool(name, arguments):
                    return []
        """,
            "two.py": """
            from mcp.server import Server
            import mcp_types

            TOOLS = [mcp_types.Tool(name=f"tool_{i}", input_schema={}) for i in range(1, 4)]

            async def handle_list(ctx, params):
                return mcp_types.ListToolsResult(tools=TOOLS)

            async def handle_call(ctx, params): ...

            app = Server("paged", on_list_tools=handle_list, on_call_tool=handle_call)
        """,
        },
    )
    assert names(result, "listed-tool") == ["git_log", "git_status", "tool_1", "tool_2", "tool_3"]
    dispatchers = {r["name"]: r["handler"] for r in result["registrations"] if r["kind"] == "dispatcher"}
    assert dispatchers == {"server 'git' call_tool": "serve.call_tool", "server 'paged' call_tool": "handle_call"}
    assert result["tools"] == 5 and result["dispatchers"] == 2


def test_clients_and_test_files_are_not_counted(tmp_path):
    result = run_one(
        tmp_path,
        {
            "client.py": """
            from fastmcp import Client

            async def use(client: Client):
                await client.call_tool("x", {})
        """,
            "tests/test_server.py": """
            from fastmcp import FastMCP
            mcp = FastMCP("test")

            @mcp.tool()
            def only_in_tests(): ...
        """,
        },
    )
    assert result["registrations"] == [] and result["test_files_skipped"] == 1


def test_missing_corpus_is_a_message_not_a_failure(tmp_path, capsys):
    assert census.main(["--corpus", str(tmp_path / "absent")]) == 0
    assert "absent" in capsys.readouterr().out


def test_json_and_table(tmp_path, capsys):
    corpus = make_corpus(
        tmp_path / "corpus",
        {
            "one/unit": (
                "o+r/.",
                2,
                {
                    "s.py": """
        from mcp.server.fastmcp import FastMCP
        mcp = FastMCP("x")

        @mcp.tool()
        def only(): ...
    """
                },
            )
        },
    )
    out = tmp_path / "census.json"
    assert census.main(["--corpus", str(corpus), "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "one/unit" in table and "1 *" in table  # 1 found, the README says 2: marked
    (unit,) = json.loads(out.read_text())["units"]
    (registration,) = unit["registrations"]
    for key in ("file", "line", "framework", "form", "name", "handler", "handler_file", "handler_line", "server"):
        assert registration[key] is not None, key
    assert unit["readme_tools"] == 2 and unit["tools"] == 1


def test_a_run_leaves_the_process_as_it_found_it(tmp_path):
    """The census raises the recursion limit and pauses the cyclic collector while it runs; both come back."""
    import gc

    limit, enabled = sys.getrecursionlimit(), gc.isenabled()
    run_one(tmp_path, {"s.py": "from fastmcp import FastMCP\nmcp = FastMCP('x')\n"})
    assert (sys.getrecursionlimit(), gc.isenabled()) == (limit, enabled)


def test_derived_lists_tool_objects_runners_versions_and_request_time(tmp_path):
    result = run_one(
        tmp_path,
        {
            "tools.py": """
            from mcp.server.fastmcp.tools import Tool

            def create(): ...
            def describe(): ...
            create_tool = Tool.from_function(fn=create, name="create_thing")
            describe_tool = Tool.from_function(fn=describe, name="describe_thing")
        """,
            "server.py": """
            import os
            import anyio
            from mcp.server.fastmcp import FastMCP
            from tools import create_tool, describe_tool

            all_tools = [create_tool, describe_tool]

            async def run_server():
                mcp = FastMCP("things")
                chosen = []
                for tool in all_tools:
                    if tool.name.startswith("describe"):
                        chosen.append(tool)
                    elif os.environ.get("WRITES"):
                        chosen.append(tool)
                for tool in chosen:
                    mcp.add_tool(tool.fn, tool.name, tool.description)

            def main():
                anyio.run(run_server)
        """,
            "pyproject.toml": '[project]\nname = "x"\nscripts = { things = "server:main" }\n',
            "two.py": """
            from mcp.server.mcpserver import MCPServer
            from mcp.server.mcpserver.resources import TextResource

            def build():
                mcp = MCPServer[dict]("typed")
                mcp.add_resource(TextResource(uri="note://a", name="a", text="a"))

                @mcp.tool()
                def add_note(text: str) -> str:
                    mcp.add_resource(TextResource(uri="note://b", name="b", text=text))
                    return "ok"
                return mcp, None

            server, _ = build()
        """,
            "versions.py": """
            from fastmcp import FastMCP
            from fastmcp.tools import tool

            mcp = FastMCP("v")

            @mcp.tool(version="1.0")
            def charge(): ...

            @mcp.tool(version="2.0")
            def charge(): ...  # noqa: F811

            @tool
            def discovered(): ...
        """,
        },
    )
    tools = {(r["name"], r.get("version")): r for r in result["registrations"] if r["kind"] == "tool"}
    assert sorted(tools) == [
        ("add_note", None),
        ("charge", "1.0"),
        ("charge", "2.0"),
        ("create_thing", None),
        ("describe_thing", None),
        ("discovered", None),
    ]
    assert tools[("create_thing", None)]["handler"] == "create" and tools[("create_thing", None)]["reached"]
    assert tools[("describe_thing", None)]["handler_file"].endswith("tools.py")
    assert tools[("discovered", None)]["form"].startswith("@tool (fastmcp")
    resources = {r["uri"]: r for r in result["registrations"] if r["kind"] == "resource"}
    assert sorted(resources) == ["note://a", "note://b"]
    assert resources["note://b"]["request_time"] and not resources["note://a"]["request_time"]
    assert {r["framework"] for r in resources.values()} == {"mcp2-MCPServer"}
