"""Resolution rules of DESIGN §12.3, first half: handlers and what they reach, reasons, fields,
contracts and codes. Each point has a case that fires and one that stays silent.

Projects are in memory (``harness.lint_sources``); ``found`` gives (code, file, line, message).
"""

from __future__ import annotations

import textwrap

import pytest
from harness import lint_sources

from fusion_lint.config.settings import Settings

IMPORTS = (
    "import functools\n"
    "from mcp_fusion import tool, prompt, ErrorContract, JsonRpcErrorCode, Context, McpError, forbidden, not_found\n"
)
NO_MATCH = (
    'ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",\n'
    '              recovery="Call get_invoice again with a real invoice id.")'
)
ENTRIES = f"ENTRIES = [{NO_MATCH}]\n"


def found(files: dict[str, str], *codes: str, settings: Settings | None = None) -> list[tuple[str, str, int, str]]:
    """(code, file, line, message) of every diagnostic of ``codes`` (all when none are given)."""
    report = lint_sources({path: textwrap.dedent(text) for path, text in files.items()}, settings=settings)
    return [
        (d.code, d.path.rpartition("/project/")[2], d.span.line, d.message)
        for d in report.diagnostics
        if not codes or d.code in codes
    ]


def app(body: str) -> dict[str, str]:
    return {"app.py": IMPORTS + ENTRIES + textwrap.dedent(body)}


def lines(results: list[tuple[str, str, int, str]]) -> list[tuple[str, str, int]]:
    return [(code, path, line) for code, path, line, _ in results]


def line(files: dict[str, str], fragment: str, path: str = "app.py") -> int:
    """The line of ``path`` where ``fragment`` first appears."""
    text = textwrap.dedent(files[path]) if path != "app.py" else files[path]
    return text[: text.index(fragment)].count("\n") + 1


# ----- the handler: bound methods, partials, self.method -----------------------------------------


@pytest.mark.parametrize("declared", [False, True], ids=["undeclared", "declared"])
def test_a_bound_method_of_a_module_level_instance_is_the_handler(declared: bool) -> None:
    raised = "not_found" if declared else "forbidden"
    source = app(f"""
        class Billing:
            def get_invoice(self, invoice_id: str, ctx: Context):
                raise {raised}("no")

        billing = Billing()
        tool("get_invoice", errors=ENTRIES)(billing.get_invoice)
    """)
    results = found(source, "FL200", "FL190")
    assert lines(results) == ([] if declared else [("FL200", "app.py", line(source, "raise forbidden"))])


@pytest.mark.parametrize("spelling", ["functools.partial", "partial"])
def test_a_partial_is_its_function(spelling: str) -> None:
    source = app(f"""
        from functools import partial

        def lookup(invoice_id: str, ctx: Context, region: str):
            raise forbidden("no")

        def fine(invoice_id: str, ctx: Context, region: str):
            raise ctx.fail("no_match")

        tool("get_invoice", errors=ENTRIES)({spelling}(lookup, region="eu"))
        tool("find_invoice", errors=ENTRIES)({spelling}(fine, region="eu"))
    """)
    assert lines(found(source, "FL200", "FL190", "FL202")) == [("FL200", "app.py", line(source, "raise forbidden"))]


def test_self_method_registered_in_a_method_is_the_method() -> None:
    source = app("""
        class Tools:
            def register(self):
                tool("get_invoice", errors=ENTRIES)(self.get_invoice)
                tool("find_invoice", errors=ENTRIES)(self.find_invoice)

            def get_invoice(self, invoice_id: str, ctx: Context):
                raise forbidden("no")

            def find_invoice(self, invoice_id: str, ctx: Context):
                raise ctx.fail("no_match")
    """)
    assert lines(found(source, "FL200", "FL190", "FL202")) == [("FL200", "app.py", line(source, "raise forbidden"))]


