"""Recognition by qualified name (DESIGN §4): every import form of the runtime's definers and
factories is seen, whatever it is called at the call site; a same-named function from another
package is not.

Each case is observed through a rule whose firing proves the piece was recognised:
FL101 (``errors=[]``) proves a definition was found and named; FL205 (``ctx.fail`` without a
contract) proves the handler was linked to it; FL200 proves a factory's code was recognised.
"""

from __future__ import annotations

import pytest

EMPTY_TOOL_FORMS = {
    "from-import": """
        from mcp_fusion import tool
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "from-import-as": """
        from mcp_fusion import tool as t
        @t("search", errors=[])
        def search(query: str): ...
    """,
    "import-as-module-alias": """
        import mcp_fusion as mf
        @mf.tool("search", errors=[])
        def search(query: str): ...
    """,
    "import-module": """
        import mcp_fusion
        @mcp_fusion.tool("search", errors=[])
        def search(query: str): ...
    """,
    "import-submodule-dotted": """
        import mcp_fusion.definitions
        @mcp_fusion.definitions.tool("search", errors=[])
        def search(query: str): ...
    """,
    "from-submodule": """
        from mcp_fusion.definitions import tool
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "from-submodule-module": """
        from mcp_fusion import definitions as defs
        @defs.tool("search", errors=[])
        def search(query: str): ...
    """,
    "star-import": """
        from mcp_fusion import *
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "local-rebinding": """
        from mcp_fusion import tool
        t = tool
        @t("search", errors=[])
        def search(query: str): ...
    """,
    "rebinding-of-module-attribute": """
        import mcp_fusion as mf
        define = mf.tool
        @define("search", errors=[])
        def search(query: str): ...
    """,
    "import-inside-type-checking-guard": """
        import typing
        if typing.TYPE_CHECKING:
            pass
        else:
            from mcp_fusion import tool
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "name-by-keyword": """
        from mcp_fusion import tool
        @tool(name="search", errors=[])
        def search(query: str): ...
    """,
    "stacked-decorators-in-a-class": """
        from mcp_fusion import tool
        class Tools:
            @staticmethod
            @tool("search", errors=[])
            def search(query: str): ...
    """,
    "inside-a-server-factory-function": """
        from mcp_fusion import FusionServer, tool
        def build():
            @tool("search", errors=[])
            async def search(query: str): ...
            return FusionServer("demo", tools=[search])
    """,
    "inside-a-module-level-with-block": """
        import contextlib
        from mcp_fusion import tool
        with contextlib.suppress(ImportError):
            @tool("search", errors=[])
            def search(query: str): ...
    """,
    "call-form-module-level": """
        from mcp_fusion import tool
        def search(query: str): ...
        search_tool = tool("search", errors=[])(search)
    """,
    "call-form-bare-expression": """
        from mcp_fusion import tool
        def search(query: str): ...
        tool("search", errors=[])(search)
    """,
    "call-form-inside-server-builder": """
        from mcp_fusion import FusionServer, tool
        def search(query: str): ...
        def build_server():
            return FusionServer("demo", tools=[tool("search", errors=[])(search)])
    """,
    "call-form-in-a-list": """
        import mcp_fusion as mf
        def search(query: str): ...
        TOOLS = [mf.tool("search", errors=[])(search)]
    """,
}


@pytest.mark.parametrize("source", EMPTY_TOOL_FORMS.values(), ids=EMPTY_TOOL_FORMS.keys())
def test_tool_definition_is_recognised(lint_project, source: str) -> None:
    linted = lint_project({"app.py": source})
    found = linted.of("FL101")
    assert len(found) == 1, linted.summary()
    assert found[0].message.startswith("tool 'search':")


