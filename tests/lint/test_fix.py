"""Fixes (DESIGN §5 "fix", §6 ``--fix/--diff/--unsafe-fixes/--add-noqa``, §11): each fix on a
before/after pair compared byte for byte (so comments and formatting outside the edit are kept),
and the safety of applying them: rounds, the parse gate, atomic writes, files changed on disk,
idempotence, ``--diff`` writing nothing, encodings, BOMs and line endings.
"""

from __future__ import annotations

import json
import os
import stat
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest

import fusion_lint.fix.apply as fix_module
from fusion_lint.base.diagnostics import Edit, Fix
from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.fix.apply import apply_edits, apply_fixes, noqa_edits, unified_diff
from fusion_lint.rules import Rule, all_rules, fl204_fail_not_raised


def write_project(root: Path, files: dict[str, str], dedent: bool = True) -> None:
    """``files`` (relative path -> source) under ``root``, which a pyproject.toml makes the project root."""
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    for relative, source in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(source) if dedent else source)


CONTRACT = textwrap.dedent(
    """\
    ENTRIES = [
        ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                      recovery="Call list_invoices to find a valid invoice id."),
    ]
    """
)


def lint_root(root: Path, select: Iterable[str] | None = None):
    options = Options(
        paths=[str(root)],
        selection=Selection(select=list(select) if select is not None else None),
        use_cache=False,
        jobs=1,
    )
    return options, lint(options)


def run_fix(
    root: Path, *, unsafe: bool = False, select: Iterable[str] | None = None, write: bool = True, noqa: bool = False
):
    options, report = lint_root(root, select)
    return apply_fixes(report, options, write=write, unsafe=unsafe, add_noqa=noqa, fix=not noqa)


def fixed(
    tmp_path: Path,
    source: str,
    *,
    unsafe: bool = False,
    select: Iterable[str] | None = None,
    name: str = "app.py",
    extra: dict[str, str] | None = None,
) -> str:
    """Write ``source`` (dedented) as the one tool module of a project, run ``--fix``, return the text."""
    write_project(tmp_path, {name: source, **(extra or {})})
    run_fix(tmp_path, unsafe=unsafe, select=select)
    return (tmp_path / name).read_text()


def dedent(text: str) -> str:
    return textwrap.dedent(text)


# ----- FL301: McpError(JsonRpcErrorCode.X, ...) -> the factory --------------------------------------


def test_fl301_adds_the_factory_to_the_import_in_sorted_position(tmp_path: Path) -> None:
    before = """\
        from mcp_fusion import JsonRpcErrorCode, McpError, tool


        @tool("get_invoice")
        def get_invoice(invoice_id: str):
            # look it up first
            raise McpError(JsonRpcErrorCode.NOT_FOUND, f"No invoice {invoice_id}")  # keep me
        """
    after = """\
        from mcp_fusion import JsonRpcErrorCode, McpError, not_found, tool


        @tool("get_invoice")
        def get_invoice(invoice_id: str):
            # look it up first
            raise not_found(f"No invoice {invoice_id}")  # keep me
        """
    assert fixed(tmp_path, before, select=["FL301"]) == dedent(after)


def test_fl301_uses_the_module_alias_the_file_already_uses(tmp_path: Path) -> None:
    before = """\
        import mcp_fusion as mf


        @mf.tool("get_invoice")
        def get_invoice(invoice_id: str):
            raise mf.McpError(mf.JsonRpcErrorCode.FORBIDDEN, "Not yours", {"id": invoice_id})
        """
    after = """\
        import mcp_fusion as mf


        @mf.tool("get_invoice")
        def get_invoice(invoice_id: str):
            raise mf.forbidden("Not yours", {"id": invoice_id})
        """
    assert fixed(tmp_path, before, select=["FL301"]) == dedent(after)


def test_fl301_reuses_an_imported_factory_and_keeps_keyword_arguments(tmp_path: Path) -> None:
    before = """\
        from mcp_fusion import JsonRpcErrorCode, McpError, conflict, tool


        @tool("lock")
        def lock(invoice_id: str):
            try:
                pass
            except KeyError as exc:
                raise McpError(JsonRpcErrorCode.CONFLICT, data={"id": invoice_id}, cause=exc)
            raise conflict("Locked")
        """
    after = """\
        from mcp_fusion import JsonRpcErrorCode, McpError, conflict, tool


        @tool("lock")
        def lock(invoice_id: str):
            try:
                pass
            except KeyError as exc:
                raise conflict(data={"id": invoice_id}, cause=exc)
            raise conflict("Locked")
        """
    assert fixed(tmp_path, before, select=["FL301"]) == dedent(after)


