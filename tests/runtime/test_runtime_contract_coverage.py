"""``pytest --contract-coverage`` (issue 22): a small project, run by pytest inside pytest (pytester).

The project declares reasons on ``mcp_fusion`` tools; its tests make some of them happen. The plugin
counts what reached the boundary against the contracts fusion-lint reads (or a lockfile): exercised,
missing, flagged (raised with another code), a tool no test imports at 0%; the table, the JSON
report, ``--contract-coverage-fail-under``; and with the plugin off nothing changes. Each run of the
project takes two seconds or more: those are marked slow.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

# pytester's in-process runs drop every module first imported inside them, while the runtime's
# package keeps the names it lazily looked up (``mcp_fusion.tool``): the runtime's modules are
# imported here, before any inner run, so both sides of an inner run share one copy of them.
import mcp_fusion.definitions  # noqa: F401
import mcp_fusion.testing  # noqa: F401
from mcp_fusion import boundary

pytest_plugins = ["pytester"]

SERVER = '''
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, conflict, tool

RETRY = "Call list_items to find a real item ID, then retry."


def lock_service(item_id):
    """The service layer raises the declared reason itself, with the wrong code."""
    raise conflict(f"Item {item_id} is locked", {"reason": "item_locked"})


@tool("get_item", errors=[
    ErrorContract(reason="item_missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item has that ID", recovery=RETRY),
    ErrorContract(reason="item_locked", code=JsonRpcErrorCode.FORBIDDEN, when="The item is locked", recovery=RETRY,
                  thrown_by="service"),
    ErrorContract(reason="item_archived", code=JsonRpcErrorCode.CONFLICT, when="The item is archived", recovery=RETRY),
])
def get_item(item_id: str, ctx: Context) -> str:
    if item_id == "missing":
        raise ctx.fail("item_missing")
    if item_id == "locked":
        lock_service(item_id)
    if item_id == "archived":
        raise ctx.fail("item_archived")
    if item_id == "gone":
        raise ctx.fail("item_gone")
    return item_id


@tool("list_items")
def list_items() -> list:
    return ["item_1"]
'''

#: A module no test imports: its tool still counts, at 0%.
UNTESTED = """
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool


@tool("delete_item", errors=[ErrorContract(reason="item_pinned", code=JsonRpcErrorCode.CONFLICT,
      when="Pinned items stay", recovery="Call list_items to find an item that is not pinned.")])
def delete_item(item_id: str) -> str:
    return item_id
"""

TESTS = """
from mcp_fusion.testing import run_tool_contract_sync
import server


def test_missing():
    assert run_tool_contract_sync(server.get_item, {"item_id": "missing"}).failure.reason == "item_missing"


def test_locked():
    result = run_tool_contract_sync(server.get_item, {"item_id": "locked"})
    assert (result.failure.reason, result.failure.code) == ("item_locked", "CONFLICT")


def test_archived():
    assert run_tool_contract_sync(server.get_item, {"item_id": "archived"}).failure.reason == "item_archived"


def test_undeclared():
    assert run_tool_contract_sync(server.get_item, {"item_id": "gone"}).failure.code == "INTERNAL_ERROR"
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(server=SERVER, untested=UNTESTED, test_items=TESTS)
    return pytester


def table_of(result: pytest.RunResult) -> str:
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if "contract coverage" in line and line.startswith("-"))
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^=+ .* in [\d.]+s", lines[i]))
    return "\n".join(lines[start + 1 : end])


