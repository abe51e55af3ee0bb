"""Contract resolution (DESIGN §4 "Contracts"): literals, module-level names, spreads,
concatenation, constants imported from other files of the project (absolute, relative, through a
package re-export), string constants as field values; what cannot be resolved is FL190, naming
what was skipped, and the rules that need the whole contract (§5.2) stay silent.

Resolution is observed through shape rules: an entry whose reason is ``"NoMatch"`` fires FL107,
which can only happen if that entry was found.
"""

from __future__ import annotations

import pytest

BAD = (
    'ErrorContract(reason="NoMatch", code=JsonRpcErrorCode.NOT_FOUND, when="No match",'
    ' recovery="Call get_item again with a valid id.")'
)
GOOD = (
    'ErrorContract(reason="locked", code=JsonRpcErrorCode.CONFLICT, when="Locked",'
    ' recovery="Wait a minute, then call get_item again.")'
)
IMPORTS = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode\n"


def tool_module(errors: str, prelude: str = "", body: str = "    return {}\n") -> str:
    return IMPORTS + prelude + f'@tool("get_item", errors={errors})\n' + "def get_item(item_id: str, ctx):\n" + body


SAME_FILE_FORMS = {
    "list-literal": ("", f"[{BAD}]"),
    "tuple-literal": ("", f"({BAD},)"),
    "dict-entry": (
        "",
        '[{"reason": "NoMatch", "code": -32001, "when": "No match", '
        '"recovery": "Call get_item again with a valid id."}]',
    ),
    "module-level-name": (f"ERRORS = [{BAD}]\n", "ERRORS"),
    "annotated-module-level-name": (f"ERRORS: list = [{BAD}]\n", "ERRORS"),
    "spread": (f"SHARED = [{BAD}]\n", f"[*SHARED, {GOOD}]"),
    "concatenation": (f"SHARED = [{BAD}]\n", f"SHARED + [{GOOD}]"),
    "name-bound-to-concatenation": (f"SHARED = [{BAD}]\nALL = SHARED + [{GOOD}]\n", "ALL"),
    "entry-constant": (f"NO_MATCH = {BAD}\n", f"[NO_MATCH, {GOOD}]"),
    "list-call": (f"SHARED = [{BAD}]\n", "list(SHARED)"),
    "nested-spreads": (f"A = [{BAD}]\nB = [*A]\n", f"[*B, {GOOD}]"),
    "rebinding-of-a-name": (f"SHARED = [{BAD}]\nERRORS = SHARED\n", "ERRORS"),
    "defined-inside-if-block": (f"if True:\n    ERRORS = [{BAD}]\n", "ERRORS"),
}


@pytest.mark.parametrize(("prelude", "errors"), SAME_FILE_FORMS.values(), ids=SAME_FILE_FORMS.keys())
def test_contract_resolves_in_the_same_file(lint_project, prelude: str, errors: str) -> None:
    linted = lint_project({"app.py": tool_module(errors, prelude)}, dedent=False)
    assert linted.codes() == ["FL107"], linted.summary()
    assert linted.of("FL107")[0].message.startswith("tool 'get_item': reason 'NoMatch'")


def _package(contracts: str, server_import: str, errors: str, init: str = "") -> dict[str, str]:
    return {
        "pkg/__init__.py": init,
        "pkg/contracts.py": IMPORTS + contracts,
        "pkg/server.py": tool_module(errors, server_import),
    }


CROSS_FILE_FORMS = {
    "absolute-import": _package(f"SHARED = [{BAD}]\n", "from pkg.contracts import SHARED\n", "SHARED"),
    "relative-import": _package(f"SHARED = [{BAD}]\n", "from .contracts import SHARED\n", f"[*SHARED, {GOOD}]"),
    "import-as": _package(f"SHARED = [{BAD}]\n", "from .contracts import SHARED as COMMON\n", "COMMON"),
    "module-import": _package(f"SHARED = [{BAD}]\n", "import pkg.contracts as contracts\n", "contracts.SHARED"),
    "from-package-import-module": _package(f"SHARED = [{BAD}]\n", "from pkg import contracts\n", "contracts.SHARED"),
    "package-re-export": _package(
        f"SHARED = [{BAD}]\n", "from pkg import SHARED\n", "SHARED", init="from .contracts import SHARED\n"
    ),
    "entry-constant-imported": _package(
        f"NO_MATCH = {BAD}\n", "from .contracts import NO_MATCH\n", f"[NO_MATCH, {GOOD}]"
    ),
    "concatenation-of-imported": _package(
        f"SHARED = [{BAD}]\n", "from .contracts import SHARED\n", f"SHARED + [{GOOD}]"
    ),
}