def test_fl301_keeps_a_comment_after_the_code_and_the_call_layout(tmp_path: Path) -> None:
    before = """\
        from mcp_fusion import JsonRpcErrorCode, McpError, tool


        @tool("get_invoice")
        def get_invoice(invoice_id: str):
            raise McpError(
                JsonRpcErrorCode.NOT_FOUND,  # the id came from the client
                "No such invoice",
            )
        """
    after = """\
        from mcp_fusion import JsonRpcErrorCode, McpError, not_found, tool


        @tool("get_invoice")
        def get_invoice(invoice_id: str):
            raise not_found(  # the id came from the client
                "No such invoice",
            )
        """
    assert fixed(tmp_path, before, select=["FL301"]) == dedent(after)


def test_fl301_joins_a_one_name_per_line_import_and_adds_it_once_for_many_calls(tmp_path: Path) -> None:
    before = """\
        from mcp_fusion import (
            JsonRpcErrorCode,
            McpError,
            tool,
        )


        @tool("get_invoice")
        def get_invoice(invoice_id: str, other: str):
            if not invoice_id:
                raise McpError(JsonRpcErrorCode.NOT_FOUND, "No invoice")
            if not other:
                raise McpError(JsonRpcErrorCode.NOT_FOUND, "No other")
            raise McpError(JsonRpcErrorCode.INVALID_PARAMS)
        """
    after = """\
        from mcp_fusion import (
            JsonRpcErrorCode,
            McpError,
            invalid_params,
            not_found,
            tool,
        )


        @tool("get_invoice")
        def get_invoice(invoice_id: str, other: str):
            if not invoice_id:
                raise not_found("No invoice")
            if not other:
                raise not_found("No other")
            raise invalid_params()
        """
    assert fixed(tmp_path, before, select=["FL301"]) == dedent(after)


def test_fl301_never_introduces_a_name_the_file_binds_to_something_else(tmp_path: Path) -> None:
    # ``timeout`` is a parameter here: ``raise timeout(...)`` would call the float.
    before = """\
        from mcp_fusion import JsonRpcErrorCode, McpError, tool


        @tool("fetch")
        def fetch(url: str, timeout: float = 5.0):
            raise McpError(JsonRpcErrorCode.TIMEOUT, "Upstream too slow")
        """
    write_project(tmp_path, {"app.py": before})
    _, report = lint_root(tmp_path, ["FL301"])
    assert [d.code for d in report.diagnostics] == ["FL301"]
    assert report.diagnostics[0].fix is None
    run_fix(tmp_path, select=["FL301"])
    assert (tmp_path / "app.py").read_text() == dedent(before)


def test_fl301_from_the_errors_module_and_a_star_import(tmp_path: Path) -> None:
    errors_module = """\
        from mcp_fusion import tool
        from mcp_fusion.errors import JsonRpcErrorCode, McpError


        @tool("a")
        def a():
            raise McpError(JsonRpcErrorCode.CONFLICT, "Locked")
        """
    assert fixed(tmp_path, errors_module, select=["FL301"]) == dedent(errors_module).replace(
        "import JsonRpcErrorCode, McpError", "import JsonRpcErrorCode, McpError, conflict"
    ).replace('McpError(JsonRpcErrorCode.CONFLICT, "Locked")', 'conflict("Locked")')
    star = """\
        from mcp_fusion import *


        @tool("b")
        def b():
            raise McpError(JsonRpcErrorCode.CONFLICT, "Locked")
        """
    assert fixed(tmp_path, star, select=["FL301"], name="star.py") == dedent(star).replace(
        'McpError(JsonRpcErrorCode.CONFLICT, "Locked")', 'conflict("Locked")'
    )


# ----- FL201: a direct raise of a declared code -> raise ctx.fail(...) (unsafe) ----------------------