@pytest.mark.slow  # a pytest run inside the test (2-3 s)
def test_the_table_counts_exercised_missing_and_flagged_reasons(project: pytest.Pytester) -> None:
    result = project.runpytest("--contract-coverage")
    assert result.ret == 0
    assert table_of(result) == textwrap.dedent(
        """\
        Contracts read by fusion-lint from .: 3 tools, 0 resources, 4 declared reasons

        Name              Reasons  Exercised  Cover  Missing
        tool delete_item        1          0     0%  item_pinned
        tool get_item           3          2    67%  item_locked FLAGGED (raised as CONFLICT, declared FORBIDDEN)
        ----------------------------------------------------
        TOTAL                   4          2    50%
        No contract (not counted): tool list_items
        Raised without being declared (not counted):
          tool get_item: fail('item_gone'): the contract does not declare it, the model read a masked INTERNAL_ERROR (1x)"""
    )


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_a_deliberately_untested_reason_is_missing_and_fails_under_100(project: pytest.Pytester) -> None:
    # Only get_item now, its service fixed to raise item_locked as declared; then item_archived goes untested.
    project.makepyfile(
        untested="",
        server=SERVER.replace("conflict", "forbidden"),
        test_items=TESTS.replace('("item_locked", "CONFLICT")', '("item_locked", "FORBIDDEN")'),
    )
    covered = project.runpytest("--contract-coverage", "--contract-coverage-fail-under=100")
    assert covered.ret == 0
    covered.stdout.fnmatch_lines(
        ["TOTAL * 3 * 3 * 100%", "Required contract coverage of 100% reached. Total contract coverage: 100.00%"]
    )
    untested = project.runpytest("--contract-coverage", "--contract-coverage-fail-under=100", "-k", "not archived")
    assert untested.ret == pytest.ExitCode.TESTS_FAILED
    untested.stdout.fnmatch_lines(
        [
            "tool get_item * 3 * 2 * 67%  item_archived",
            "FAIL Required contract coverage of 100% not reached. Total contract coverage: 66.67%",
            "* 3 passed, 1 deselected in *",
        ]
    )
    lower = project.runpytest("--contract-coverage", "--contract-coverage-fail-under=66", "-k", "not archived")
    assert lower.ret == 0


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_a_service_raising_a_declared_reason_with_another_code_is_flagged_not_covered(project: pytest.Pytester) -> None:
    report = project.path / "coverage.json"
    result = project.runpytest("--contract-coverage", f"--contract-coverage-report={report}", "-k", "locked")
    assert result.ret == 0
    data = json.loads(report.read_text())
    get_item = next(d for d in data["definitions"] if d["name"] == "get_item")
    locked = next(r for r in get_item["reasons"] if r["reason"] == "item_locked")
    assert locked == {
        "reason": "item_locked",
        "declared_code": "FORBIDDEN",
        "status": "flagged",
        "why": "raised as CONFLICT, declared FORBIDDEN",
        "seen": [{"code": "CONFLICT", "count": 1, "recovery_on_wire": True}],
    }
    assert get_item["exercised"] == 0 and data["totals"]["flagged"] == 1 and data["totals"]["percent"] == 0


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_the_json_report(project: pytest.Pytester) -> None:
    result = project.runpytest("--contract-coverage", "--contract-coverage-report=out/coverage.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["Contract coverage report written to out/coverage.json"])
    data = json.loads((project.path / "out" / "coverage.json").read_text())
    assert data["format"] == "fusion-contract-coverage" and data["version"] == 1
    assert data["universe"] == {"source": "linter", "paths": ["."], "problems": []}
    assert data["totals"] == {"declared": 4, "exercised": 2, "flagged": 1, "missing": 1, "percent": 50.0}
    names = [(d["kind"], d["name"], d["declared"], d["exercised"]) for d in data["definitions"]]
    assert names == [("tool", "delete_item", 1, 0), ("tool", "get_item", 3, 2), ("tool", "list_items", 0, 0)]
    get_item = data["definitions"][1]
    assert [(r["reason"], r["status"]) for r in get_item["reasons"]] == [
        ("item_missing", "exercised"),
        ("item_locked", "flagged"),
        ("item_archived", "exercised"),
    ]
    assert get_item["undeclared"] == [
        {"reason": "item_gone", "code": "INTERNAL_ERROR", "undeclared_fail": True, "count": 1}
    ]
    assert data["outside_universe"] == []


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_the_universe_from_a_lockfile(project: pytest.Pytester) -> None:
    from mcp_fusion.lockfile import build_lock, write_lock

    write_lock(
        project.path / "fusion-contracts.lock",
        build_lock(
            [
                {
                    "kind": "tool",
                    "name": "get_item",
                    "entries": [
                        {"reason": "item_missing", "code": "NOT_FOUND"},
                        {"reason": "item_expired", "code": "CONFLICT"},
                    ],
                },
            ]
        ),
    )
    result = project.runpytest("--contract-coverage", "--contract-coverage-lock=fusion-contracts.lock")
    assert result.ret == 0
    table = table_of(result)
    assert (
        table.splitlines()[0]
        == "Contracts from the lockfile fusion-contracts.lock: 1 tool, 0 resources, 2 declared reasons"
    )
    assert "tool get_item        2          1    50%  item_expired" in table
    # Raised, but not in the lockfile: listed, never counted.
    assert (
        "  tool get_item: item_locked as CONFLICT (1x)" in table
        and "  tool get_item: item_archived as CONFLICT (1x)" in table
    )


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_paths_choose_what_the_linter_reads(project: pytest.Pytester) -> None:
    result = project.runpytest("--contract-coverage", "--contract-coverage-paths=untested.py")
    assert result.ret == 0
    table = table_of(result)
    assert (
        table.splitlines()[0]
        == "Contracts read by fusion-lint from untested.py: 1 tool, 0 resources, 1 declared reason"
    )
    assert "TOTAL  " in table and "0%" in table
    # get_item reached the boundary but is not in these paths: listed with the contract it runs with.
    assert (
        "  tool get_item: 2 of 3 reasons exercised; not covered: item_locked FLAGGED (raised as CONFLICT, declared FORBIDDEN)"
        in table
    )


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_ini_keys_configure_it(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\ncontract_coverage_paths = server.py\ncontract_coverage_fail_under = 80\n")
    result = project.runpytest("--contract-coverage")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["Contracts read by fusion-lint from server.py: *", "FAIL Required contract coverage of 80% not reached. *"]
    )


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_pyproject_turns_it_on_for_good(project: pytest.Pytester) -> None:
    # docs/adopting.md's snippet: on for every run, against one folder, with a threshold.
    project.mkdir("helpdesk")
    (project.path / "server.py").rename(project.path / "helpdesk" / "server.py")
    project.makepyprojecttoml(
        '[tool.pytest.ini_options]\naddopts = "--contract-coverage"\n'
        'contract_coverage_paths = ["helpdesk"]\ncontract_coverage_fail_under = "100"\n'
    )
    project.syspathinsert(project.path / "helpdesk")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "Contracts read by fusion-lint from helpdesk: 2 tools, 0 resources, 3 declared reasons",
            "FAIL Required contract coverage of 100% not reached. *",
        ]
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--contract-coverage-fail-under=120"], "*expected a percentage between 0 and 100, got '120'*"),
        (["--contract-coverage-paths=nowhere"], "*--contract-coverage-paths: *nowhere: no such file or directory*"),
        (["--contract-coverage-lock=missing.lock"], "*--contract-coverage-lock: *missing.lock: no lockfile here*"),
        (
            ["--contract-coverage-lock=server.py", "--contract-coverage-paths=server.py"],
            "*from a lockfile or from paths, not both*",
        ),
    ],
)
def test_bad_options_are_usage_errors(project: pytest.Pytester, arguments: list[str], message: str) -> None:
    result = project.runpytest("--contract-coverage", *arguments)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_a_config_the_linter_refuses_fails_the_run_saying_so(project: pytest.Pytester) -> None:
    project.makefile(".toml", pyproject="[tool.fusion-lint]\nselect = 3\n")
    result = project.runpytest("--contract-coverage")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["contract coverage: cannot read the declared reasons: *pyproject.toml*select*"])


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_nothing_declared_fails_under_any_threshold(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest("--contract-coverage", "--contract-coverage-fail-under=0")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["No declared reasons: nothing to measure.", "FAIL Required contract coverage of 0% *"])


