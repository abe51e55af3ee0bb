"""Handler analysis (DESIGN §4 "The handler", "Raises", "Beyond one function"; §5.2; §5.3).

Each test writes a small project and asserts the exact (code, file, line) triples that come out,
so a rule that fires too often, too rarely or in the wrong place fails the test.
"""

from __future__ import annotations

import pytest

IMPORTS = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context, McpError, not_found, conflict\n"
NO_MATCH = (
    'ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No item",'
    ' recovery="Call get_item again with a valid id.")'
)
LOCKED = (
    'ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="Locked",'
    ' recovery="Wait a minute, then call get_item again.")'
)
LOCKED_BY_SERVICE = LOCKED[:-1] + ', thrown_by="service")'


def module(
    body: str,
    errors: str = f"[{NO_MATCH}, {LOCKED}]",
    after: str = "",
    params: str = "item_id: str, ctx: Context",
    before: str = "",
) -> str:
    """Line 1 imports, then ``before``; the decorator is on line 2 + len(before lines), the def on
    the next line, and ``body`` (4-space indented) right after it."""
    return IMPORTS + before + f'@tool("get_item", errors={errors})\nasync def get_item({params}):\n' + body + after


def triples(linted, *codes: str) -> list[tuple[str, str, int]]:
    return [t for t in linted.summary() if not codes or t[0] in codes]


# ----- the same reason raised in a helper and in a service of another file ------------------------


def test_reason_raised_in_same_file_helper_and_in_service_file(lint_project) -> None:
    linted = lint_project(
        {
            "pkg/__init__.py": "",
            "pkg/service.py": (
                "from mcp_fusion import conflict, not_found\n"
                "def lock(item_id):\n"
                "    raise conflict('Item is locked', data={'reason': 'locked'})\n"
                "def fetch(item_id):\n"
                "    raise conflict('gone', {'reason': 'no_match'})\n"  # declared NOT_FOUND: FL206 here
            ),
            "pkg/tools.py": module(
                "    if not item_id:\n"
                "        raise ctx.fail('no_match')\n"
                "    check(item_id)\n"
                "    return fetch(item_id)\n",
                before="from .service import fetch\n",
                after="def check(item_id):\n    lock(item_id)\nfrom .service import lock\n",
            ),
        },
        dedent=False,
    )
    # FL202 silent: 'locked' is named by the service's data, reached through the same-file helper.
    assert not linted.of("FL202"), linted.summary()
    # FL206 at the service's raise, in the service file; FL200 too, since CONFLICT is declared...
    assert triples(linted, "FL206") == [("FL206", "pkg/service.py", 5)]
    message = linted.of("FL206")[0].message
    assert message.startswith("tool 'get_item': raises reason 'no_match' as CONFLICT")
    assert "declares it as NOT_FOUND" in message
    # ...and no FL201 for service raises: a factory with the reason in data is the documented pattern.
    assert not linted.of("FL201")
    assert not linted.of("FL200")


def test_service_raise_of_undeclared_code_is_fl200_in_the_service_file(lint_project) -> None:
    linted = lint_project(
        {
            "pkg/__init__.py": "",
            "pkg/service.py": "from mcp_fusion import forbidden\ndef fetch():\n    raise forbidden('nope')\n",
            "pkg/tools.py": module(
                "    raise ctx.fail('no_match') if False else fetch()\n", before="from pkg.service import fetch\n"
            ),
        },
        dedent=False,
    )
    assert triples(linted, "FL200") == [("FL200", "pkg/service.py", 3)]
    assert "FORBIDDEN" in linted.of("FL200")[0].message


# ----- comparisons, match/case, comments and strings are not raises -------------------------------


def test_comparison_and_match_case_on_codes_are_not_raises(lint_project) -> None:
    body = (
        "    try:\n"
        "        return lookup(item_id)\n"
        "    except McpError as exc:\n"
        "        if exc.code == JsonRpcErrorCode.FORBIDDEN:\n"
        "            return None\n"
        "        match exc.code:\n"
        "            case JsonRpcErrorCode.UNAUTHORIZED:\n"
        "                return None\n"
        "            case JsonRpcErrorCode.RATE_LIMITED | JsonRpcErrorCode.DATABASE_ERROR:\n"
        "                return None\n"
        "        is_missing = exc.code is JsonRpcErrorCode.NOT_FOUND\n"
        "        raise ctx.fail('no_match') from exc\n"
    )
    linted = lint_project({"app.py": module(body, errors=f"[{NO_MATCH}]")}, dedent=False)
    assert linted.codes() == [], linted.summary()