FL201_HEADER = (
    "from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, McpError, not_found, tool\n\n" + CONTRACT
)


def test_fl201_rewrites_a_factory_keeping_message_data_and_cause(tmp_path: Path) -> None:
    body = """\


        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, context: Context):
            try:
                pass
            except KeyError as e:
                raise not_found(
                    "No such invoice",
                    {"id": invoice_id},
                    cause=e,
                )
        """
    after = """\


        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, context: Context):
            try:
                pass
            except KeyError as e:
                raise context.fail(
                    "no_match",
                    "No such invoice",
                    {"id": invoice_id},
                    cause=e,
                )
        """
    assert fixed(tmp_path, FL201_HEADER + dedent(body), unsafe=True, select=["FL201"]) == FL201_HEADER + dedent(after)


def test_fl201_rewrites_mcp_error_by_keyword_and_is_unsafe_only(tmp_path: Path) -> None:
    body = """\


        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise McpError(message="No such invoice", code=JsonRpcErrorCode.NOT_FOUND)
        """
    source = FL201_HEADER + dedent(body)
    assert fixed(tmp_path, source, select=["FL201"]) == source  # safe fixes only: untouched
    assert fixed(tmp_path, source, unsafe=True, select=["FL201"]) == source.replace(
        'McpError(message="No such invoice", code=JsonRpcErrorCode.NOT_FOUND)',
        'ctx.fail(message="No such invoice", reason="no_match")',
    )


def test_fl201_has_no_fix_when_two_reasons_match(tmp_path: Path) -> None:
    source = FL201_HEADER.replace(
        "]\n",
        '    ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="Deleted",\n'
        '                  recovery="Call list_invoices to find a valid invoice id."),\n]\n',
    ) + dedent(
        """\


        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise not_found("No such invoice")
        """
    )
    write_project(tmp_path, {"app.py": source})
    _, report = lint_root(tmp_path, ["FL201"])
    assert [d.code for d in report.diagnostics] == ["FL201"]
    assert report.diagnostics[0].fix is None


# ----- FL204: ctx.fail(...) discarded -> raise ctx.fail(...) -----------------------------------------


def test_fl204_inserts_raise(tmp_path: Path) -> None:
    header = "from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool\n\n" + CONTRACT
    body = """\


        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            if not invoice_id: ctx.fail("no_match")
            ctx.fail(
                "no_match",  # the id is unknown
            )
        """
    after = """\


        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            if not invoice_id: raise ctx.fail("no_match")
            raise ctx.fail(
                "no_match",  # the id is unknown
            )
        """
    assert fixed(tmp_path, header + dedent(body), select=["FL204"]) == header + dedent(after)


def test_fl204_offers_no_fix_where_raise_cannot_go(tmp_path: Path) -> None:
    header = "from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool\n\n" + CONTRACT
    body = """\


        @tool("get_invoice", errors=ENTRIES)
        async def get_invoice(invoice_id: str, ctx: Context):
            await ctx.fail("no_match")
        """
    write_project(tmp_path, {"app.py": header + dedent(body)})
    _, report = lint_root(tmp_path, ["FL204"])
    assert [(d.code, d.fix) for d in report.diagnostics] == [("FL204", None)]


# ----- FL107: reason not snake_case -> snake_case, with its uses (unsafe) ----------------------------


def test_fl107_renames_the_reason_and_every_use_in_the_handlers_reach(tmp_path: Path) -> None:
    before = """\
        from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool

        SHARED = [
            ErrorContract(reason='NoMatch', code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                          recovery="Call get_invoice again with a valid invoice id."),
        ]


        @tool("get_invoice", errors=SHARED)
        async def get_invoice(invoice_id: str, ctx: Context):
            if not invoice_id:
                raise ctx.fail('NoMatch', "Empty id")  # NoMatch stays in comments
            return lookup(ctx, invoice_id) or ctx.recovery_for("NoMatch")


        def lookup(ctx, invoice_id):
            raise ctx.fail(reason="NoMatch")


        @tool("void_invoice", errors=SHARED)
        async def void_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail("NoMatch")
        """
    after = dedent(before).replace("'NoMatch'", "'no_match'").replace('"NoMatch"', '"no_match"')
    assert "NoMatch stays" in after
    assert fixed(tmp_path, before, unsafe=True, select=["FL107"]) == after


