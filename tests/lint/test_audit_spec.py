"""DESIGN §5–§7 read line by line against what the linter does: where each rule points, the
exclusive chains, strings written as implicit concatenation, data passed positionally, what is
never silently passed, and the CLI flags working together."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEADER = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, McpError, Context, not_found, conflict\n"


def at(source: str, needle: str, occurrence: int = 0) -> tuple[int, int]:
    """(line, 1-based column) of the ``occurrence``-th ``needle`` in ``source``."""
    index = -1
    for _ in range(occurrence + 1):
        index = source.index(needle, index + 1)
    line = source.count("\n", 0, index) + 1
    return line, index - (source.rfind("\n", 0, index) + 1) + 1


# ----- where each rule points (§5) ---------------------------------------------------------------

HANDLER_RULES = (
    HEADER
    + """import asyncio
import json

@tool("get_invoice", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                  recovery="Call get_invoice again with a valid invoice id."),
    ErrorContract(reason="never_raised", code=JsonRpcErrorCode.CONFLICT, when="Locked",
                  recovery="Wait a minute, then call get_invoice again."),
    ErrorContract(reason="by_service", code=JsonRpcErrorCode.FORBIDDEN, when="No", thrown_by="service",
                  recovery="Ask an administrator, then call get_invoice again."),
])
async def get_invoice(invoice_id: str, ctx: Context):
    if invoice_id == "a":
        raise ctx.fail("no_match")
    if invoice_id == "b":
        raise McpError(JsonRpcErrorCode.UNAUTHORIZED, "No")
    if invoice_id == "c":
        ctx.fail("no_match")
    if invoice_id == "d":
        raise ctx.fail("undeclared")
    if invoice_id == "e":
        raise not_found("Gone")
    try:
        await lookup(invoice_id)
    except KeyError as e:
        raise not_found(json.dumps({"id": invoice_id}), {"reason": "no_match"})
    except asyncio.CancelledError:
        return None
    raise ValueError(invoice_id)

async def lookup(invoice_id):
    raise conflict("Locked", {"reason": "no_match"})

@tool("ping")
def ping(ctx):
    raise ctx.fail("no_contract")
"""
)


def test_every_rule_points_where_the_design_says(lint_project) -> None:
    source = HANDLER_RULES
    linted = lint_project({"app.py": source}, extend_select=["FL207"])
    found = {(d.code, d.span.line, d.span.col + 1) for d in linted.diagnostics}

    expected = {
        # FL202/FL207 at the entry's reason
        ("FL202", *at(source, '"never_raised"')),
        ("FL207", *at(source, '"by_service"')),
        # raise rules at the raise statement
        ("FL200", *at(source, "raise McpError")),
        ("FL201", *at(source, 'raise not_found("Gone")')),
        ("FL201", *at(source, "raise not_found(json")),
        ("FL302", *at(source, "raise not_found(json")),
        ("FL303", *at(source, "raise not_found(json")),
        ("FL300", *at(source, "raise ValueError")),
        ("FL206", *at(source, "raise conflict")),  # a service raise the handler reaches
        # FL203-FL205 at the ctx.fail call
        ("FL204", *at(source, 'ctx.fail("no_match")', 1)),
        ("FL203", *at(source, 'ctx.fail("undeclared")')),
        ("FL205", *at(source, 'ctx.fail("no_contract")')),
        # FL304 at the except clause; FL301 at the McpError(...) it would rewrite
        ("FL304", *at(source, "except asyncio.CancelledError")),
        ("FL301", *at(source, "McpError(JsonRpcErrorCode.UNAUTHORIZED")),
    }
    assert found == expected


SHAPE_RULES = (
    HEADER
    + """
def hint():
    return "Call get_invoice again."

@tool("get_invoice", errors=[
    ErrorContract(code=JsonRpcErrorCode.NOPE, when="w", recovery="Two words"),
    ErrorContract(reason="Not-Snake", code=-1, when="w", recovery="   "),
    ErrorContract(reason="ok_one", code=JsonRpcErrorCode.UNKNOWN_ERROR, when="w", recovery=f"Call {hint()} next, please ok"),
    ErrorContract(reason="ok_two", code=12.5, when="w", recovery=hint()),
    ErrorContract(**{"reason": "ok_three"}),
])
async def get_invoice(ctx):
    return 1
