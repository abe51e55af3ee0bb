"""Resolution rules of DESIGN §12.3, second half: raise forms, scope in callees, the depth of
``follow-calls``, prompts, recovery text, closed-then-open codes, multi-code ``noqa``, ``src/``
layouts and FL000's line. Each point has a case that fires and one that stays silent.
"""

from __future__ import annotations

import pytest
from test_resolution import app, found, line, lines

from fusion_lint.config.settings import Settings

# ----- raise forms -----------------------------------------------------------------------------------


def test_both_branches_of_a_conditional_raise_count() -> None:
    source = app("""
        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise (not_found("gone") if invoice_id else forbidden("no"))

        @tool("find_invoice", errors=ENTRIES)
        async def find_invoice(invoice_id: str, ctx: Context):
            raise (ctx.fail("no_match") if invoice_id else ctx.fail("no_match", "again"))
    """)
    results = found(source, "FL200", "FL201", "FL202")
    where = line(source, "raise (not_found")
    assert sorted(lines(results)) == [("FL200", "app.py", where), ("FL201", "app.py", where)]


def test_a_raise_of_a_computed_exception_is_not_guessed() -> None:
    source = app("""
        FACTORIES = {"gone": not_found, "no": forbidden}

        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise FACTORIES[invoice_id]("x")
    """)
    assert found(source, "FL200", "FL201", "FL300") == []


@pytest.mark.parametrize(("cause", "expected"), [("", ["FL302"]), (" from None", []), (" from e", [])])
def test_from_none_is_an_explicit_decision(cause: str, expected: list[str]) -> None:
    source = app(f"""
        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            try:
                pass
            except KeyError as e:
                raise ctx.fail("no_match"){cause}
    """)
    assert [code for code, *_ in found(source, "FL302")] == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("-32001", "not_found("),
        ('"NOT_FOUND"', "not_found("),
        ("JsonRpcErrorCode(-32005)", "forbidden("),
        ("-32099", None),
        ('"SERVER_BUSY"', None),
    ],
)
def test_mcperror_with_any_spelling_of_a_code_that_has_a_factory_is_fl301(code: str, expected: str | None) -> None:
    source = app(f"""
        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise McpError({code}, "No invoice")
    """)
    results = found(source, "FL301")
    assert [expected in message for *_, message in results] == ([True] if expected else [])


@pytest.mark.parametrize(
    ("data", "fires"),
    [
        ('{"trace": traceback.format_exc()}', True),
        ('{"raw": json.dumps(payload)}', True),
        ('{"invoice_id": invoice_id}', False),
    ],
)
def test_dumps_and_tracebacks_in_data_are_fl303(data: str, fires: bool) -> None:
    source = app(f"""
        import json, traceback

        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context, payload: dict):
            try:
                pass
            except KeyError as e:
                raise ctx.fail("no_match", data={data}) from e
    """)
    results = found(source, "FL303")
    assert len(results) == int(fires) and all("raised data holds" in message for *_, message in results)


def test_a_repr_conversion_of_the_caught_error_counts_as_repr() -> None:
    source = app("""
        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            try:
                pass
            except KeyError as e:
                raise ctx.fail("no_match", f"lookup failed: {e!r}") from e
    """)
    [(_, _, _, message)] = found(source, "FL303")
    assert "{e!r}" in message
    assert found({"app.py": source["app.py"].replace("{e!r}", "{invoice_id!r}")}, "FL303") == []


# ----- scope in callees ------------------------------------------------------------------------------

SHARED_HELPER = """
    def lookup(invoice_id: str, ctx: Context):
        raise ctx.fail("gone")

    @tool("get_invoice", errors=ENTRIES)
    async def get_invoice(invoice_id: str, ctx: Context):
        return lookup(invoice_id, ctx)

    @tool("find_invoice", errors=ENTRIES)
    async def find_invoice(invoice_id: str, ctx: Context):
        return lookup(invoice_id, ctx)

    @tool("void_invoice", errors=[ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="Gone",
                                                recovery="Call get_invoice again with a real invoice id.")])
    async def void_invoice(invoice_id: str, ctx: Context):
        return lookup(invoice_id, ctx)
"""