def test_fl107_has_no_fix_when_a_use_is_in_another_file_or_the_name_is_taken(tmp_path: Path) -> None:
    contracts = """\
        from mcp_fusion import ErrorContract, JsonRpcErrorCode

        SHARED = [
            ErrorContract(reason="NoMatch", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                          recovery="Call get_invoice again with a valid invoice id."),
        ]
        """
    tools = """\
        from mcp_fusion import Context, tool

        from contracts import SHARED


        @tool("get_invoice", errors=SHARED)
        async def get_invoice(invoice_id: str, ctx: Context):
            raise ctx.fail("NoMatch")
        """
    write_project(tmp_path, {"contracts.py": contracts, "tools.py": tools})
    _, report = lint_root(tmp_path, ["FL107"])
    assert [(d.code, d.fix) for d in report.diagnostics] == [("FL107", None)]

    taken = """\
        from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool


        @tool("get_invoice", errors=[
            ErrorContract(reason="NoMatch", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                          recovery="Call get_invoice again with a valid invoice id."),
            ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                          recovery="Call get_invoice again with a valid invoice id."),
        ])
        async def get_invoice(invoice_id: str):
            return None
        """
    write_project(tmp_path, {"contracts.py": "", "tools.py": taken})
    _, report = lint_root(tmp_path, ["FL107"])
    assert [(d.code, d.fix) for d in report.diagnostics] == [("FL107", None)]


# ----- FL302: add ``from <caught>`` ----------------------------------------------------------------


def test_fl302_appends_the_cause_before_a_trailing_comment(tmp_path: Path) -> None:
    before = """\
        from mcp_fusion import not_found, tool


        @tool("get_invoice")
        def get_invoice(invoice_id: str):
            try:
                return {}[invoice_id]
            except KeyError as missing:
                raise not_found("No such invoice")  # the client sent a bad id
        """
    after = dedent(before).replace('invoice")  #', 'invoice") from missing  #')
    assert fixed(tmp_path, before, select=["FL302"]) == after


# ----- FL101: drop errors=[] -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('@tool("x", errors=[])\n', '@tool("x")\n'),
        ('@tool("x", errors=[], description="d")\n', '@tool("x", description="d")\n'),
        ('@tool("x", errors = [ ] , description="d")\n', '@tool("x", description="d")\n'),
        ('@tool(\n    "x",\n    errors=[],\n)\n', '@tool(\n    "x",\n)\n'),
        ('@tool(\n    "x",\n    errors=[]\n)\n', '@tool(\n    "x"\n)\n'),
        (
            '@tool(\n    "x",  # the name\n    errors=[],\n    description="d",\n)\n',
            '@tool(\n    "x",  # the name\n    description="d",\n)\n',
        ),
    ],
    ids=["last", "middle", "spaced", "trailing-comma", "no-trailing-comma", "comment-kept"],
)
def test_fl101_drops_the_argument_and_its_comma(tmp_path: Path, before: str, after: str) -> None:
    head = "from mcp_fusion import tool\n\n\n"
    tail = "def x():\n    return 1\n"
    assert fixed(tmp_path, head + before + tail, select=["FL101"]) == head + after + tail


def test_fl101_in_the_call_form(tmp_path: Path) -> None:
    before = "from mcp_fusion import tool\n\n\ndef x():\n    return 1\n\n\nX = tool('x', errors=())(x)\n"
    assert fixed(tmp_path, before, select=["FL101"]) == before.replace(", errors=()", "")


# ----- every rule's documented fix, applied by --fix on disk ---------------------------------------


def _documented_fixes() -> list:
    return [
        pytest.param(
            rule, rule.prelude + example.snippet, rule.prelude + example.fixed_snippet, id=f"{rule.code}-{index}"
        )
        for rule in all_rules()
        for index, example in enumerate(rule.invalid_examples())
        if example.fixed is not None
    ]


@pytest.mark.parametrize(("rule", "before", "after"), _documented_fixes())
def test_documented_fix_examples(tmp_path: Path, rule: type[Rule], before: str, after: str) -> None:
    write_project(tmp_path, {"app.py": before}, dedent=False)
    run_fix(tmp_path, unsafe=True, select=[rule.code])
    assert (tmp_path / "app.py").read_text() == after