@pytest.mark.parametrize(
    ("handler", "named"),
    [
        ("make_handler()", "a call to make_handler()"),
        ("lambda invoice_id: None", "a lambda"),
        ("service.handle", "'service.handle'"),
        ("thirdparty.handle", "'thirdparty.handle'"),
    ],
)
def test_a_handler_that_cannot_be_resolved_is_fl190_naming_it(handler: str, named: str) -> None:
    source = app(f"""
        import thirdparty
        service = make_service()
        tool("get_invoice", errors=ENTRIES)({handler})
    """)
    [(code, path, line_, message)] = found(source, "FL190")
    assert (code, line_) == ("FL190", line(source, 'tool("get_invoice"'))
    assert f"the handler ({named}) cannot be resolved" in message and "FL2xx, FL3xx" in message


def test_a_resolvable_handler_is_no_fl190() -> None:
    source = app("""
        async def get_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail("no_match")
        tool("get_invoice", errors=ENTRIES)(get_invoice)
    """)
    assert found(source, "FL190") == []


# ----- methods through the class and its bases ---------------------------------------------------

BASE_FILE = """
from mcp_fusion import forbidden, not_found

class HttpRepo:
    def fetch(self, key):
        raise not_found("gone", {"reason": "no_match"})

    def delete(self, key):
        raise forbidden("no")
"""


def test_an_inherited_method_in_another_file_is_followed() -> None:
    files = {
        "repo.py": BASE_FILE,
        **app("""
            from repo import HttpRepo

            class GeneRepo(HttpRepo):
                pass

            genes = GeneRepo()

            @tool("get_gene", errors=[ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND,
                                                    when="No gene", recovery="Call get_gene with a real gene id.",
                                                    thrown_by="service")])
            async def get_gene(gene_id: str, ctx: Context):
                return genes.fetch(gene_id)

            @tool("drop_gene", errors=ENTRIES)
            async def drop_gene(gene_id: str, ctx: Context):
                if not gene_id:
                    raise ctx.fail("no_match")
                return genes.delete(gene_id)
        """),
    }
    results = found(files, "FL200", "FL202", "FL207", "FL206")
    # The reason raised in the base class is seen (no FL202/FL207); its undeclared code is FL200.
    assert lines(results) == [("FL200", "repo.py", 9)]
    assert results[0][3].startswith("tool 'drop_gene': raises FORBIDDEN")


def test_self_calls_follow_the_mro_not_the_first_base_depth_first() -> None:
    # D(B, C) with B(A), C(A): D.check is C.check (C3), never A.check.
    source = app("""
        class A:
            def check(self):
                raise forbidden("from A")

        class B(A):
            pass

        class C(A):
            def check(self):
                raise not_found("from C")

        class D(B, C):
            async def get_invoice(self, invoice_id: str, ctx: Context):
                self.check()

        d = D()
        tool("get_invoice", errors=ENTRIES)(d.get_invoice)
    """)
    assert lines(found(source, "FL200")) == []
    source_b = source["app.py"].replace(
        "class B(A):\n    pass", "class B(A):\n    def check(self):\n        raise forbidden('from B')"
    )
    assert lines(found({"app.py": source_b}, "FL200")) == [
        ("FL200", "app.py", line({"app.py": source_b}, "raise forbidden('from B')"))
    ]


# ----- reasons and fields: constants, enum members ------------------------------------------------


