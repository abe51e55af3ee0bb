"""Shared helpers for the linter's tests: write a small project into ``tmp_path``, lint it, look at
what came out.

Every project gets a ``pyproject.toml`` with a ``[tool.fusion-lint]`` table so that ``tmp_path`` is
the project root (cross-file resolution, relative display paths and config lookup all start there),
and nothing from the repository's own configuration leaks into a test.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.check.report import Report
from fusion_lint.cli.main import main


@pytest.fixture(autouse=True, scope="session")
def _cache_key_outside_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The cache's per-user key (``$XDG_CACHE_HOME/fusion-lint/key``) lives in a temporary folder
    for the session, inherited by every subprocess, never in the real user's home."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


def write_project(root: Path, files: dict[str, str], config: str = "", dedent: bool = True) -> None:
    """Write ``files`` (relative path -> source) under ``root`` with a pyproject.toml."""
    pyproject = root / "pyproject.toml"
    if "pyproject.toml" not in files:
        pyproject.write_text("[tool.fusion-lint]\n" + textwrap.dedent(config))
    for relative, source in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(source) if dedent else source)


@dataclass
class Linted:
    """A lint report with the lookups the tests need."""

    report: Report
    root: Path

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.report.diagnostics

    def relative(self, diagnostic: Diagnostic) -> str:
        return Path(diagnostic.path).relative_to(self.root).as_posix()

    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    def of(self, code: str, path: str | None = None) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.code == code and (path is None or self.relative(d) == path)]

    def lines(self, code: str, path: str | None = None) -> list[int]:
        return [d.span.line for d in self.of(code, path)]

    def summary(self) -> list[tuple[str, str, int]]:
        """(code, relative path, line) of every diagnostic: handy in assertion messages."""
        return [(d.code, self.relative(d), d.span.line) for d in self.diagnostics]


LintProject = Callable[..., Linted]


@pytest.fixture
def lint_project(tmp_path: Path) -> LintProject:
    """``lint_project({"app.py": src}, select=[...], paths=[...], config="...")`` -> ``Linted``.

    Sources are dedented (pass ``dedent=False`` for snippets written flush left that must stay
    byte-exact). ``paths`` default to the whole root; ``select``/``ignore``/``extend_select`` are
    what the CLI flags would pass. Call it again to re-lint the same root with other files or flags.
    """

    def run(
        files: dict[str, str],
        *,
        paths: Sequence[str] | None = None,
        config: str = "",
        select: Iterable[str] | None = None,
        ignore: Iterable[str] = (),
        extend_select: Iterable[str] = (),
        dedent: bool = True,
    ) -> Linted:
        write_project(tmp_path, files, config, dedent=dedent)
        targets = [str(tmp_path / p) for p in paths] if paths is not None else [str(tmp_path)]
        options = Options(
            paths=targets,
            selection=Selection(
                select=list(select) if select is not None else None,
                ignore=list(ignore),
                extend_select=list(extend_select),
            ),
            use_cache=False,
            jobs=1,
        )
        return Linted(lint(options), tmp_path)

    return run


@dataclass
class CliOutcome:
    exit_code: int
    stdout: str
    stderr: str
    result: Result


@pytest.fixture
def run_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliOutcome]:
    """``run_cli("check", "app.py", "--no-cache")`` with ``tmp_path`` as the working directory."""
    monkeypatch.chdir(tmp_path)

    def run(*args: str, input: str | None = None) -> CliOutcome:
        runner = CliRunner()
        result = runner.invoke(main, list(args), input=input, catch_exceptions=True)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a crash inside the CLI is a bug, show its traceback
        return CliOutcome(result.exit_code, result.stdout, result.stderr, result)

    return run