# ----- applying: rounds, parse gate, conflicts -----------------------------------------------------------


ROUNDS_SOURCE = FL201_HEADER + dedent(
    """\


    @tool("get_invoice", errors=ENTRIES)
    async def get_invoice(invoice_id: str, ctx: Context):
        try:
            pass
        except KeyError as e:
            raise McpError(JsonRpcErrorCode.NOT_FOUND, "No such invoice")
    """
)


def test_overlapping_fixes_are_applied_in_rounds_until_nothing_changes(tmp_path: Path) -> None:
    # FL201 and FL301 rewrite the same call, FL302 touches its end: one per round, FL201 first.
    result = fixed(tmp_path, ROUNDS_SOURCE, unsafe=True)
    assert result == ROUNDS_SOURCE.replace(
        'raise McpError(JsonRpcErrorCode.NOT_FOUND, "No such invoice")',
        'raise ctx.fail("no_match", "No such invoice") from e',
    )
    _, report = lint_root(tmp_path)
    assert not [d for d in report.diagnostics if d.fix is not None]


def test_a_second_fix_changes_nothing(tmp_path: Path) -> None:
    fixed(tmp_path, ROUNDS_SOURCE, unsafe=True)
    path = tmp_path / "app.py"
    before = path.read_bytes(), path.stat().st_mtime_ns
    report, outcome = run_fix(tmp_path, unsafe=True)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert outcome == ""


def test_a_fix_that_breaks_the_code_is_not_applied(tmp_path: Path, monkeypatch, capsys) -> None:
    def broken(text, *, site):  # a buggy builder: ``raise raise ctx.fail(...)``
        return Fix("Raise the error", [Edit(site.span.start, site.span.start, "raise raise ")])

    monkeypatch.setattr(fl204_fail_not_raised, "insert_raise", broken)
    source = ROUNDS_SOURCE.replace(
        'raise McpError(JsonRpcErrorCode.NOT_FOUND, "No such invoice")',
        'ctx.fail("no_match")\n        raise not_found("x")',
    )
    result = fixed(tmp_path, source)
    # The good fix (FL302) went in; the broken one did not, and was reported.
    assert result == source.replace('raise not_found("x")', 'raise not_found("x") from e')
    assert "the fix for FL204 is not applicable" in capsys.readouterr().err


def test_conflicting_edits_and_identical_edits() -> None:
    text = "abcdef"
    assert apply_edits(text, [Edit(1, 2, "X"), Edit(4, 4, "Y"), Edit(4, 4, "Y")]) == "aXcdYef"
    assert fix_module._conflict(Edit(1, 3, "a"), Edit(3, 3, "b"))  # touching: no defined order
    assert not fix_module._conflict(Edit(1, 3, "a"), Edit(4, 5, "b"))
    assert not fix_module._conflict(Edit(2, 2, "a"), Edit(2, 2, "a"))  # the same edit twice


# ----- --diff ----------------------------------------------------------------------------------------------


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {"app.py": ROUNDS_SOURCE})
    path = tmp_path / "app.py"
    before = path.read_bytes(), path.stat().st_mtime_ns
    outcome = run_cli("check", ".", "--no-cache", "--diff", "--unsafe-fixes")
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert outcome.exit_code == 1
    assert outcome.stdout.startswith("--- a/app.py\n+++ b/app.py\n@@ ")
    assert '-        raise McpError(JsonRpcErrorCode.NOT_FOUND, "No such invoice")\n' in outcome.stdout
    assert '+        raise ctx.fail("no_match", "No such invoice") from e\n' in outcome.stdout
    # Nothing to fix: an empty diff and exit 0.
    run_cli("check", ".", "--no-cache", "--fix", "--unsafe-fixes")
    again = run_cli("check", ".", "--no-cache", "--diff", "--unsafe-fixes")
    assert (again.exit_code, again.stdout) == (0, "")


def test_unified_diff_marks_a_last_line_without_newline() -> None:
    diff = unified_diff("a\nb", "a\nc", "f.py")
    assert diff.endswith("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")


# ----- writing: atomic, mode, symlinks, changed on disk ---------------------------------------------------