def test_commented_out_and_in_string_fail_do_not_count(lint_project) -> None:
    body = (
        "    # raise ctx.fail('locked')\n"
        "    '''Docstring: raise ctx.fail('locked') when the item is locked.'''\n"
        "    note = \"ctx.fail('locked')\"\n"
        "    raise ctx.fail('no_match')\n"
    )
    linted = lint_project({"app.py": module(body)}, dedent=False)
    # 'locked' is named nowhere but in a comment and strings: FL202 reports it.
    assert triples(linted) == [("FL202", "app.py", 2)]
    assert "'locked'" in linted.of("FL202")[0].message


# ----- the Context parameter --------------------------------------------------------------------


CONTEXT_PARAMS = {
    "annotated-any-name": "item_id: str, c: Context",
    "annotated-through-module-alias": "item_id: str, c: mf.Context",
    "annotated-as-string": "item_id: str, c: 'Context'",
    "keyword-only": "item_id: str, *, c: Context",
    "optional": "item_id: str, c: Optional[Context] = None",
    "union-with-none": "item_id: str, c: Context | None = None",
}


@pytest.mark.parametrize("params", CONTEXT_PARAMS.values(), ids=CONTEXT_PARAMS.keys())
def test_renamed_context_parameter(lint_project, params: str) -> None:
    source = module(
        "    raise c.fail('nope')\n", params=params, before="import mcp_fusion as mf\nfrom typing import Optional\n"
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert triples(linted, "FL203") == [("FL203", "app.py", 6)], linted.summary()
    assert "'nope'" in linted.of("FL203")[0].message


def test_context_by_conventional_name_without_annotation(lint_project) -> None:
    for name in ("ctx", "context"):
        source = module(f"    raise {name}.fail('nope')\n", params=f"item_id, {name}")
        assert triples(lint_project({"app.py": source}, dedent=False), "FL203") == [("FL203", "app.py", 4)]


def test_unannotated_other_name_is_not_the_context(lint_project) -> None:
    # ``c.fail`` on a parameter that is neither annotated Context nor named ctx/context is not ours.
    source = module("    raise c.fail('nope')\n", params="item_id, c")
    assert triples(lint_project({"app.py": source}, dedent=False), "FL203", "FL204") == []


def test_annotation_wins_over_conventional_name(lint_project) -> None:
    # ``ctx`` is an ordinary argument here; ``c`` is the Context.
    source = module(
        "    ctx.fail('nope')\n    raise c.fail('no_match')\n", params="ctx: dict, c: Context", errors=f"[{NO_MATCH}]"
    )
    assert triples(lint_project({"app.py": source}, dedent=False)) == []


# ----- aliases, bound errors, namespaced factories ------------------------------------------------


def test_aliased_fail(lint_project) -> None:
    body = "    fail = ctx.fail\n    if item_id:\n        raise fail('nope')\n    fail('no_match')\n"
    linted = lint_project({"app.py": module(body, errors=f"[{NO_MATCH}]")}, dedent=False)
    assert triples(linted) == [("FL203", "app.py", 6), ("FL204", "app.py", 7)]


def test_aliased_recovery_for_names_a_reason(lint_project) -> None:
    body = "    hint = ctx.recovery_for\n    raise ctx.fail('no_match', data=hint('locked'))\n"
    linted = lint_project({"app.py": module(body)}, dedent=False)
    assert triples(linted) == []  # 'locked' is named by recovery_for: no FL202


def test_exception_assigned_then_raised(lint_project) -> None:
    body = (
        "    err = forbidden('nope')\n"
        "    if item_id:\n"
        "        raise err\n"
        "    failure = ctx.fail('no_match')\n"
        "    raise failure\n"
    )
    source = module(body, errors=f"[{NO_MATCH}]", before="from mcp_fusion import forbidden\n")
    linted = lint_project({"app.py": source}, dedent=False)
    # The FORBIDDEN raise is reported at its raise statement; the bound ctx.fail is neither
    # discarded (FL204) nor unraised (FL202).
    assert triples(linted) == [("FL200", "app.py", 7)], linted.summary()


def test_namespaced_factory(lint_project) -> None:
    body = "    raise errors.not_found('gone')\n"
    source = module(body, errors=f"[{NO_MATCH}]", before="import mcp_fusion.errors as errors\n")
    linted = lint_project({"app.py": source}, dedent=False)
    assert triples(linted) == [("FL201", "app.py", 5)], linted.summary()
    assert "ctx.fail('no_match')" in linted.of("FL201")[0].message


def test_mcp_error_with_code_alias_and_int(lint_project) -> None:
    body = "    if item_id == 'a':\n        raise McpError(Codes.FORBIDDEN, 'no')\n    raise McpError(-32006, 'who?')\n"
    source = module(body, errors=f"[{NO_MATCH}]", before="from mcp_fusion import JsonRpcErrorCode as Codes\n")
    linted = lint_project({"app.py": source}, dedent=False)
    assert triples(linted, "FL200") == [("FL200", "app.py", 6), ("FL200", "app.py", 7)]
    assert "FORBIDDEN" in linted.of("FL200")[0].message and "UNAUTHORIZED" in linted.of("FL200")[1].message


# ----- call following ----------------------------------------------------------------------------


def test_call_cycle_between_helpers_terminates_and_finds_facts(lint_project) -> None:
    after = (
        "def ping(n):\n"
        "    if n:\n"
        "        return pong(n - 1)\n"
        "    raise forbidden('ping')\n"
        "def pong(n):\n"
        "    if n:\n"
        "        return ping(n - 1)\n"
        "    raise conflict('locked', data={'reason': 'locked'})\n"
    )
    source = module(
        "    raise ctx.fail('no_match') if item_id else ping(3)\n",
        after=after,
        before="from mcp_fusion import forbidden\n",
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert triples(linted) == [("FL200", "app.py", 9)], linted.summary()  # the FORBIDDEN in ping
    # 'locked' is raised in pong with its reason: FL202 stays silent.


def test_self_recursive_helper(lint_project) -> None:
    after = "def walk(n):\n    return walk(n - 1) if n else fetch()\ndef fetch():\n    raise forbidden('x')\n"
    source = module(
        "    walk(3)\n    raise ctx.fail('no_match')\n",
        after=after,
        errors=f"[{NO_MATCH}]",
        before="from mcp_fusion import forbidden\n",
    )
    assert triples(lint_project({"app.py": source}, dedent=False)) == [("FL200", "app.py", 10)]


CHAIN = (
    "def level1():\n    level2()\n"
    "def level2():\n    level3()\n"
    "def level3():\n    level4()\n"
    "def level4():\n    raise forbidden('deep')\n"
)


@pytest.mark.parametrize(("depth", "found"), [(3, False), (4, True), (0, False)])
def test_follow_calls_depth_bound(lint_project, depth: int, found: bool) -> None:
    source = module(
        "    level1()\n    raise ctx.fail('no_match')\n",
        after=CHAIN,
        errors=f"[{NO_MATCH}]",
        before="from mcp_fusion import forbidden\n",
    )
    linted = lint_project({"app.py": source}, config=f"follow-calls = {depth}\n", dedent=False)
    assert (triples(linted, "FL200") == [("FL200", "app.py", 14)]) is found, linted.summary()


def test_depth_zero_still_analyses_the_handler(lint_project) -> None:
    source = module("    raise forbidden('x')\n", errors=f"[{NO_MATCH}]", before="from mcp_fusion import forbidden\n")
    linted = lint_project({"app.py": source}, config="follow-calls = 0\n", dedent=False)
    assert triples(linted) == [("FL200", "app.py", 5)]


def test_method_calls_on_self_and_unknown_objects_are_opaque(lint_project) -> None:
    source = module("    db.get(item_id)\n    self_check()\n    raise ctx.fail('no_match')\n", errors=f"[{NO_MATCH}]")
    assert triples(lint_project({"app.py": source}, dedent=False)) == []


def test_calls_into_classes_methods_via_module_function(lint_project) -> None:
    after = "class Repo:\n    def get(self):\n        raise forbidden('x')\ndef use():\n    Repo.get(None)\n"
    source = module(
        "    use()\n    raise ctx.fail('no_match')\n",
        after=after,
        errors=f"[{NO_MATCH}]",
        before="from mcp_fusion import forbidden\n",
    )
    assert triples(lint_project({"app.py": source}, dedent=False)) == [("FL200", "app.py", 9)]


# ----- FL207 opt-in ----------------------------------------------------------------------------------


def test_fl207_only_when_selected(lint_project) -> None:
    source = module("    raise ctx.fail('no_match')\n", errors=f"[{NO_MATCH}, {LOCKED_BY_SERVICE}]")
    default = lint_project({"app.py": source}, dedent=False)
    assert triples(default) == []  # thrown_by="service" exempts it from FL202, and FL207 is off
    selected = lint_project({"app.py": source}, extend_select=["FL207"], dedent=False)
    assert triples(selected) == [("FL207", "app.py", 2)]
    assert selected.of("FL207")[0].message.startswith("tool 'get_item': reason 'locked' is marked")
    by_name = lint_project({"app.py": source}, extend_select=["service-reason-unraised"], dedent=False)
    assert triples(by_name) == [("FL207", "app.py", 2)]


def test_fl207_silent_when_a_service_raises_it(lint_project) -> None:
    source = module(
        "    lock()\n    raise ctx.fail('no_match')\n",
        errors=f"[{NO_MATCH}, {LOCKED_BY_SERVICE}]",
        after="def lock():\n    raise conflict('Locked', {'reason': 'locked'})\n",
    )
    assert triples(lint_project({"app.py": source}, extend_select=["FL207"], dedent=False)) == []


# ----- baseline codes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raise_line",
    [
        "raise service_unavailable('down')",
        "raise McpError(JsonRpcErrorCode.INTERNAL_ERROR, 'x')",
        "raise McpError(JsonRpcErrorCode.VALIDATION_ERROR, 'x')",
        "raise McpError(-32004, 'slow')",
        "raise request_cancelled('stop')",
        "raise serialization_error('bad')",
    ],
)
def test_baseline_codes_never_fl200_or_fl201(lint_project, raise_line: str) -> None:
    source = module(
        f"    {raise_line}\n",
        errors=f"[{NO_MATCH}]",
        before="from mcp_fusion import service_unavailable, request_cancelled, serialization_error\n",
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert not linted.of("FL200") and not linted.of("FL201"), linted.summary()


def test_declared_baseline_code_is_not_fl201(lint_project) -> None:
    entry = (
        'ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="Down",'
        ' recovery="Wait a minute, then call get_item again.")'
    )
    source = module(
        "    raise service_unavailable('down')\n",
        errors=f"[{entry}]",
        before="from mcp_fusion import service_unavailable\n",
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert not linted.of("FL201"), linted.summary()


# ----- nested functions and lambdas ---------------------------------------------------------------


def test_nested_function_and_lambda_are_part_of_the_handler(lint_project) -> None:
    body = (
        "    def inner():\n"
        "        raise ctx.fail('locked')\n"
        "    on_error = lambda: ctx.fail('nope')\n"
        "    inner()\n"
        "    raise ctx.fail('no_match')\n"
    )
    linted = lint_project({"app.py": module(body)}, dedent=False)
    # 'locked' is raised by the nested function (no FL202); the lambda's reason is undeclared.
    assert triples(linted) == [("FL203", "app.py", 6)], linted.summary()


def test_nested_function_raise_counts_for_fl201_and_fl300(lint_project) -> None:
    body = (
        "    def inner():\n"
        "        raise not_found('gone')\n"
        "    def other():\n"
        "        raise ValueError('bad')\n"
        "    raise ctx.fail('no_match')\n"
    )
    linted = lint_project({"app.py": module(body, errors=f"[{NO_MATCH}]")}, dedent=False)
    assert triples(linted) == [("FL201", "app.py", 5), ("FL300", "app.py", 7)]


def test_nested_function_shadowing_ctx_is_not_the_context(lint_project) -> None:
    # ``ctx`` annotated as something else is an ordinary argument, here shadowing the handler's.
    body = "    def inner(ctx: dict):\n        ctx.fail('nope')\n    raise ctx.fail('no_match')\n"
    linted = lint_project({"app.py": module(body, errors=f"[{NO_MATCH}]")}, dedent=False)
    assert triples(linted) == [], linted.summary()


# ----- dynamic reasons ---------------------------------------------------------------------------------


def test_dynamic_reason_is_fl190_and_no_fl202(lint_project) -> None:
    body = "    raise ctx.fail('no_match' if item_id else REASON)\n"
    linted = lint_project({"app.py": module(body)}, dedent=False)
    assert triples(linted) == [("FL190", "app.py", 4)], linted.summary()
    message = linted.of("FL190")[0].message
    assert message.startswith("tool 'get_item': ctx.fail() is called with a reason that is not a literal")
    assert "FL202" in message


def test_dynamic_reason_next_to_literal_one_still_skips_fl202(lint_project) -> None:
    body = "    if item_id:\n        raise ctx.fail('no_match')\n    raise ctx.fail(reason_for(item_id))\n"
    linted = lint_project({"app.py": module(body)}, dedent=False)
    assert triples(linted) == [("FL190", "app.py", 6)], linted.summary()


def test_dynamic_reason_in_a_helper_is_reported_there(lint_project) -> None:
    body = "    raise ctx.fail('no_match') if item_id else helper(ctx, 'x')\n"
    after = "def helper(ctx, reason):\n    raise ctx.fail(reason)\n"
    linted = lint_project({"app.py": module(body, after=after)}, dedent=False)
    assert triples(linted) == [("FL190", "app.py", 6)], linted.summary()


# ----- FL2xx: firing and non-firing, code, line, message prefix ---------------------------------------


RULE_CASES = {
    # code: (body, errors, extra selected, expected lines, message fragment)
    "FL200-fires": ("    raise conflict('locked')\n", f"[{NO_MATCH}]", [4], "raises CONFLICT"),
    "FL200-declared": ("    raise ctx.fail('no_match')\n", f"[{NO_MATCH}]", [], ""),
    "FL201-fires": ("    raise not_found('gone')\n", f"[{NO_MATCH}]", [4], "raises NOT_FOUND directly"),
    "FL201-two-reasons-share-a-code": (
        "    raise not_found('gone')\n",
        f"[{NO_MATCH}, {NO_MATCH.replace('no_match', 'archived')}]",
        [4],
        "'no_match', 'archived'",
    ),
    "FL201-via-fail": ("    raise ctx.fail('no_match', 'gone')\n", f"[{NO_MATCH}]", [], ""),
    "FL202-fires": ("    raise ctx.fail('no_match')\n", f"[{NO_MATCH}, {LOCKED}]", [2], "reason 'locked' is declared"),
    "FL202-no-literal-fail-no-check": ("    return None\n", f"[{NO_MATCH}, {LOCKED}]", [], ""),
    "FL202-recovery-for-names": (
        "    if item_id:\n        return ctx.recovery_for('locked')\n    raise ctx.fail('no_match')\n",
        f"[{NO_MATCH}, {LOCKED}]",
        [],
        "",
    ),
    "FL202-named-by-mcp-error-positional-data": (
        "    if item_id:\n        raise McpError(JsonRpcErrorCode.CONFLICT, 'x', {'reason': 'locked'})\n"
        "    raise ctx.fail('no_match')\n",
        f"[{NO_MATCH}, {LOCKED}]",
        [],
        "",
    ),
    "FL202-named-by-dict-call-data": (
        "    if item_id:\n        raise conflict('x', data=dict(reason='locked'))\n    raise ctx.fail('no_match')\n",
        f"[{NO_MATCH}, {LOCKED}]",
        [],
        "",
    ),
    "FL202-thrown-by-service-exempt": (
        "    raise ctx.fail('no_match')\n",
        f"[{NO_MATCH}, {LOCKED_BY_SERVICE}]",
        [],
        "",
    ),
    "FL203-fires": ("    raise ctx.fail('missing')\n", f"[{NO_MATCH}]", [4], "ctx.fail('missing') names a reason"),
    "FL203-recovery-for": (
        "    hint = ctx.recovery_for('missing')\n    raise ctx.fail('no_match', data=hint)\n",
        f"[{NO_MATCH}]",
        [4],
        "ctx.recovery_for('missing')",
    ),
    "FL204-fires": ("    ctx.fail('no_match')\n", f"[{NO_MATCH}]", [4], "is discarded"),
    "FL204-awaited-discard": ("    await ctx.fail('no_match')\n", f"[{NO_MATCH}]", [4], "is discarded"),
    "FL204-returned-is-not-discarded": ("    return ctx.fail('no_match')\n", f"[{NO_MATCH}]", [], ""),
    "FL206-fires": (
        "    raise not_found('x', {'reason': 'locked'})\n",
        f"[{LOCKED}]",
        [4],
        "reason 'locked' as NOT_FOUND",
    ),
    "FL206-same-code": ("    raise conflict('x', {'reason': 'locked'})\n", f"[{LOCKED}]", [], ""),
}


@pytest.mark.parametrize(("body", "errors", "lines", "fragment"), RULE_CASES.values(), ids=RULE_CASES.keys())
def test_handler_conformance_rules(
    lint_project, body: str, errors: str, lines: list[int], fragment: str, request: pytest.FixtureRequest
) -> None:
    code = request.node.callspec.id.split("-")[0]
    linted = lint_project({"app.py": module(body, errors=errors)}, dedent=False)
    found = linted.of(code)
    assert [d.span.line for d in found] == lines, linted.summary()
    for diagnostic in found:
        assert diagnostic.message.startswith("tool 'get_item': ")
        assert fragment in diagnostic.message


def test_fl205_fires_without_contract_and_not_with_one(lint_project) -> None:
    without = lint_project(
        {"app.py": module("    raise ctx.fail('no_match')\n", errors="None").replace(", errors=None", "")}, dedent=False
    )
    assert triples(without) == [("FL205", "app.py", 4)]
    assert without.of("FL205")[0].message.startswith("tool 'get_item': ctx.fail() in a definition that declares no")
    with_contract = lint_project(
        {"app.py": module("    raise ctx.fail('no_match')\n", errors=f"[{NO_MATCH}]")}, dedent=False
    )
    assert triples(with_contract) == []


def test_fl205_recovery_for_without_contract_is_fine(lint_project) -> None:
    source = module("    return ctx.recovery_for('x')\n", errors="None").replace(", errors=None", "")
    assert triples(lint_project({"app.py": source}, dedent=False)) == []


def test_resource_handler_rules(lint_project) -> None:
    source = (
        "from mcp_fusion import resource, ErrorContract, JsonRpcErrorCode\n"
        f'@resource("item://{{id}}", errors=[{NO_MATCH}])\n'
        "def item(id: str, ctx):\n"
        "    raise ctx.fail('nope')\n"
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert triples(linted, "FL202", "FL203") == [("FL202", "app.py", 2), ("FL203", "app.py", 4)]
    assert linted.of("FL203")[0].message.startswith("resource 'item://{id}': ")


def test_fl201_fix_only_when_exactly_one_reason_matches(lint_project) -> None:
    one = lint_project({"app.py": module("    raise not_found('gone')\n", errors=f"[{NO_MATCH}]")}, dedent=False)
    fix = one.of("FL201")[0].fix
    assert fix is not None and fix.applicability == "unsafe"
    text = (one.root / "app.py").read_text()
    edit = fix.edits[0]
    assert text[: edit.start] + edit.content + text[edit.end :] == module(
        "    raise ctx.fail(\"no_match\", 'gone')\n", errors=f"[{NO_MATCH}]"
    )
    two = lint_project(
        {
            "app.py": module(
                "    raise not_found('gone')\n", errors=f"[{NO_MATCH}, {NO_MATCH.replace('no_match', 'archived')}]"
            )
        },
        dedent=False,
    )
    assert two.of("FL201")[0].fix is None


# ----- FL3xx ---------------------------------------------------------------------------------------------


BODY_CASES = {
    "FL300-fires": ("    raise KeyError(item_id)\n", [4], "raise KeyError reaches the model"),
    "FL300-bare-class": ("    raise PermissionError\n", [4], "raise PermissionError"),
    "FL300-guard-not-flagged": ("    raise TypeError('programming error')\n", [], ""),
    "FL300-reraise-not-flagged": (
        "    try:\n        pass\n    except ValueError as e:\n        raise e\n",
        [],
        "",
    ),
    # A raise in a helper escapes to the handler that calls it unguarded: reported at the raise.
    "FL300-escapes-from-helpers": ("    helper()\n", [8], "ValueError"),
    "FL300-caught-around-the-helper": (
        "    try:\n        helper()\n    except ValueError:\n        raise ctx.fail('no_match')\n",
        [],
        "",
    ),
    "FL301-fires": ("    raise McpError(JsonRpcErrorCode.NOT_FOUND, 'gone')\n", [4], "is not_found(...)"),
    "FL301-baseline-too": ("    raise McpError(JsonRpcErrorCode.TIMEOUT, 'slow')\n", [4], "is timeout(...)"),
    "FL301-no-factory": ("    raise McpError(JsonRpcErrorCode.METHOD_NOT_FOUND, 'x')\n", [], ""),
    "FL302-fires": (
        "    try:\n        pass\n    except KeyError as e:\n        raise not_found('gone')\n",
        [7],
        "add 'from e'",
    ),
    "FL302-with-cause-kwarg": (
        "    try:\n        pass\n    except KeyError as e:\n        raise not_found('gone', cause=e)\n",
        [],
        "",
    ),
    "FL302-unnamed-except": ("    try:\n        pass\n    except KeyError:\n        raise not_found('gone')\n", [], ""),
    "FL303-fires-json": (
        "    try:\n        pass\n    except KeyError as e:\n        raise ctx.fail('no_match', json.dumps(payload)) from e\n",
        [7],
        "json.dumps(...)",
    ),
    "FL303-fires-repr": (
        "    try:\n        pass\n    except KeyError as e:\n        raise ctx.fail('no_match', f'failed: {e!r}') from e\n",
        [7],
        "{e!r}",
    ),
    "FL303-plain-message": ("    raise ctx.fail('no_match', 'No item with that id')\n", [], ""),
    "FL304-fires-base-exception": (
        "    try:\n        await asyncio.sleep(0)\n    except BaseException:\n        return None\n",
        [6],
        "catches BaseException",
    ),
    "FL304-tuple": (
        "    try:\n        await asyncio.sleep(0)\n    except (ValueError, asyncio.CancelledError):\n        return None\n",
        [6],
        "CancelledError",
    ),
    "FL304-no-await-no-cancellation": (
        "    try:\n        pass\n    except BaseException:\n        return None\n",
        [],
        "",
    ),
    "FL304-async-with-awaits": (
        "    try:\n        async with lock:\n            pass\n    except BaseException:\n        return None\n",
        [7],
        "BaseException",
    ),
    "FL304-async-for-awaits": (
        "    try:\n        async for x in feed():\n            pass\n    except BaseException:\n        return None\n",
        [7],
        "BaseException",
    ),
    "FL304-raising-another-error-still-swallows": (
        "    try:\n        await asyncio.sleep(0)\n    except BaseException:\n        raise RuntimeError('x')\n",
        [6],
        "BaseException",
    ),
    "FL304-reraises": (
        "    try:\n        await asyncio.sleep(0)\n    except BaseException:\n        cleanup()\n        raise\n",
        [],
        "",
    ),
    "FL304-exception-is-fine": (
        "    try:\n        await asyncio.sleep(0)\n    except Exception:\n        return None\n",
        [],
        "",
    ),
    "FL305-fires": ("    raise MCPError(-32001, 'gone')\n", [4], "the SDK's MCPError"),
    "FL305-our-error-is-fine": ("    raise ctx.fail('no_match')\n", [], ""),
}


@pytest.mark.parametrize(("body", "lines", "fragment"), BODY_CASES.values(), ids=BODY_CASES.keys())
def test_handler_body_rules(
    lint_project, body: str, lines: list[int], fragment: str, request: pytest.FixtureRequest
) -> None:
    code = request.node.callspec.id.split("-")[0]
    after = "import json, asyncio\nfrom mcp import MCPError\ndef helper():\n    raise ValueError('x')\n"
    linted = lint_project({"app.py": module(body, errors=f"[{NO_MATCH}]", after=after)}, dedent=False)
    found = linted.of(code)
    assert [d.span.line for d in found] == lines, linted.summary()
    for diagnostic in found:
        assert diagnostic.message.startswith("tool 'get_item': ")
        assert fragment in diagnostic.message


def test_body_rules_apply_without_a_contract(lint_project) -> None:
    source = module("    raise ValueError('x')\n", errors="None").replace(", errors=None", "")
    assert triples(lint_project({"app.py": source}, dedent=False)) == [("FL300", "app.py", 4)]


def test_fl304_reports_the_except_header(lint_project) -> None:
    body = "    try:\n        await asyncio.sleep(0)\n    except asyncio.CancelledError:\n        return None\n"
    linted = lint_project({"app.py": module(body, errors=f"[{NO_MATCH}]", before="import asyncio\n")}, dedent=False)
    (found,) = linted.of("FL304")
    assert (found.span.line, found.span.col, found.span.end_line) == (7, 4, 7)
    text = (linted.root / "app.py").read_text()
    assert text[found.span.start : found.span.end] == "except asyncio.CancelledError"


# ----- the tool_error builder ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raised", "lines"),
    [
        ("tool_error('CONFLICT', 'Locked').suggest('Wait, then retry')", [5]),
        ("tool_error(JsonRpcErrorCode.FORBIDDEN, 'No').actions('get_item')", [5]),
        ("tool_error(-32002, 'Locked')", [5]),
        ("tool_error('NOT_FOUND', 'Gone')", []),  # declared
        ("tool_error('conflict', 'Locked')", []),  # not a member name: no code is claimed
    ],
)
def test_raised_tool_error_builder_carries_its_code(lint_project, raised: str, lines: list[int]) -> None:
    source = module(f"    raise {raised}\n", errors=f"[{NO_MATCH}]", before="from mcp_fusion import tool_error\n")
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.lines("FL200") == lines, linted.summary()


# ----- service classes --------------------------------------------------------------------------------


SERVICE_CLASS = (
    "from mcp_fusion import conflict, forbidden\n"
    "class Billing:\n"
    "    def pay(self, item_id):\n"
    "        self._check(item_id)\n"
    "    def _check(self, item_id):\n"
    "        raise conflict('Locked', data={'reason': 'locked'})\n"
    "    @staticmethod\n"
    "    def audit():\n"
    "        raise forbidden('nope')\n"
    "billing = Billing()\n"
)


@pytest.mark.parametrize(
    ("before", "call"),
    [
        ("from .services import billing\n", "billing.pay(item_id)"),
        ("from . import services\n", "services.billing.pay(item_id)"),
        ("from .services import Billing\n", "Billing().pay(item_id) if False else Billing.pay(None, item_id)"),
        ("from .services import Billing\n", "svc.pay(item_id)"),
    ],
    ids=["module-level-instance", "instance-through-module", "class-attribute", "local-instance"],
)
def test_calls_into_service_classes_are_followed(lint_project, before: str, call: str) -> None:
    body = ("    svc = Billing()\n" if "svc." in call else "") + f"    {call}\n    raise ctx.fail('no_match')\n"
    linted = lint_project(
        {
            "pkg/__init__.py": "",
            "pkg/services.py": SERVICE_CLASS,
            "pkg/tools.py": module(body, errors=f"[{NO_MATCH}, {LOCKED}]", before=before),
        },
        dedent=False,
    )
    # 'locked' is raised by Billing._check, reached through self._check: FL202 stays silent, and the
    # staticmethod nobody calls is not reached.
    assert triples(linted) == [], linted.summary()


def test_service_method_raising_with_a_mismatched_code(lint_project) -> None:
    service = SERVICE_CLASS.replace(
        "raise conflict('Locked', data={'reason': 'locked'})", "raise forbidden('Locked', data={'reason': 'locked'})"
    )
    linted = lint_project(
        {
            "pkg/__init__.py": "",
            "pkg/services.py": service,
            "pkg/tools.py": module(
                "    billing.pay(item_id)\n    raise ctx.fail('no_match')\n", before="from .services import billing\n"
            ),
        },
        dedent=False,
    )
    assert triples(linted) == [("FL200", "pkg/services.py", 6), ("FL206", "pkg/services.py", 6)]