def test_fl203_in_a_callee_is_checked_against_each_reaching_contract_once() -> None:
    source = app(SHARED_HELPER)
    [(code, path, where, message)] = found(source, "FL203")
    assert (code, where) == ("FL203", line(source, 'raise ctx.fail("gone")'))
    # One diagnostic naming the two tools whose contract lacks it; void_invoice declares it.
    assert message.startswith("tool 'get_invoice', tool 'find_invoice': ctx.fail('gone') names a reason")
    assert "void_invoice" not in message


def test_fl203_in_a_callee_is_silent_when_every_reaching_contract_declares_it() -> None:
    source = app(SHARED_HELPER.replace('raise ctx.fail("gone")', 'raise ctx.fail("no_match")'))
    [(_, _, _, message)] = found(source, "FL203")  # only void_invoice lacks no_match
    assert message.startswith("tool 'void_invoice': ctx.fail('no_match') names a reason the contract does not")
    declaring = app(SHARED_HELPER.replace('"gone"', '"no_match"').split('@tool("void_invoice"')[0])
    assert found(declaring, "FL203") == []


def test_a_stored_context_names_its_reasons_in_called_methods() -> None:
    source = app("""
        class Lookup:
            def __init__(self, ctx: Context):
                self.ctx = ctx

            def find(self, invoice_id: str):
                if invoice_id:
                    raise self.ctx.fail("no_match")
                self.ctx.fail("no_match")

        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            lookup = Lookup(ctx)
            return lookup.find(invoice_id)
    """)
    # 'no_match' is named (no FL202); the discarded one is FL204, as for ctx.fail itself.
    assert lines(found(source, "FL202", "FL203", "FL204")) == [
        ("FL204", "app.py", line(source, "        self.ctx.fail"))
    ]


def test_an_attribute_that_is_no_stored_context_is_an_ordinary_call() -> None:
    source = app("""
        class Lookup:
            def __init__(self, client):
                self.client = client

            def find(self, invoice_id: str):
                raise self.client.fail("whatever")

        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            return Lookup(None).find(invoice_id)
    """)
    assert found(source, "FL203", "FL204", "FL205") == []


# ----- prompts get the handler-body rules --------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [('raise ValueError("bad")', "FL300"), ('raise McpError(JsonRpcErrorCode.NOT_FOUND, "gone")', "FL301")],
)
def test_prompts_get_the_handler_body_rules(body: str, code: str) -> None:
    source = app(f"""
        @prompt("summarise")
        async def summarise(topic: str):
            {body}
    """)
    assert [c for c, *_ in found(source, "FL300", "FL301")] == [code]


def test_prompt_handler_rules_fire_only_on_what_they_name() -> None:
    source = app("""
        @prompt("summarise")
        async def summarise(topic: str):
            try:
                pass
            except KeyError as e:
                raise not_found("gone") from e
    """)
    assert found(source, "FL300", "FL301", "FL302", "FL303") == []
    uncaused = {"app.py": source["app.py"].replace(" from e", "")}
    assert [c for c, *_ in found(uncaused, "FL302")] == ["FL302"]


# ----- depth: the handler's direct callee is depth 1 ---------------------------------------------------

CHAIN = """
    def level1():
        level2()

    def level2():
        level3()

    def level3():
        raise forbidden("three deep")

    @tool("get_invoice", errors=ENTRIES)
    async def get_invoice(invoice_id: str, ctx: Context):
        level1()
"""


@pytest.mark.parametrize(("depth", "fires"), [(3, True), (2, False), (None, True)])
def test_follow_calls_counts_the_direct_callee_as_depth_one(depth: int | None, fires: bool) -> None:
    settings = Settings(follow_calls=depth) if depth is not None else None  # None: the default, 3
    results = found(app(CHAIN), "FL200", settings=settings)
    assert len(results) == int(fires)


def test_follow_calls_one_sees_the_direct_callee_only() -> None:
    source = app(CHAIN.replace("level2()\n", 'raise forbidden("one deep")\n', 1))
    results = found(source, "FL200", settings=Settings(follow_calls=1))
    assert lines(results) == [("FL200", "app.py", line(source, 'raise forbidden("one deep")'))]
    assert found(source, "FL200", settings=Settings(follow_calls=0)) == []