def test_write_keeps_the_mode_and_writes_through_a_symlink(tmp_path: Path) -> None:
    write_project(tmp_path, {"real.py": ROUNDS_SOURCE})
    real = tmp_path / "real.py"
    real.chmod(0o640)
    link_dir = tmp_path / "pkg"
    link_dir.mkdir()
    os.symlink(real, link_dir / "app.py")
    options, report = lint_root(link_dir)
    apply_fixes(report, options, write=True, unsafe=True)
    assert (link_dir / "app.py").is_symlink()
    assert "raise ctx.fail(" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_a_failed_write_leaves_the_file_whole_and_no_temporary(tmp_path: Path, monkeypatch, capsys) -> None:
    write_project(tmp_path, {"app.py": ROUNDS_SOURCE})
    path = tmp_path / "app.py"

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fix_module.os, "replace", refuse)
    run_fix(tmp_path, unsafe=True)
    assert path.read_text() == ROUNDS_SOURCE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.py", "pyproject.toml"]
    assert "cannot write it: Permission denied; left alone" in capsys.readouterr().err


def test_a_file_changed_on_disk_since_it_was_read_is_left_alone(tmp_path: Path, monkeypatch, run_cli) -> None:
    write_project(tmp_path, {"app.py": ROUNDS_SOURCE, "other.py": ROUNDS_SOURCE})
    edited = ROUNDS_SOURCE + "# edited in the editor meanwhile\n"
    real_lint = fix_module.lint

    def lint_while_someone_edits(options):  # runs between the read and the write
        (tmp_path / "app.py").write_text(edited)
        return real_lint(options)

    monkeypatch.setattr(fix_module, "lint", lint_while_someone_edits)
    outcome = run_cli("check", ".", "--no-cache", "--fix", "--unsafe-fixes")
    assert (tmp_path / "app.py").read_text() == edited
    assert "app.py: changed on disk since it was read; left alone" in outcome.stderr
    assert "raise ctx.fail(" in (tmp_path / "other.py").read_text()  # the other file was fixed


def test_a_file_changed_between_lint_and_read_is_left_alone(tmp_path: Path, capsys) -> None:
    write_project(tmp_path, {"app.py": ROUNDS_SOURCE})
    options, report = lint_root(tmp_path)
    shifted = "# a new first line\n" + ROUNDS_SOURCE
    (tmp_path / "app.py").write_text(shifted)
    apply_fixes(report, options, write=True, unsafe=True)
    assert (tmp_path / "app.py").read_text() == shifted
    assert "changed on disk since it was linted; left alone" in capsys.readouterr().err


# ----- encodings, BOM, newlines ----------------------------------------------------------------------------