def test_reasons_as_module_constants_and_enum_members_resolve() -> None:
    files = {
        "reasons.py": """
            from enum import Enum, StrEnum

            class Reason(StrEnum):
                NO_MATCH = "no_match"
                LOCKED = "locked"

            class Plain(Enum):
                GONE = "gone"
        """,
        **app("""
            from reasons import Plain, Reason
            NO_MATCH = "no_match"
            WHEN = "The invoice is locked"

            @tool("get_invoice", errors=[
                ErrorContract(reason=Reason.NO_MATCH, code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                              recovery="Call get_invoice again with a real invoice id."),
                ErrorContract(reason=Reason.LOCKED.value, code=JsonRpcErrorCode.CONFLICT, when=WHEN,
                              recovery="Wait a minute, then call get_invoice again."),
            ])
            async def get_invoice(invoice_id: str, ctx: Context):
                if invoice_id:
                    raise ctx.fail(NO_MATCH)
                raise ctx.fail(Reason.LOCKED)

            @tool("find_invoice", errors=[
                ErrorContract(reason=Plain.GONE, code=JsonRpcErrorCode.NOT_FOUND, when="Gone",
                              recovery="Call get_invoice again with a real invoice id."),
            ])
            async def find_invoice(invoice_id: str, ctx: Context):
                raise ctx.fail(Reason.NO_MATCH)
        """),
    }
    results = found(files, "FL190", "FL106", "FL202", "FL203")
    # get_invoice: every reason is known and raised; find_invoice: a plain Enum member is no string
    # (FL106, whose entry then declares nothing), so Reason.NO_MATCH ("no_match") is undeclared.
    assert lines(results) == [
        ("FL106", "app.py", line(files, "Plain.GONE")),
        ("FL203", "app.py", line(files, "raise ctx.fail(Reason.NO_MATCH)")),
    ]
    assert "Plain.GONE, an Enum member that is not a string (write Plain.GONE.value)" in results[0][3]
    assert "ctx.fail('no_match')" in results[1][3]


def test_a_reason_constant_that_is_computed_stays_fl190() -> None:
    source = app("""
        REASON = compute_reason()

        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail(REASON)
    """)
    assert [code for code, *_ in found(source, "FL190", "FL203")] == ["FL190"]


# ----- contracts: class attributes, A + B, names bound to one entry --------------------------------


def test_contracts_as_class_attributes_concatenations_and_named_entries_resolve() -> None:
    source = app("""
        LOCKED = ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="Locked",
                               recovery="Wait a minute, then call get_invoice again.")
        MORE = [LOCKED]

        class Errors:
            GONE = ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="Gone",
                                 recovery="Call get_invoice again with a real invoice id.")
            ALL = [GONE, LOCKED]

        class Tools:
            ERRORS = ENTRIES + MORE

            @tool("get_invoice", errors=ERRORS)
            async def get_invoice(self, invoice_id: str, ctx: Context):
                if invoice_id:
                    raise ctx.fail("no_match")
                raise ctx.fail("locked")

        @tool("find_invoice", errors=Errors.ALL)
        async def find_invoice(invoice_id: str, ctx: Context):
            if invoice_id:
                raise ctx.fail("gone")
            if not invoice_id:
                raise ctx.fail("locked")
            raise ctx.fail("no_match")
    """)
    # Everything resolves: the one finding is the reason find_invoice's contract lacks.
    assert lines(found(source, "FL190", "FL202", "FL203", "FL100", "FL102")) == [
        ("FL203", "app.py", source["app.py"].rstrip("\n").count("\n") + 1)  # the last line
    ]


def test_a_class_attribute_computed_at_run_time_is_fl190() -> None:
    source = app("""
        class Tools:
            ERRORS = load_errors()

        @tool("get_invoice", errors=Tools.ERRORS)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail("no_match")
    """)
    assert lines(found(source, "FL190")) == [("FL190", "app.py", line(source, "Tools.ERRORS"))]


# ----- codes: JsonRpcErrorCode(n) ------------------------------------------------------------------


def test_a_code_constructed_from_its_value_is_that_member() -> None:
    source = app("""
        @tool("get_invoice", errors=[
            ErrorContract(reason="no_match", code=JsonRpcErrorCode(-32001), when="No invoice",
                          recovery="Call get_invoice again with a real invoice id."),
            ErrorContract(reason="odd", code=JsonRpcErrorCode(-1), when="Odd",
                          recovery="Call get_invoice again with a real invoice id."),
        ])
        async def get_invoice(invoice_id: str, ctx: Context):
            if invoice_id:
                raise ctx.fail("odd")
            raise not_found("No invoice")
    """)
    results = found(source, "FL103", "FL104", "FL190", "FL201")
    assert lines(results) == [
        ("FL104", "app.py", line(source, "JsonRpcErrorCode(-1)")),
        ("FL201", "app.py", line(source, "raise not_found")),
    ]
    assert "'no_match'" in results[1][3]