HANDLER_FORMS = {
    "decorated": """
        from mcp_fusion import tool
        @tool("search")
        def search(query: str, ctx):
            raise ctx.fail("no_match")
    """,
    "decorated-through-alias": """
        import mcp_fusion as mf
        @mf.tool("search")
        async def search(query: str, ctx: mf.Context):
            raise ctx.fail("no_match")
    """,
    "call-form-module-level": """
        from mcp_fusion import tool
        def search(query: str, ctx):
            raise ctx.fail("no_match")
        search_tool = tool("search")(search)
    """,
    "call-form-inside-function": """
        from mcp_fusion import FusionServer, tool
        def search(query: str, ctx):
            raise ctx.fail("no_match")
        def build_server():
            return FusionServer("demo", tools=[tool("search")(search)])
    """,
    "method-handler-in-class": """
        from mcp_fusion import tool
        class Tools:
            @tool("search")
            def search(self, query: str, ctx):
                raise ctx.fail("no_match")
    """,
}


@pytest.mark.parametrize("source", HANDLER_FORMS.values(), ids=HANDLER_FORMS.keys())
def test_handler_is_linked_to_its_definition(lint_project, source: str) -> None:
    linted = lint_project({"app.py": source})
    found = linted.of("FL205")
    assert len(found) == 1, linted.summary()
    assert found[0].message.startswith("tool 'search':")
    # Reported at the ctx.fail call inside the handler.
    assert "ctx.fail" in (linted.root / "app.py").read_text().splitlines()[found[0].span.line - 1]


def test_call_form_handler_imported_from_another_file(lint_project) -> None:
    linted = lint_project(
        {
            "pkg/__init__.py": "",
            "pkg/handlers.py": """
                def search(query: str, ctx):
                    raise ctx.fail("no_match")
            """,
            "pkg/server.py": """
                from mcp_fusion import tool
                from .handlers import search
                TOOLS = [tool("search")(search)]
            """,
        }
    )
    found = linted.of("FL205")
    assert [linted.relative(d) for d in found] == ["pkg/handlers.py"], linted.summary()
    assert found[0].span.line == 3


RESOURCE_AND_PROMPT_FORMS = {
    "resource-decorator": (
        """
        from mcp_fusion import resource
        @resource("invoice://{id}", errors=[])
        def invoice(id: str): ...
        """,
        "FL101",
        "resource 'invoice://{id}':",
    ),
    "resource-call-form": (
        """
        import mcp_fusion as mf
        def invoice(id: str): ...
        INVOICE = mf.resource("invoice://{id}", errors=[])(invoice)
        """,
        "FL101",
        "resource 'invoice://{id}':",
    ),
    "resource-uri-by-keyword": (
        """
        from mcp_fusion import resource
        @resource(uri_template="invoice://{id}", errors=[])
        def invoice(id: str): ...
        """,
        "FL101",
        "resource 'invoice://{id}':",
    ),
    "prompt-decorator": (
        """
        from mcp_fusion import prompt, ErrorContract, JsonRpcErrorCode
        @prompt("summarize", errors=[])
        def summarize(text: str) -> str: ...
        """,
        "FL117",
        "prompt 'summarize':",
    ),
    "prompt-call-form": (
        """
        from mcp_fusion.definitions import prompt as p
        def summarize(text: str) -> str: ...
        SUMMARIZE = p("summarize", errors=[])(summarize)
        """,
        "FL117",
        "prompt 'summarize':",
    ),
}


@pytest.mark.parametrize(
    ("source", "code", "prefix"), RESOURCE_AND_PROMPT_FORMS.values(), ids=RESOURCE_AND_PROMPT_FORMS.keys()
)
def test_resource_and_prompt_forms(lint_project, source: str, code: str, prefix: str) -> None:
    linted = lint_project({"app.py": source})
    found = linted.of(code)
    assert len(found) == 1, linted.summary()
    assert found[0].message.startswith(prefix)


def test_prompt_with_errors_is_not_also_a_contract(lint_project) -> None:
    # A prompt's errors= is FL117 only: the contract-shape rules do not run on it.
    linted = lint_project(
        {
            "app.py": """
                from mcp_fusion import prompt
                @prompt("summarize", errors=[{"reason": "Bad-Reason"}])
                def summarize(text: str) -> str: ...
            """
        }
    )
    assert linted.codes() == ["FL117"], linted.summary()