def test_crlf_and_bom_are_kept(tmp_path: Path) -> None:
    source = dedent(
        """\
        from mcp_fusion import (
            JsonRpcErrorCode,
            McpError,
            tool,
        )


        @tool("x", errors=[])
        def x():
            raise McpError(
                JsonRpcErrorCode.NOT_FOUND,
                "gone",
            )
        """
    )
    write_project(tmp_path, {})
    path = tmp_path / "app.py"
    path.write_bytes(b"\xef\xbb\xbf" + source.replace("\n", "\r\n").encode())
    run_fix(tmp_path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\n") == data.count(b"\r\n")
    expected = (
        source.replace("    McpError,\n", "    McpError,\n    not_found,\n")
        .replace('@tool("x", errors=[])', '@tool("x")')
        .replace("raise McpError(\n        JsonRpcErrorCode.NOT_FOUND,\n", "raise not_found(\n")
    )
    assert data[3:].decode() == expected.replace("\n", "\r\n")


def test_a_coding_cookie_encoding_is_kept(tmp_path: Path) -> None:
    source = (
        "# -*- coding: latin-1 -*-\n"
        "from mcp_fusion import JsonRpcErrorCode, McpError, tool\n\n\n"
        "@tool('x')\ndef x():\n    raise McpError(JsonRpcErrorCode.CONFLICT, 'd\u00e9j\u00e0 pay\u00e9e')\n"
    )
    write_project(tmp_path, {})
    path = tmp_path / "app.py"
    path.write_bytes(source.encode("latin-1"))
    run_fix(tmp_path)
    expected = source.replace("McpError, tool", "McpError, conflict, tool").replace(
        "McpError(JsonRpcErrorCode.CONFLICT, ", "conflict("
    )
    assert path.read_bytes() == expected.encode("latin-1")


# ----- --stdin-filename ---------------------------------------------------------------------------------------


def test_stdin_fix_prints_the_fixed_buffer_and_findings_on_stderr(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {})
    source = ROUNDS_SOURCE
    outcome = run_cli("check", "--stdin-filename", "app.py", "--no-cache", "--fix", input=source)
    assert outcome.stdout == source.replace(
        'McpError(JsonRpcErrorCode.NOT_FOUND, "No such invoice")', 'not_found("No such invoice") from e'
    )
    assert "FL201" in outcome.stderr  # what remains (unsafe) is reported, on stderr
    assert not (tmp_path / "app.py").exists()


def test_stdin_without_findings_echoes_the_buffer(tmp_path: Path, run_cli) -> None:
    write_project(tmp_path, {})
    source = "from mcp_fusion import tool\n\n\n@tool('x')\ndef x():\n    return 1\n"
    outcome = run_cli("check", "--stdin-filename", "app.py", "--no-cache", "--fix", input=source)
    assert outcome.stdout == source


# ----- --add-noqa ----------------------------------------------------------------------------------------------


def test_add_noqa_suppresses_every_finding_and_merges_existing_comments(tmp_path: Path, run_cli) -> None:
    source = dedent(
        '''\
        from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool


        @tool(
            "get_invoice",
            errors=[
                ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                              recovery="""Call
                              again."""),
            ],
        )
        def get_invoice(invoice_id: str):
            raise ValueError("bad")  # noqa: E501
        '''
    )
    write_project(tmp_path, {"app.py": source})
    outcome = run_cli("check", ".", "--no-cache", "--add-noqa")
    assert outcome.exit_code == 0, outcome.stdout
    result = (tmp_path / "app.py").read_text()
    # The recovery's line ends inside the string: its suppression goes on the statement's first line.
    assert "@tool(  # noqa: FL112\n" in result
    assert 'raise ValueError("bad")  # noqa: E501, FL300\n' in result
    assert result.replace("  # noqa: FL112", "").replace(", FL300", "") == source
    assert run_cli("check", ".", "--no-cache").exit_code == 0
    again = run_cli("check", ".", "--no-cache", "--add-noqa")
    assert (tmp_path / "app.py").read_text() == result and again.exit_code == 0


def test_noqa_never_goes_after_a_backslash_or_inside_a_string() -> None:
    from fusion_lint.base.diagnostics import Diagnostic, Span

    text = 'x = 1 + \\\n    2\ny = """a\nb"""\n'

    def at(line: int, stmt_line: int) -> Diagnostic:
        return Diagnostic("FL300", "n", "warning", "m", "f.py", Span(line, 0, line, 1, 0, 1, stmt_line))

    edits, unplaced = noqa_edits(text, [at(1, 1), at(2, 1), at(3, 3)])
    # Inside the string, the comment goes after its closing quotes (ruff's convention: it covers
    # every line of the string); after a backslash, nowhere.
    assert apply_edits(text, edits) == 'x = 1 + \\\n    2  # noqa: FL300\ny = """a\nb"""  # noqa: FL300\n'
    assert [d.span.line for d in unplaced] == [1]


# ----- json ----------------------------------------------------------------------------------------------------


def test_json_carries_the_fix_with_offsets_and_rows(tmp_path: Path, run_cli) -> None:
    write_project(
        tmp_path, {"app.py": "from mcp_fusion import tool\n\n\n@tool('x', errors=[])\ndef x():\n    return 1\n"}
    )
    outcome = run_cli("check", ".", "--no-cache", "--output-format", "json")
    [diagnostic] = json.loads(outcome.stdout)
    assert diagnostic["code"] == "FL101"
    assert diagnostic["fix"]["applicability"] == "safe"
    [edit] = diagnostic["fix"]["edits"]
    assert edit["content"] == ""
    assert edit["location"] == {"row": 4, "column": 10} and edit["end_location"] == {"row": 4, "column": 21}
    text = (tmp_path / "app.py").read_text()
    assert text[edit["start"] : edit["end"]] == ", errors=[]"
