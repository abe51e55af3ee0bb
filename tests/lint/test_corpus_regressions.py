"""Defects the corpus benchmark found on real servers (issue 19), each as the smallest project that
shows it. Each test failed before its fix."""

from __future__ import annotations

import textwrap

from harness import lint_sources

SESSION = """
    from mcp.server.fastmcp import FastMCP

    async def start_session(session_id: str) -> str:
        raise KeyError(session_id)

    async def stop_session(session_id: str) -> str:
        raise KeyError(session_id)
"""


def _dedented(sources: dict[str, str]) -> dict[str, str]:
    return {path: textwrap.dedent(text) for path, text in sources.items()}


def test_a_package_init_registering_its_submodules_functions_resolves_them():
    # awslabs amazon-bedrock-agentcore-mcp-server, tools/code_interpreter/__init__.py: the package's
    # ``__init__`` imports its submodules and registers their functions. ``session.start_session``
    # qualifies to ``pkg.session.start_session``, which starts with the package's own name, and was
    # taken for a function of ``__init__`` itself: FL190 "cannot be resolved", and no FL300.
    report = lint_sources(
        _dedented(
            {
                "pkg/__init__.py": """
            from . import session
            from .session import stop_session

            def register(mcp):
                mcp.tool()(session.start_session)
                mcp.tool()(stop_session)
        """,
                "pkg/session.py": SESSION,
            }
        )
    )
    found = sorted((d.code, d.path.rsplit("/", 1)[1], d.span.line) for d in report.diagnostics)
    assert found == [("FL300", "session.py", 5), ("FL300", "session.py", 8)]


def test_a_package_init_still_resolves_its_own_functions_and_instances():
    # The other side of the fix: a name defined in the ``__init__`` itself (a function, an
    # instance of its own class) stays this module's.
    report = lint_sources(
        _dedented(
            {
                "pkg/__init__.py": """
            from mcp.server.fastmcp import FastMCP

            mcp = FastMCP("demo")

            class Service:
                async def handle(self) -> str:
                    raise KeyError(self)

            service = Service()

            async def ping(host: str) -> str:
                raise KeyError(host)

            mcp.tool()(ping)
            mcp.tool()(service.handle)
        """,
            }
        )
    )
    found = sorted((d.code, d.span.line) for d in report.diagnostics)
    assert found == [("FL300", 8), ("FL300", 13)]


def _write(root, files: dict[str, str]) -> None:  # noqa: ANN001 (a pathlib.Path)
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_a_namespace_package_resolves_from_a_folder_above_its_project(tmp_path):
    # awslabs documentdb-mcp-server: ``awslabs/`` has no ``__init__.py`` (a PEP 420 namespace), and
    # ``server.py`` imports ``awslabs.documentdb_mcp_server.query_tools``. Linted from its project
    # folder this resolved; from the folder above (the whole corpus, a monorepo's root) or named
    # alone, ``awslabs.`` matched no import root and all 16 tools were FL190, their raises unseen.
    from fusion_lint.check.engine import Options, lint

    project = tmp_path / "monorepo" / "src" / "documentdb-mcp-server"
    _write(
        project,
        {
            "awslabs/documentdb_mcp_server/__init__.py": "",
            "awslabs/documentdb_mcp_server/query_tools.py": """
            async def find(collection: str) -> list:
                raise KeyError(collection)
        """,
            "awslabs/documentdb_mcp_server/server.py": """
            from awslabs.documentdb_mcp_server.query_tools import find
            from mcp.server.fastmcp import FastMCP

            mcp = FastMCP("documentdb")
            mcp.tool(name="find")(find)
        """,
        },
    )
    server = project / "awslabs/documentdb_mcp_server/server.py"
    for named in (tmp_path / "monorepo", project, server):
        report = lint(Options(paths=[str(named)], use_cache=False, jobs=1))
        found = sorted((d.code, d.path.rsplit("/", 1)[1]) for d in report.diagnostics)
        expected = [] if named == server else [("FL300", "query_tools.py")]  # named alone: its own file only
        assert found == expected, named
        assert report.definitions == {"tool": 1}