@pytest.mark.parametrize("files", CROSS_FILE_FORMS.values(), ids=CROSS_FILE_FORMS.keys())
def test_contract_resolves_across_files(lint_project, files: dict[str, str]) -> None:
    linted = lint_project(files, dedent=False)
    # The entry lives in contracts.py, so that is where its finding is reported.
    assert linted.summary() == [("FL107", "pkg/contracts.py", 2)]
    assert linted.of("FL107")[0].message.startswith("tool 'get_item':")


def test_imported_contract_is_read_when_only_the_server_file_is_reported(lint_project) -> None:
    # pre-commit passes only the changed file: the contract is still read from its own file, so
    # the handler checks see the full contract (FL203 stays silent for the declared reason).
    files = _package(
        f"SHARED = [{GOOD}]\n",
        "from .contracts import SHARED\n",
        "SHARED",
    )
    files["pkg/server.py"] = tool_module("SHARED", "from .contracts import SHARED\n", "    raise ctx.fail('locked')\n")
    files["pkg/other.py"] = tool_module(
        "SHARED", "from .contracts import SHARED\n", "    raise ctx.fail('not_declared')\n"
    ).replace("get_item", "other_item")
    linted = lint_project(files, paths=["pkg/server.py"], dedent=False)
    assert linted.codes() == [], linted.summary()
    linted = lint_project(files, paths=["pkg/other.py"], dedent=False)
    assert linted.summary() == [("FL203", "pkg/other.py", 5)]


def test_src_layout_package_resolves(lint_project) -> None:
    files = {
        f"src/{path}": source
        for path, source in _package(f"SHARED = [{BAD}]\n", "from pkg.contracts import SHARED\n", "SHARED").items()
    }
    linted = lint_project(files, dedent=False)
    assert linted.summary() == [("FL107", "src/pkg/contracts.py", 2)]


STRING_CONSTANT_FORMS = {
    "same-file": {
        "app.py": tool_module(
            '[ErrorContract(reason=NO_MATCH, code=JsonRpcErrorCode.NOT_FOUND, when=WHEN, recovery="Try again")]',
            'NO_MATCH = "NoMatch"\nWHEN = "No " "match"\n',
        ),
    },
    "imported": {
        "pkg/__init__.py": "",
        "pkg/reasons.py": 'NO_MATCH = "NoMatch"\nWHEN = "No match"\n',
        "pkg/app.py": tool_module(
            '[ErrorContract(reason=NO_MATCH, code=JsonRpcErrorCode.NOT_FOUND, when=WHEN, recovery="Try again")]',
            "from .reasons import NO_MATCH, WHEN\n",
        ),
    },
}


@pytest.mark.parametrize("files", STRING_CONSTANT_FORMS.values(), ids=STRING_CONSTANT_FORMS.keys())
def test_string_constant_as_field_value(lint_project, files: dict[str, str]) -> None:
    linted = lint_project(files, dedent=False)
    # reason resolved (FL107 on the format), when resolved (no FL190 about it), recovery checked.
    assert sorted(linted.codes()) == ["FL107", "FL112"], linted.summary()
    assert "'NoMatch'" in linted.of("FL107")[0].message


def test_code_constant_as_field_value(lint_project) -> None:
    source = tool_module(
        '[ErrorContract(reason="no_match", code=CODE, when="No match", '
        'recovery="Call get_item again with a valid id.")]',
        "CODE = JsonRpcErrorCode.UNKNOWN_ERROR\n",
    )
    assert lint_project({"app.py": source}, dedent=False).codes() == ["FL105"]


def test_dynamic_reason_in_handler_with_resolved_contract(lint_project) -> None:
    source = tool_module(f"[{GOOD}]", body="    raise ctx.fail(pick_reason())\n")
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.summary() == [("FL190", "app.py", 4)]
    assert "FL202" in linted.of("FL190")[0].message


UNRESOLVABLE = {
    "call": ("build_errors()", "errors= (a call to build_errors())"),
    "unknown-name": ("ERRORS", "'ERRORS'"),
    "spread-of-unknown": (f"[*UNKNOWN, {GOOD}]", "'UNKNOWN'"),
    "spread-of-call": (f"[*load(), {GOOD}]", "part of errors= (a call to load())"),
    "entry-is-a-call": (f"[make_entry('x'), {GOOD}]", "an entry (a call to make_entry())"),
    "external-package": (f"[*vendor.ERRORS, {GOOD}]", "'vendor.ERRORS'"),
    "comprehension": ("[e for e in ALL]", "errors="),
}