# ----- ErrorContract(**BASE, ...) -------------------------------------------------------------------


def test_a_spread_of_a_module_level_dict_literal_resolves_across_files() -> None:
    files = {
        "common.py": 'BASE = {"code": -32001, "when": "No invoice", "recovery": "Call get_invoice again."}\n',
        **app("""
            from common import BASE
            LOCAL = {"when": "Gone", "recovery": "Call get_invoice again with a real invoice id."}

            @tool("get_invoice", errors=[
                ErrorContract(**BASE, reason="no_match"),
                ErrorContract(**LOCAL, reason="gone", code=JsonRpcErrorCode.NOT_FOUND),
                ErrorContract(**dynamic(), reason="odd", code=JsonRpcErrorCode.NOT_FOUND),
            ])
            async def get_invoice(invoice_id: str, ctx: Context):
                if invoice_id:
                    raise ctx.fail("no_match")
                raise ctx.fail("gone")
        """),
    }
    results = found(files, "FL190", "FL109", "FL110", "FL112", "FL103")
    # BASE's short recovery is FL112, reported at the **BASE that brings it (in app.py); the spread
    # of a call stays unknown: FL190 at it. LOCAL is complete and clean.
    assert lines(results) == [("FL112", "app.py", line(files, "**BASE")), ("FL190", "app.py", line(files, "**dynamic"))]
    assert "**dynamic()" not in results[1][3] or "cannot be checked" in results[1][3]


# ----- entries that are no entry -------------------------------------------------------------------


@pytest.mark.parametrize("constant", ["None", "True", "False"])
def test_none_true_false_entries_are_fl102_and_the_handler_is_still_checked(constant: str) -> None:
    source = app(f"""
        @tool("get_invoice", errors=[{constant}, *ENTRIES])
        async def get_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail("no_such_reason")
    """)
    results = found(source, "FL102", "FL190", "FL203")
    assert lines(results) == [("FL102", "app.py", line(source, "errors=[")), ("FL203", "app.py", line(source, "raise"))]
    assert f"contract entry is {constant}" in results[0][3]


def test_positional_arguments_to_errorcontract_are_one_fl102() -> None:
    source = app("""
        @tool("get_invoice", errors=[
            ErrorContract("no_match", JsonRpcErrorCode.NOT_FOUND, "No invoice", "Call get_invoice again."),
            ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="Gone",
                          recovery="Call get_invoice again with a real invoice id."),
        ])
        async def get_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail("gone")
    """)
    results = found(source)
    assert lines(results) == [("FL102", "app.py", line(source, '"no_match", JsonRpcErrorCode'))]
    assert "fields are keyword-only" in results[0][3]


def test_explicit_none_for_optional_fields_is_clean() -> None:
    source = app("""
        @tool("get_invoice", errors=[
            ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                          recovery="Call get_invoice again with a real invoice id.",
                          retryable=None, severity=None, thrown_by=None),
        ])
        async def get_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail("no_match")
    """)
    assert found(source) == []
    wrong = source["app.py"].replace("severity=None", 'severity="loud"')
    assert lines(found({"app.py": wrong})) == [("FL114", "app.py", line({"app.py": wrong}, '"loud"'))]


def test_super_calls_follow_the_first_base() -> None:
    files = {
        "repo.py": BASE_FILE,
        **app("""
            from repo import HttpRepo

            class GeneRepo(HttpRepo):
                def delete(self, key):
                    return super().delete(key)

                def fetch(self, key):
                    return key

            genes = GeneRepo()

            @tool("drop_gene", errors=ENTRIES)
            async def drop_gene(gene_id: str, ctx: Context):
                genes.fetch(gene_id)
                return genes.delete(gene_id)
        """),
    }
    # GeneRepo.fetch overrides the base's (nothing raised there); delete reaches HttpRepo.delete.
    assert lines(found(files, "FL200", "FL206")) == [("FL200", "repo.py", 9)]