FACTORY_FORMS = {
    "from-errors-module": "from mcp_fusion.errors import not_found\n",
    "from-package": "from mcp_fusion import not_found\n",
    "from-package-as": "from mcp_fusion import not_found as missing\nnot_found = missing\n",
    "module-alias": "import mcp_fusion.errors as errors\nnot_found = errors.not_found\n",
}


@pytest.mark.parametrize("imports", FACTORY_FORMS.values(), ids=FACTORY_FORMS.keys())
def test_factory_is_recognised_by_qualified_name(lint_project, imports: str) -> None:
    source = imports + (
        "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode\n"
        "@tool('search', errors=[ErrorContract(reason='taken', code=JsonRpcErrorCode.CONFLICT, when='Taken',\n"
        "      recovery='Call search again with another query.')])\n"
        "def search(query: str, ctx):\n"
        "    raise not_found('nothing')\n"
    )
    linted = lint_project({"app.py": source}, dedent=False)
    found = linted.of("FL200")
    assert len(found) == 1, linted.summary()
    assert "NOT_FOUND" in found[0].message


def test_namespaced_factory_call(lint_project) -> None:
    linted = lint_project(
        {
            "app.py": """
                import mcp_fusion.errors as errors
                from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode
                @tool("search", errors=[ErrorContract(reason="taken", code=JsonRpcErrorCode.CONFLICT,
                      when="Taken", recovery="Call search again with another query.")])
                def search(query: str, ctx):
                    raise errors.not_found("nothing")
            """
        }
    )
    assert linted.lines("FL200") == [7], linted.summary()


def test_runtime_modules_config_recognises_a_vendored_copy(lint_project) -> None:
    files = {
        "app.py": """
            from vendored.fusion import tool
            @tool("search", errors=[])
            def search(query: str): ...
        """
    }
    assert lint_project(files, config='runtime-modules = ["vendored.fusion"]\n').codes() == ["FL101"]
    # The default runtime module is then not recognised any more...
    assert lint_project(files).codes() == []


def test_vendored_runtime_alongside_the_default(lint_project) -> None:
    linted = lint_project(
        {
            "a.py": "from vendored.fusion import tool\n@tool('a', errors=[])\ndef a(): ...\n",
            "b.py": "from mcp_fusion import tool\n@tool('b', errors=[])\ndef b(): ...\n",
        },
        config='runtime-modules = ["mcp_fusion", "vendored.fusion"]\n',
        dedent=False,
    )
    assert sorted(linted.relative(d) for d in linted.of("FL101")) == ["a.py", "b.py"]


NOT_THE_RUNTIME = {
    "other-package": """
        from somewhere_else import tool
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "other-package-mentioning-runtime-in-comment": """
        # not mcp_fusion: our own registry
        from registry import tool
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "prefix-named-package": """
        from mcp_fusion_extras import tool
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "local-function-named-tool": """
        import mcp_fusion
        def tool(name, errors=None):
            return lambda fn: fn
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "runtime-name-shadowed-by-local-def": """
        from mcp_fusion import tool
        def tool(name, errors=None):
            return lambda fn: fn
        @tool("search", errors=[])
        def search(query: str): ...
    """,
    "attribute-of-unrelated-object": """
        import mcp_fusion
        registry = object()
        @registry.tool("search", errors=[])
        def search(query: str): ...
    """,
}


@pytest.mark.parametrize("source", NOT_THE_RUNTIME.values(), ids=NOT_THE_RUNTIME.keys())
def test_same_named_function_from_elsewhere_is_not_recognised(lint_project, source: str) -> None:
    assert lint_project({"app.py": source}).codes() == []


def test_error_contract_and_codes_through_aliases(lint_project) -> None:
    linted = lint_project(
        {
            "app.py": """
                import mcp_fusion as mf
                from mcp_fusion import JsonRpcErrorCode as Codes
                @mf.tool("search", errors=[mf.ErrorContract(reason="NoMatch", code=Codes.NOPE,
                         when="Nothing", recovery="Call search again with another query.")])
                def search(query: str): ...
            """
        }
    )
    assert sorted(linted.codes()) == ["FL104", "FL107"], linted.summary()