@pytest.mark.parametrize(("errors", "named"), UNRESOLVABLE.values(), ids=UNRESOLVABLE.keys())
def test_unresolvable_contract_is_fl190_and_skips_handler_rules(lint_project, errors: str, named: str) -> None:
    prelude = "import vendor\n" if "vendor" in errors else ""
    # The handler names an undeclared reason: with a complete contract that would be FL203, and
    # FL202 would report 'locked'. Neither may fire on a partial contract.
    source = tool_module(errors, prelude, body="    raise ctx.fail('not_declared')\n")
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.codes() == ["FL190"], linted.summary()
    message = linted.of("FL190")[0].message
    assert message.startswith("tool 'get_item': ")
    assert named in message
    assert "cannot be resolved statically" in message
    assert "FL200-FL204, FL206 and FL207 were skipped" in message


def test_unresolvable_import_from_outside_the_project(lint_project) -> None:
    source = tool_module("ERRORS", "from vendor.contracts import ERRORS\n")
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.codes() == ["FL190"]
    assert "'vendor.contracts.ERRORS'" in linted.of("FL190")[0].message
    assert linted.of("FL190")[0].span.line == 3  # at the name in errors=, not at the import


def test_cycle_of_names_terminates_as_unresolved(lint_project) -> None:
    source = tool_module("A", "A = [*B]\nB = [*A]\n")
    linted = lint_project({"app.py": source}, dedent=False)
    assert "FL190" in linted.codes(), linted.summary()


def test_unresolvable_field_value_names_the_field(lint_project) -> None:
    source = tool_module(
        '[ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No match", recovery=make_hint())]'
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.codes() == ["FL190"]
    message = linted.of("FL190")[0].message
    assert "recovery is a call to make_hint()" in message and "recovery checks were skipped" in message


def test_opaque_entry_fields_are_fl190_not_missing_fields(lint_project) -> None:
    source = tool_module("[ErrorContract(**COMMON, reason='no_match')]")
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.codes() == ["FL190"], linted.summary()
    assert "**COMMON" in linted.of("FL190")[0].message


WRONG_SHAPES = {
    "dict": ('{"reason": "x"}', "FL100", "got a dict"),
    "string": ('"no_match"', "FL100", "got a string"),
    "none": ("None", "FL100", "got None"),
    "single-entry": (GOOD, "FL100", "a single ErrorContract"),
    "name-bound-to-entry": ("ONE", "FL100", "a single ErrorContract"),
    "name-bound-to-string": ("REASON", "FL100", "got a string"),
    "list-used-as-entry": ("[SHARED]", "FL102", "spread it with *"),
    "set": ("{1, 2}", "FL100", "got a set"),
}


@pytest.mark.parametrize(("errors", "code", "fragment"), WRONG_SHAPES.values(), ids=WRONG_SHAPES.keys())
def test_wrong_contract_shapes(lint_project, errors: str, code: str, fragment: str) -> None:
    prelude = f"ONE = {GOOD}\nREASON = 'locked'\nSHARED = [{GOOD}]\n"
    linted = lint_project({"app.py": tool_module(errors, prelude)}, dedent=False)
    assert linted.codes() == [code], linted.summary()
    assert fragment in linted.of(code)[0].message
    assert linted.of(code)[0].span.line == 5


def test_shared_contract_findings_are_reported_once(lint_project) -> None:
    # Two tools share one bad constant: one finding at the constant, not one per tool.
    source = (
        IMPORTS + f"SHARED = [{BAD}]\n" + "".join(f'@tool("t{n}", errors=SHARED)\ndef t{n}(): ...\n' for n in range(3))
    )
    linted = lint_project({"app.py": source}, select=["FL1"], dedent=False)
    assert linted.summary() == [("FL107", "app.py", 2)]


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        (
            'ErrorContract(reason=Reasons.GONE, code=JsonRpcErrorCode.NOT_FOUND, when="Gone", '
            'recovery="Call get_item again with a valid id.")',
            "reason is 'app.Reasons.GONE'",
        ),
        (
            'ErrorContract(reason="no_match", code=pick_code(), when="Gone", '
            'recovery="Call get_item again with a valid id.")',
            "code is a call to pick_code()",
        ),
        ("ErrorContract(**COMMON)", "**COMMON"),
    ],
    ids=["reason-attribute", "code-call", "spread-fields"],
)
def test_unknown_reason_or_code_skips_the_handler_rules(lint_project, entry: str, fragment: str) -> None:
    # With the reason or code unknown, 'no_match' may well be declared: FL203/FL202 would guess.
    source = tool_module(
        f"[{entry}]", "class Reasons:\n    GONE = compute('no_match')\n", body="    raise ctx.fail('no_match')\n"
    )
    linted = lint_project({"app.py": source}, dedent=False)
    assert linted.codes() == ["FL190"], linted.summary()
    message = linted.of("FL190")[0].message
    assert fragment in message and "FL200-FL204, FL206 and FL207" in message