"""
)


def test_shape_rules_point_at_the_value_or_the_entry_and_chains_are_exclusive(lint_project) -> None:
    source = SHAPE_RULES
    linted = lint_project({"app.py": source})
    found = {(d.code, d.span.line, d.span.col + 1) for d in linted.diagnostics}

    assert found == {
        ("FL106", *at(source, "ErrorContract(code=")),  # missing: at the entry
        ("FL104", *at(source, "JsonRpcErrorCode.NOPE")),
        ("FL112", *at(source, '"Two words"')),
        ("FL107", *at(source, '"Not-Snake"')),
        ("FL104", *at(source, "-1")),  # FL103 -> FL104: the first that matches, only
        ("FL111", *at(source, '"   "')),  # FL110 -> FL111 -> FL112: blank is FL111 only
        ("FL105", *at(source, "JsonRpcErrorCode.UNKNOWN_ERROR")),
        ("FL103", *at(source, "12.5")),  # a string code is a code (§3.1); a float is not
        # FL190 at what could not be resolved: an f-string recovery is not passed silently either
        ("FL190", *at(source, 'f"Call')),
        ("FL190", *at(source, "hint()),")),
        ("FL190", *at(source, '**{"reason"')),  # the spread that hides the fields, not the entry
    }
    recovery = next(d for d in linted.diagnostics if d.span.line == at(source, 'f"Call')[0] and d.code == "FL190")
    assert "recovery is an f-string" in recovery.message and "the recovery checks were skipped" in recovery.message


def test_a_dynamic_reason_is_reported_at_the_reason(lint_project) -> None:
    source = HEADER + (
        "@tool('t', errors=[ErrorContract(reason='a', code=JsonRpcErrorCode.NOT_FOUND, when='w', "
        "recovery='Call t again with another id.')])\ndef t(ctx, which: str):\n    raise ctx.fail(which)\n"
    )

    linted = lint_project({"app.py": source}, select=["FL190"])

    assert [(d.span.line, d.span.col + 1) for d in linted.diagnostics] == [at(source, "which)")]


def test_bytes_are_not_text(lint_project) -> None:
    """The runtime rejects bytes for reason, when and recovery (pydantic ``str``)."""
    source = HEADER + (
        "@tool('t', errors=[ErrorContract(reason=b'a', code=JsonRpcErrorCode.NOT_FOUND, when=b'w' b'x', "
        "recovery=b'Call t again with another id.'), b'entry'])\ndef t(ctx):\n    return 1\n"
    )

    linted = lint_project({"app.py": source})

    assert sorted((d.code, d.message.rpartition(", got ")[2]) for d in linted.diagnostics if d.code != "FL102") == [
        ("FL106", "bytes"),
        ("FL109", "bytes"),
        ("FL110", "bytes"),
    ]
    assert [d.message for d in linted.of("FL102")] == [
        "tool 't': contract entry is bytes; write ErrorContract(reason=..., code=..., when=..., recovery=...) "
        "or a dict literal with those keys"
    ]


# ----- strings and data as the runtime reads them (§5.1, §5.2) -------------------------------------


def test_implicit_concatenation_is_read_as_the_joined_string_everywhere(lint_project) -> None:
    source = (
        HEADER
        + "from mcp_fusion import tool_error\nR = 'no_' 'match'\n"
        + (
            "@tool('get_' 'invoice', errors=[ErrorContract(reason=R, code=JsonRpcErrorCode.NOT_FOUND, when='w', "
            "recovery='Call get_invoice ' 'again with another id.')])\n"
            "def t(ctx, x: int):\n"
            "    if x:\n        raise ctx.fail('no_' 'match')\n"
            "    if x > 1:\n        raise conflict('Locked', {'rea' 'son': 'no_' 'match'})\n"
            "    raise tool_error('RATE_' 'LIMITED', 'Slow down')\n"
        )
    )

    linted = lint_project({"app.py": source})

    assert [(d.code, d.message.split(":")[0]) for d in linted.diagnostics] == [
        ("FL200", "tool 'get_invoice'"),  # CONFLICT, with the data reason read joined ...
        ("FL206", "tool 'get_invoice'"),  # ... and compared with the joined contract reason
        ("FL200", "tool 'get_invoice'"),  # RATE_LIMITED, the joined envelope code
    ]
    assert "RATE_LIMITED" in linted.diagnostics[2].message


def test_data_positions_baseline_factories_and_reraises(lint_project) -> None:
    entry = "ErrorContract(reason='{r}', code=JsonRpcErrorCode.NOT_FOUND, when='w', recovery='Call t again with another id.')"
    source = HEADER + (
        f"@tool('t', errors=[{entry.format(r='a')}, {entry.format(r='b')}, {entry.format(r='c')}, {entry.format(r='d')}])\n"
        "def t(ctx, x: int):\n"
        "    if x == 1:\n        raise ctx.fail('a')\n"
        "    if x == 2:\n        raise conflict('m', {'reason': 'b'})\n"  # a factory's 2nd argument
        "    if x == 3:\n        raise McpError(JsonRpcErrorCode.CONFLICT, 'm', {'reason': 'c'})\n"  # McpError's 3rd
        "    if x == 4:\n        raise McpError(JsonRpcErrorCode.CONFLICT, {'reason': 'd'})\n"  # its message: no data
        "    if x == 5:\n        raise McpError(JsonRpcErrorCode.INTERNAL_ERROR, 'm')\n"  # baseline: FL301 still
        "    try:\n        pass\n    except ValueError as e:\n        raise e\n"
        "    except KeyError:\n        raise\n"
    )

    linted = lint_project({"app.py": source}, select=["FL202", "FL206", "FL301", "FL300"])

    assert [(d.code, d.span.line) for d in linted.diagnostics] == [
        ("FL202", 2),  # only 'd' is never raised: its "data" was the message
        ("FL206", 7),
        ("FL206", 9),
        ("FL301", 9),
        ("FL301", 11),
        ("FL301", 13),
    ]
    assert "reason 'd' is declared but nothing raises it" in linted.diagnostics[0].message
    assert "internal_error(...)" in linted.diagnostics[-1].message


# ----- the CLI (§6) ---------------------------------------------------------------------------------


DESIGN_CHECK_FLAGS = (
    "--select",
    "--ignore",
    "--extend-select",
    "--output-format",
    "--statistics",
    "--exit-zero",
    "--quiet",
    "--show-source",
    "--no-cache",
    "--jobs",
    "--fix",
    "--diff",
    "--unsafe-fixes",
    "--stdin-filename",
    "--add-noqa",
    "--report-unused-suppressions",
)


def test_every_flag_of_the_design_exists(run_cli) -> None:
    check, lock = run_cli("check", "--help"), run_cli("lock", "--help")

    assert [flag for flag in DESIGN_CHECK_FLAGS if flag not in check.stdout] == []
    assert "--check" in lock.stdout
    assert "[concise|full|text|json|json-lines|sarif|github|gitlab|rdjson|azure|pylint|junit]" in check.stdout


def test_diff_honours_exit_zero(tmp_path: Path, run_cli) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(HEADER + "@tool('t', errors=[])\ndef t():\n    return 1\n")

    shown = run_cli("--no-cache", "--diff")
    shown_zero = run_cli("--no-cache", "--diff", "--exit-zero")

    assert shown.exit_code == 1 and shown.stdout.startswith("--- a/app.py")
    assert shown_zero.exit_code == 0 and shown_zero.stdout == shown.stdout
    assert "errors=[]" in (tmp_path / "app.py").read_text()  # --diff writes nothing


def test_flags_work_together(tmp_path: Path, run_cli) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(HEADER + "@tool('t', errors=[])\ndef t():\n    raise ValueError('x')\n")

    quiet_stats = run_cli("--no-cache", "--quiet", "--statistics", "--jobs", "2")
    zero = run_cli(
        "check", ".", "--no-cache", "--exit-zero", "--show-source", "--select", "prefer-mcp-error-in-handler"
    )
    as_json = run_cli("--no-cache", "--output-format", "json", "--ignore", "FL1")

    assert quiet_stats.exit_code == 1
    assert quiet_stats.stdout.splitlines()[-2:] == [
        "    1  FL101  [*] error-contract-empty",
        "    1  FL300  [ ] prefer-mcp-error-in-handler",
    ]
    assert "Found" not in quiet_stats.stdout
    assert zero.exit_code == 0
    assert zero.stdout.splitlines()[:3] == [
        "app.py:4:5: FL300 [prefer-mcp-error-in-handler] tool 't': raise ValueError reaches the model as a masked "
        "INTERNAL_ERROR; raise ctx.fail(<reason>) or an error factory (invalid_params, not_found, ...) instead",
        "  4 |     raise ValueError('x')",
        "    |     ^^^^^^^^^^^^^^^^^^^^^",
    ]
    (entry,) = json.loads(as_json.stdout)
    assert set(entry) == {"code", "name", "severity", "message", "filename", "location", "end_location", "fix", "url"}
    assert (entry["code"], entry["location"], entry["end_location"], entry["fix"]) == (
        "FL300",
        {"row": 4, "column": 5},
        {"row": 4, "column": 26},
        None,
    )


def test_every_rule_has_its_page_and_python_dash_m_works(run_cli) -> None:
    from fusion_lint.rules import all_rules

    listed = subprocess.run([sys.executable, "-m", "fusion_lint", "rule", "--all"], capture_output=True, text=True)

    assert listed.returncode == 0 and all(rule.code in listed.stdout for rule in all_rules())
    for rule in all_rules():
        for key in (rule.code, rule.name, rule.code.lower()):
            page = run_cli("rule", key)
            assert page.exit_code == 0, page.stderr
            assert page.stdout.startswith(f"{rule.code} {rule.name} ({rule.severity}, ")
            assert "What it does" in page.stdout and "Why is this bad?" in page.stdout


def test_a_vendored_runtime_imported_relatively_is_recognised(lint_project) -> None:
    files = {
        "myapp/__init__.py": "",
        "myapp/vendor/__init__.py": "",
        "myapp/vendor/mcp_fusion/__init__.py": "def tool(*args, **kwargs):\n    return lambda fn: fn\n",
        "myapp/tools.py": "from .vendor.mcp_fusion import tool\n\n@tool('t', errors=[])\ndef t():\n    return 1\n",
    }

    linted = lint_project(files, config='runtime-modules = ["myapp.vendor.mcp_fusion"]\n')

    assert linted.summary() == [("FL101", "myapp/tools.py", 3)]
