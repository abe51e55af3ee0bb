"""``pytest --contract-coverage``: which declared failure reasons the tests really made happen (issue 22).

Registered through the ``pytest11`` entry point and off unless asked: without ``--contract-coverage``
it adds its options to ``pytest --help`` and nothing else (no hook of its own runs, nothing is
printed, nothing but this small module is imported).

On, it listens at the failure boundary of ``mcp_fusion`` for the whole session — every call through
``run_tool_contract``, an in-memory client, or a stdio/HTTP server the test runs in its own process
— and at the end compares what reached it with the reasons the project declares: its contracts as
``fusion-lint`` reads them statically (so a tool no test imports counts, at 0%), or a committed
lockfile. It prints one row per tool and resource, writes the report as JSON on request, and fails
the session under a threshold.

Options (each also an ini key, ``contract_coverage_paths`` & co.; paths on the command line are
relative to the current directory, in an ini file to that file's directory):

``--contract-coverage``                   turn it on
``--contract-coverage-paths=PATH``        what fusion-lint reads for the declared reasons (repeatable;
                                          default: the project, as ``fusion-lint lock`` finds it from
                                          pytest's rootdir)
``--contract-coverage-lock=PATH``         the declared reasons of a lockfile instead
``--contract-coverage-report=PATH``       write the report as JSON
``--contract-coverage-fail-under=PERCENT`` fail the session when fewer reasons are exercised
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

#: The name of the entry point (``-p no:fusion-contract-coverage`` unloads it) and of the session recorder.
ENTRY_POINT = "fusion-contract-coverage"
PLUGIN_NAME = "fusion-contract-coverage-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("contract-coverage", "contract coverage (fusion-lint)")
    group.addoption(
        "--contract-coverage",
        action="store_true",
        dest="contract_coverage",
        default=False,
        help="report which declared failure reasons of the MCP tools the tests made happen",
    )
    group.addoption(
        "--contract-coverage-paths",
        action="append",
        dest="contract_coverage_paths",
        metavar="PATH",
        default=None,
        help="files or directories whose contracts fusion-lint reads (repeatable; "
        "default: the project, found from the rootdir as `fusion-lint lock` finds it)",
    )
    group.addoption(
        "--contract-coverage-lock",
        dest="contract_coverage_lock",
        metavar="PATH",
        default=None,
        help="take the declared reasons from this lockfile (fusion-contracts.lock) instead",
    )
    group.addoption(
        "--contract-coverage-report",
        dest="contract_coverage_report",
        metavar="PATH",
        default=None,
        help="write the contract coverage report as JSON to PATH",
    )
    group.addoption(
        "--contract-coverage-fail-under",
        dest="contract_coverage_fail_under",
        metavar="PERCENT",
        type=_percent,
        default=None,
        help="fail when fewer than PERCENT of the declared reasons are exercised (a flagged reason does not count)",
    )
    parser.addini("contract_coverage_paths", "what fusion-lint reads for the declared reasons", type="paths")
    parser.addini("contract_coverage_lock", "take the declared reasons from this lockfile", type="string")
    parser.addini("contract_coverage_report", "write the contract coverage report as JSON here", type="string")
    parser.addini("contract_coverage_fail_under", "fail under this percentage of exercised reasons", type="string")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("contract_coverage"):
        return
    if config.getoption("numprocesses", None):
        raise pytest.UsageError(
            "--contract-coverage records what reaches the failure boundary in this process; it does not combine "
            "pytest-xdist workers (-n) yet: run it without -n"
        )
    config.pluginmanager.register(ContractCoverage(config, Settings.read(config)), PLUGIN_NAME)


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage between 0 and 100, got {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage between 0 and 100, got {text!r}")
    return value


class Settings:
    """What ``--contract-coverage-*`` (or the ini keys) asked for, paths made absolute and checked."""

    def __init__(
        self,
        rootdir: Path,
        paths: list[Path],
        lock: Path | None,
        report: Path | None,
        fail_under: float | None,
    ) -> None:
        self.rootdir, self.paths, self.lock, self.report, self.fail_under = rootdir, paths, lock, report, fail_under

    @classmethod
    def read(cls, config: pytest.Config) -> Settings:
        base = Path(config.inipath).parent if config.inipath else Path(config.rootpath)
        cwd = Path(os.getcwd())
        paths = [cwd / path for path in config.getoption("contract_coverage_paths") or ()]
        paths = paths or [Path(path) for path in config.getini("contract_coverage_paths")]
        lock = _path(config.getoption("contract_coverage_lock"), cwd) or _path(
            config.getini("contract_coverage_lock"), base
        )
        report = _path(config.getoption("contract_coverage_report"), cwd) or _path(
            config.getini("contract_coverage_report"), base
        )
        fail_under = config.getoption("contract_coverage_fail_under")
        if fail_under is None and config.getini("contract_coverage_fail_under"):
            try:
                fail_under = _percent(config.getini("contract_coverage_fail_under"))
            except argparse.ArgumentTypeError as exc:
                raise pytest.UsageError(f"contract_coverage_fail_under: {exc}") from None
        if lock is not None and paths:
            raise pytest.UsageError(
                "contract coverage takes its declared reasons from a lockfile or from paths, "
                "not both: drop --contract-coverage-lock or --contract-coverage-paths"
            )
        for path in paths:
            if not path.exists():
                raise pytest.UsageError(f"--contract-coverage-paths: {path}: no such file or directory")
        if lock is not None:
            from mcp_fusion.lockfile import LockfileError, load_lock

            try:
                load_lock(lock)
            except LockfileError as exc:
                raise pytest.UsageError(f"--contract-coverage-lock: {exc}") from None
        return cls(Path(config.rootpath), paths, lock, report, fail_under)

    def shown(self, path: Path) -> str:
        try:
            return os.path.relpath(path, self.rootdir) if path.is_absolute() else str(path)
        except ValueError:  # another drive (Windows)
            return str(path)


def _path(value: Any, base: Path) -> Path | None:
    return base / value if value else None


class ContractCoverage:
    """The session's recorder, then its report (registered only with ``--contract-coverage``)."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        from mcp_fusion.testing.recording import CoverageRecorder

        self.config = config
        self.settings = settings
        self.recorder = CoverageRecorder().install()
        self.report: Any = None
        self.error: str | None = None
        self.written: Path | None = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, None]:
        outcome = yield
        if outcome.excinfo is not None:  # interrupted: no report of a partial run
            return
        self.recorder.uninstall()
        try:
            self.report = self.build()
        except Exception as exc:  # noqa: BLE001 - a config or lockfile the linter refuses: say so, fail the run
            self.error = f"contract coverage: cannot read the declared reasons: {exc}"
            session.testsfailed += 1
            return
        if self.settings.report is not None:
            try:
                self.settings.report.parent.mkdir(parents=True, exist_ok=True)
                self.settings.report.write_text(self.report.dumps(), encoding="utf-8")
                self.written = self.settings.report
            except OSError as exc:
                self.error = f"contract coverage: cannot write {self.settings.report}: {exc.strerror or exc}"
                session.testsfailed += 1
        if self.below_threshold:
            session.testsfailed += 1

    def build(self) -> Any:
        from mcp_fusion.testing.report import build_report

        settings = self.settings
        if settings.lock is not None:
            from mcp_fusion.lockfile import load_lock

            universe = load_lock(settings.lock)
            source: dict[str, Any] = {"source": "lockfile", "lockfile": settings.shown(settings.lock)}
            problems: list[str] = []
        else:
            from fusion_lint.lock.lockfile import project_contracts

            contracts = project_contracts([str(path) for path in settings.paths], start=str(settings.rootdir))
            universe = contracts.document
            source = {"source": "linter", "paths": [settings.shown(Path(path)) for path in contracts.paths]}
            problems = [problem.describe() for problem in contracts.problems]
        return build_report(
            universe,
            self.recorder.observations,
            source=source,
            running_contracts=self.recorder.running_contracts,
            problems=problems,
        )

    @property
    def below_threshold(self) -> bool:
        fail_under = self.settings.fail_under
        return (
            self.report is not None
            and fail_under is not None
            and (self.report.percent < fail_under or not self.report.declared)
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from mcp_fusion.testing.table import render_table

        writer = terminalreporter
        writer.write_sep("-", "contract coverage")
        if self.report is not None:
            for line in render_table(self.report):
                writer.write_line(line)
            if self.written is not None:
                writer.write_line(f"Contract coverage report written to {self.settings.shown(self.written)}")
            fail_under = self.settings.fail_under
            if fail_under is not None:
                total = f"Total contract coverage: {self.report.percent:.2f}%"
                if self.below_threshold:
                    writer.write_line(
                        f"FAIL Required contract coverage of {fail_under:g}% not reached. {total}", red=True, bold=True
                    )
                else:
                    writer.write_line(f"Required contract coverage of {fail_under:g}% reached. {total}", green=True)
        if self.error is not None:
            writer.write_line(self.error, red=True, bold=True)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.recorder.uninstall()