# -- off ----------------------------------------------------------------------------------------


def normalized(result: pytest.RunResult) -> list[str]:
    """The output without durations, and without pytest's own header line naming installed plugin packages
    (it names every distribution with a pytest11 entry point, ours as ``fusion-lint-0.1.0``)."""
    return [re.sub(r"in [\d.]+s", "in Ns", line) for line in result.outlines if not line.startswith("plugins: ")]


@pytest.mark.slow  # a pytest run inside the test (about 2 s)
def test_off_the_output_is_the_output_without_the_plugin(project: pytest.Pytester) -> None:
    with_plugin = project.runpytest("-p", "no:cacheprovider")
    without_plugin = project.runpytest("-p", "no:cacheprovider", "-p", "no:fusion-contract-coverage")
    assert with_plugin.ret == without_plugin.ret == 0
    assert normalized(with_plugin) == normalized(without_plugin)
    assert not any("contract coverage" in line for line in with_plugin.outlines)
    assert not (project.path / ".fusion_lint_cache").exists()  # the linter never ran


def test_off_nothing_is_registered_or_listening(project: pytest.Pytester) -> None:
    config = project.parseconfigure()
    manager = config.pluginmanager
    assert manager.has_plugin("fusion-contract-coverage")  # the entry point is installed
    assert not manager.has_plugin("fusion-contract-coverage-session")
    on = project.parseconfigure("--contract-coverage")
    assert on.pluginmanager.has_plugin("fusion-contract-coverage-session")
    assert len(boundary.failure_observers) == 1
    on._ensure_unconfigure()
    config._ensure_unconfigure()
    assert boundary.failure_observers == []


def test_the_plugin_is_registered_through_pytest11() -> None:
    from importlib.metadata import entry_points

    (found,) = [point for point in entry_points(group="pytest11") if point.name == "fusion-contract-coverage"]
    assert found.value == "fusion_lint.pytest_plugin"


def test_the_entry_point_module_imports_nothing_heavy() -> None:
    code = "import sys, fusion_lint.pytest_plugin; print(sorted(m for m in ('mcp_fusion', 'pydantic', 'libcst', 'mcp') if m in sys.modules))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
