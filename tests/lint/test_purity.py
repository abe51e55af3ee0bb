"""Rules and the fixes they describe read nothing and parse nothing (DESIGN §2.1): while the rule
phase (``engine.check``) and the building of fixes (``engine.build_fixes``) run, every way of
reading a file or parsing code raises. A rule that tried would turn into FL999 and change the
output, so the output must be exactly the golden one."""

from __future__ import annotations

import ast
import builtins
import io
import os
import pathlib
import tokenize
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import libcst
import pytest
from click.testing import CliRunner

import fusion_lint.check.engine as engine
from fusion_lint.cli.main import main

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"


class Forbidden(AssertionError):
    pass


FORBIDDEN: list[tuple[Any, str]] = [
    (builtins, "open"),
    (io, "open"),
    (io, "open_code"),
    (os, "open"),
    (os, "scandir"),
    (os, "listdir"),
    (os, "stat"),
    (os, "lstat"),
    (pathlib.Path, "read_bytes"),
    (pathlib.Path, "read_text"),
    (pathlib.Path, "open"),
    (pathlib.Path, "is_file"),
    (pathlib.Path, "exists"),
    (ast, "parse"),
    (builtins, "compile"),
    (tokenize, "open"),
    (tokenize, "generate_tokens"),
    (libcst, "parse_module"),
    (libcst, "parse_expression"),
    (libcst, "parse_statement"),
]


@contextmanager
def nothing_read_or_parsed() -> Iterator[list[str]]:
    """Every reader and parser raises (and is recorded) while the block runs."""
    attempts: list[str] = []
    saved = [(owner, name, getattr(owner, name)) for owner, name in FORBIDDEN]

    def refuse(name: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            attempts.append(name)
            raise Forbidden(f"{name} called while rules run")

        return refused

    for owner, name, _ in saved:
        setattr(owner, name, refuse(f"{getattr(owner, '__name__', owner)}.{name}"))
    try:
        yield attempts
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@pytest.fixture
def pure_rules(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make ``engine.check`` and ``engine.build_fixes`` run with every reader and parser refused."""
    attempts: list[str] = []
    for step in ("check", "build_fixes"):
        original = getattr(engine, step)

        def guarded(*args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            with nothing_read_or_parsed() as tried:
                try:
                    return _original(*args, **kwargs)
                finally:
                    attempts.extend(tried)

        monkeypatch.setattr(engine, step, guarded)
    return attempts


CASES = [
    ("fixtures.ALL", REPO, "fixtures", ("--select", "ALL")),
    ("examples", GOLDEN / "examples", ".", ()),
]


@pytest.mark.parametrize("output_format", ["json", "text"])
@pytest.mark.parametrize(("name", "cwd", "target", "flags"), CASES, ids=[case[0] for case in CASES])
def test_the_rule_phase_reads_and_parses_nothing(
    pure_rules: list[str],
    name: str,
    cwd: Path,
    target: str,
    flags: tuple[str, ...],
    output_format: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, [target, "--no-cache", "--output-format", output_format, *flags])
    assert pure_rules == [], f"the rules or the fixes tried: {sorted(set(pure_rules))}"
    assert result.stdout == (GOLDEN / "expected" / f"{name}.{output_format}").read_text()


@pytest.mark.slow
def test_the_guard_does_catch_a_rule_that_reads(pure_rules: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture can fail: a rule that reads a file is caught reading, and reported as FL999."""
    from fusion_lint.rules import fl300_prefer_mcp_error_in_handler as fl300

    def reading(self: object, function: Any, project: Any) -> Any:
        Path(function.path).read_bytes()
        return ()

    monkeypatch.setattr(fl300.PreferMcpErrorInHandler, "check_function", reading)
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(main, ["fixtures/example_server", "--no-cache", "--select", "FL300"])
    assert "pathlib.Path.read_bytes" in pure_rules or "Path.read_bytes" in pure_rules
    assert "FL999" in result.stdout