def test_a_nested_def_registered_by_a_call_in_its_function_is_the_handler():
    # The SDK's examples/stories: ``build_server()`` defines ``call_tool`` inside and returns
    # ``Server(..., on_call_tool=call_tool)``; another registers a nested ``search`` with
    # ``mcp.add_tool(search)``. The handler was looked up at module level only: FL190, body unseen.
    report = lint_sources(
        _dedented(
            {
                "stories.py": """
            from mcp.server.lowlevel import Server
            from mcp.server.mcpserver import MCPServer

            def build_server():
                async def call_tool(ctx, params):
                    raise KeyError(params.name)

                return Server("demo", on_call_tool=call_tool)

            def build_other():
                mcp = MCPServer("other")

                def search(query: str) -> list:
                    raise ValueError("no index")

                mcp.add_tool(search)
                return mcp

            class Registry:
                def search(self) -> str:
                    return "a method, not the nested def a bare name means"

                def register(self, mcp: MCPServer) -> None:
                    mcp.add_tool(search)  # a module-level ``search``: there is none
        """,
            }
        )
    )
    found = sorted((d.code, d.span.line) for d in report.diagnostics)
    assert found == [("FL190", 25), ("FL300", 7), ("FL300", 15)], found


def test_a_prompt_registered_by_a_bare_call_is_a_prompt():
    # awslabs aws-bedrock-custom-model-import-mcp-server, prompts.py: ``mcp.prompt(self.method)`` in
    # ``__init__(self, mcp: FastMCP)`` (fastmcp's bare form, as ``mcp.tool(self.method)`` beside it)
    # registered nothing: its six prompts went unchecked and the file was parsed for nothing.
    report = lint_sources(
        _dedented(
            {
                "prompts.py": """
            from fastmcp import FastMCP

            class Prompts:
                def __init__(self, mcp: FastMCP) -> None:
                    mcp.prompt(self.create_job)
                    mcp.prompt(name="jobs")(self.list_jobs)

                def create_job(self, template: str) -> str:
                    raise KeyError(template)

                def list_jobs(self) -> str:
                    return "List the jobs"
        """,
            }
        )
    )
    assert report.definitions == {"prompt": 2}
    assert sorted((d.code, d.span.line) for d in report.diagnostics) == [("FL300", 10)]


def test_a_checkout_root_with_an_init_is_no_package(tmp_path):
    # GongRzhe/Office-Word-MCP-Server has an ``__init__.py`` at its root. Linted from the folder above
    # (the corpus, a folder of checkouts), every module was named ``Office-Word-MCP-Server.word_...``,
    # so ``from word_document_server.tools import format_tools`` matched no import root: the
    # handlers' callees were never reached (their raises unseen, their files parsed for nothing).
    from fusion_lint.check.engine import Options, lint

    checkout = tmp_path / "corpus" / "Office-Word-MCP-Server"
    _write(
        checkout,
        {
            "__init__.py": "",
            "word_server/__init__.py": "",
            "word_server/format_tools.py": """
            def format_text(filename: str) -> str:
                raise KeyError(filename)
        """,
            "word_server/main.py": """
            from fastmcp import FastMCP
            from word_server import format_tools

            mcp = FastMCP("word")

            @mcp.tool()
            def format_text(filename: str) -> str:
                return format_tools.format_text(filename)
        """,
        },
    )
    for named in (tmp_path / "corpus", checkout):
        report = lint(Options(paths=[str(named)], use_cache=False, jobs=1))
        assert sorted((d.code, d.path.rsplit("/", 1)[1]) for d in report.diagnostics) == [("FL300", "format_tools.py")]


def test_files_loaded_on_demand_share_one_worker(tmp_path, monkeypatch):
    # On the corpus, each of the 198 files the index loads while it resolves (a handler's callees in
    # modules that import no framework) started a worker of its own: a fork of a parent holding the
    # whole run's facts, ~1 s a file on a busy machine, most of the run's time. They share one now.
    import fusion_lint.source.workers as workers
    from fusion_lint.check.engine import Options, lint

    helpers = {f"app/helper_{n}.py": f"def work_{n}(key):\n    raise KeyError(key)\n" for n in range(4)}
    calls = "\n".join(f"    helper_{n}.work_{n}(key)" for n in range(4))
    _write(
        tmp_path,
        {
            "app/__init__.py": "",
            **helpers,
            "app/server.py": "from mcp.server.fastmcp import FastMCP\n"
            + "".join(f"from app import helper_{n}\n" for n in range(4))
            + f"\nmcp = FastMCP('demo')\n\n@mcp.tool()\ndef run(key: str) -> None:\n{calls}\n",
        },
    )
    started = []
    start = workers.WorkerPool._start
    monkeypatch.setattr(workers.WorkerPool, "_start", lambda pool: started.append(pool) or start(pool))
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1))
    assert sorted(d.path.rsplit("/", 1)[1] for d in report.diagnostics) == sorted(p.rsplit("/", 1)[1] for p in helpers)
    assert len(started) <= 2, started  # the pre-scanned files' worker, then one for every load
