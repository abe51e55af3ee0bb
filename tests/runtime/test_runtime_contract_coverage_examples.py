"""The example servers' contract suites (``tests/contracts/``) under ``--contract-coverage`` (issue 22).

Each suite runs in a pytest subprocess, as the README's quickstart runs it, against the contracts
fusion-lint reads from the server's own files. The clean server reaches 100%; leaving one test out
makes that reason missing and fails ``--contract-coverage-fail-under=100``. The example server with
its deliberate mistakes reaches every reason but the three its ``# demo:`` markers break. The framework
servers' suite is measured in ``test_runtime_contract_coverage_static.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from framework_clients import MCP_MAJOR, REPO_ROOT

pytestmark = pytest.mark.slow  # a pytest subprocess each (3-5 s)
#: The FusionServer examples serve with mcp 2.x; the matrix's mcp 1.x environments run the framework suite only.
needs_fusion_server = pytest.mark.skipif(MCP_MAJOR != 2, reason="FusionServer needs mcp 2.x (the [server] extra)")


def run_suite(suite: str, *options: str, report: Path | None = None) -> tuple[subprocess.CompletedProcess[str], dict]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        f"tests/contracts/{suite}",
        "--contract-coverage",
        *options,
    ]
    if report is not None:
        command.append(f"--contract-coverage-report={report}")
    completed = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    return completed, json.loads(report.read_text()) if report is not None and report.exists() else {}


def statuses(data: dict) -> dict[tuple[str, str, str], str]:
    return {(d["kind"], d["name"], r["reason"]): r["status"] for d in data["definitions"] for r in d["reasons"]}


@needs_fusion_server
def test_the_clean_server_reaches_100_percent(tmp_path: Path) -> None:
    completed, data = run_suite(
        "test_contracts_clean_server.py",
        "--contract-coverage-paths=fixtures/clean_server.py",
        "--contract-coverage-fail-under=100",
        report=tmp_path / "clean.json",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Required contract coverage of 100% reached. Total contract coverage: 100.00%" in completed.stdout
    assert data["totals"] == {"declared": 6, "exercised": 6, "flagged": 0, "missing": 0, "percent": 100.0}


@needs_fusion_server
def test_a_deliberately_untested_reason_is_missing_and_fails_the_run(tmp_path: Path) -> None:
    completed, data = run_suite(
        "test_contracts_clean_server.py",
        "--contract-coverage-paths=fixtures/clean_server.py",
        "--contract-coverage-fail-under=100",
        "-k",
        "not notebook_full",
        report=tmp_path / "clean.json",
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert re.search(r"^tool create_note +2 +1 +50%  notebook_full$", completed.stdout, re.M), completed.stdout
    assert "FAIL Required contract coverage of 100% not reached. Total contract coverage: 83.33%" in completed.stdout
    assert "5 passed, 1 deselected" in completed.stdout
    assert [key for key, status in statuses(data).items() if status != "exercised"] == [
        ("tool", "create_note", "notebook_full")
    ]


@needs_fusion_server
def test_the_example_server_misses_exactly_the_reasons_its_demo_mistakes_break(tmp_path: Path) -> None:
    completed, data = run_suite(
        "test_contracts_example_server.py",
        "--contract-coverage-paths=fixtures/example_server",
        report=tmp_path / "example.json",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    not_covered = {key: status for key, status in statuses(data).items() if status != "exercised"}
    assert not_covered == {
        ("tool", "pay_invoice", "card_declined"): "flagged",  # FL206: the service raises it as CONFLICT
        ("tool", "void_invoice", "already_void"): "missing",  # FL204: ctx.fail() is not raised
        ("tool", "void_invoice", "invoice_locked"): "missing",  # FL202: nothing raises it
    }
    assert data["totals"] == {"declared": 16, "exercised": 13, "flagged": 1, "missing": 2, "percent": 81.25}
    # Each is where the fixture marks a deliberate mistake.
    source = {path.name: path.read_text() for path in (REPO_ROOT / "fixtures" / "example_server").glob("*.py")}
    assert '{"reason": "card_declined"})  # demo: FL206' in source["services.py"]
    assert 'ctx.fail("already_void")  # demo: FL204' in source["tools.py"]
    assert 'reason="invoice_locked",  # demo: FL202' in source["tools.py"]
    void = next(d for d in data["definitions"] if d["name"] == "void_invoice")
    assert void["undeclared"] == [
        {"reason": "invoice_archived", "code": "INTERNAL_ERROR", "undeclared_fail": True, "count": 1}
    ]
    # The README's quickstart shows this run's output: it is the real one.
    assert readme_output(README_COMMAND) == report_lines(completed.stdout)


README_COMMAND = (
    "python -m pytest tests/contracts/test_contracts_example_server.py --contract-coverage "
    "--contract-coverage-paths fixtures/example_server"
)


def readme_output(command: str, page: str = "README.md") -> list[str]:
    """The output block the README (or another page of the docs) shows after ``command``, from its
    separator line to the table's end."""
    text = (REPO_ROOT / page).read_text(encoding="utf-8")
    after = text[text.index(f"{command}\n```") :]
    block = after[after.index("```text\n") + len("```text\n") :]
    return report_lines(block[: block.index("```")])


def report_lines(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("-") and "contract coverage" in line)
    end = next(
        i for i in range(start, len(lines)) if re.search(r"\d+ passed|^Contract coverage report written", lines[i])
    )
    return lines[start:end]
