"""The CLI habits of DESIGN §12.4, one row per flag: each exercised once with its documented effect.

The project: ``app.py`` has a fixable FL204 (line 8, a ``ctx.fail`` not raised) and an unfixable
FL300 (line 10); ``gen/made.py`` has an FL300; ``ignored.py`` (FL300) is listed in ``.gitignore``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fusion_lint import __version__

APP = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool


@tool("{name}", errors=[ErrorContract(reason="missing", code=JsonRpcErrorCode.NOT_FOUND,
                                      when="No such key", recovery="Call {name} again with an existing key.")])
def {name}(key: str, ctx: Context) -> str:
    if not key:
        ctx.fail("missing")
    if key == "x":
        raise ValueError("bad")
    return key
"""
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(APP.format(name="lookup"))
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "made.py").write_text(
        APP.format(name="made").replace('        ctx.fail("missing")\n', "        pass\n")
    )
    (tmp_path / "ignored.py").write_text(APP.format(name="ignored"))
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    (tmp_path / "lenient.toml").write_text('ignore = ["FL3"]\n')
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def found(stdout: str) -> list[tuple[str, str]]:
    """(path, code) of each diagnostic line of a text report (colours removed)."""
    pairs = []
    for line in ANSI.sub("", stdout).splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[3].startswith(" FL"):
            pairs.append((parts[0], parts[3].split()[0]))
    return pairs


DEFAULT = [("app.py", "FL204"), ("app.py", "FL300"), ("gen/made.py", "FL300")]


@dataclass
class Case:
    args: list[str]
    exit_code: int
    check: Callable[..., None]  # (outcome, project root) -> asserts the flag's effect
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None


def _version(outcome, root: Path) -> None:
    assert outcome.stdout == f"fusion-lint {__version__}\n"


def _version_json(outcome, root: Path) -> None:
    assert json.loads(outcome.stdout)["version"] == __version__


def _settings_text(outcome, root: Path) -> None:
    lines = outcome.stdout.splitlines()
    assert lines[0] == f"Resolved settings for: {root / 'app.py'}"
    assert lines[1] == f"Settings path: {root / 'pyproject.toml'}"
    assert 'select = ["FL300"]' in lines and "follow-calls = 3" in lines
    assert "select = (not set: the default)" in lines  # the config's (empty) table sets no selection


def _settings_json(outcome, root: Path) -> None:
    shown = json.loads(outcome.stdout)
    assert shown["settings_path"] == str(root / "pyproject.toml") and shown["enabled"] == ["FL300"]
    assert shown["project"]["runtime-modules"] == ["mcp_fusion"]


def _files(outcome, root: Path) -> None:
    assert outcome.stdout == "app.py\ngen/made.py\n"


def _only(expected: list[tuple[str, str]]) -> Callable[..., None]:
    def check(outcome, root: Path) -> None:
        assert found(outcome.stdout) == expected, outcome.stdout

    return check


def _nothing_printed(outcome, root: Path) -> None:
    assert (outcome.stdout, outcome.stderr) == ("", "")


def _output_file(outcome, root: Path) -> None:
    assert outcome.stdout == ""
    assert found((root / "report.txt").read_text()) == DEFAULT


def _output_file_json(outcome, root: Path) -> None:
    assert outcome.stdout == ""
    assert [d["code"] for d in json.loads((root / "out.json").read_text())] == ["FL204", "FL300", "FL300"]


def _folder_made(outcome, root: Path) -> None:
    assert outcome.stdout == "" and found((root / "missing" / "deeper" / "report.txt").read_text()) == DEFAULT


def _fixed(remaining: list[tuple[str, str]]) -> Callable[..., None]:
    def check(outcome, root: Path) -> None:
        assert 'raise ctx.fail("missing")' in (root / "app.py").read_text()
        assert found(outcome.stdout) == remaining, outcome.stdout

    return check


def _colored(outcome, root: Path) -> None:
    assert "\x1b[1mapp.py\x1b[0m:8:9: \x1b[31m\x1b[1mFL204\x1b[0m [fail-not-raised]" in outcome.stdout
    assert found(outcome.stdout) == DEFAULT


def _plain(outcome, root: Path) -> None:
    assert "\x1b[" not in outcome.stdout and found(outcome.stdout) == DEFAULT


def _rule_json(outcome, root: Path) -> None:
    shown = json.loads(outcome.stdout)
    assert {"name", "code", "linter", "summary", "fix", "explanation", "preview"} <= set(shown)
    assert (shown["code"], shown["name"], shown["preview"]) == ("FL204", "fail-not-raised", False)
    assert shown["fix"] == "Fix is sometimes available." and shown["explanation"].startswith("## FL204 fail-not-raised")


def _rules_json(outcome, root: Path) -> None:
    shown = json.loads(outcome.stdout)
    assert [r["code"] for r in shown][:2] == ["FL000", "FL001"] and shown[0]["fix"] == "Fix is not available."


def _statistics(outcome, root: Path) -> None:
    lines = outcome.stdout.splitlines()
    assert "    2  FL300  [ ] prefer-mcp-error-in-handler" in lines and "    1  FL204  [*] fail-not-raised" in lines


def _error(*fragments: str) -> Callable[..., None]:
    def check(outcome, root: Path) -> None:
        assert outcome.stdout == "" and len(outcome.stderr.splitlines()) == 1, outcome.stderr
        assert all(fragment in outcome.stderr for fragment in fragments), outcome.stderr

    return check


CASES = {
    "-V": Case(["-V"], 0, _version),
    "--version": Case(["--version"], 0, _version),
    "version": Case(["version"], 0, _version),
    "version-json": Case(["version", "--output-format", "json"], 0, _version_json),
    "--show-settings": Case(["--show-settings", "--select", "FL300", "app.py"], 0, _settings_text),
    "--show-settings-json": Case(
        ["--show-settings", "--select", "FL300", "--output-format", "json", "app.py"], 0, _settings_json
    ),
    "--show-files": Case(["--show-files"], 0, _files),
    "--config": Case(["--config", "lenient.toml"], 1, _only([("app.py", "FL204")])),
    "--isolated": Case(["--isolated", "--select", "FL3"], 1, _only([("app.py", "FL300"), ("gen/made.py", "FL300")])),
    "--isolated-with-config": Case(["--isolated", "--config", "lenient.toml"], 2, _error("--config", "--isolated")),
    "--output-file": Case(["--output-file", "report.txt"], 1, _output_file),
    "--output-file-json": Case(["-o", "out.json", "--output-format", "json"], 1, _output_file_json),
    "--output-file-makes-its-folder": Case(["--output-file", "missing/deeper/report.txt"], 1, _folder_made),
    "--fix": Case(["--fix"], 1, _fixed([("app.py", "FL300"), ("gen/made.py", "FL300")])),
    "--exit-non-zero-on-fix": Case(["--fix", "--exit-non-zero-on-fix", "--select", "FL204"], 1, _fixed([])),
    "--fix-alone-exits-0-when-all-fixed": Case(["--fix", "--select", "FL204"], 0, _fixed([])),
    "--fix-only": Case(["--fix-only"], 0, _fixed([])),
    "--fix-only-exit-non-zero-on-fix": Case(["--fix-only", "--exit-non-zero-on-fix"], 1, _fixed([])),
    "--silent": Case(["--silent"], 1, _nothing_printed),
    "--silent-config-error": Case(["--silent", "--select", "FL9x"], 2, _nothing_printed),
    "--exclude": Case(["--exclude", "gen"], 1, _only([("app.py", "FL204"), ("app.py", "FL300")])),
    "--exclude-replaces-defaults": Case(
        ["--exclude", "gen", "--select", "FL300", ".venv/tool.py"], 1, _only([(".venv/tool.py", "FL300")])
    ),
    "--extend-exclude": Case(["--extend-exclude", "gen/,app.py"], 0, _only([])),
    "--per-file-ignores": Case(
        ["--per-file-ignores", "gen/*.py:FL300", "--per-file-ignores", "app.py:FL2"], 1, _only([("app.py", "FL300")])
    ),
    "--per-file-ignores-bad": Case(
        ["--per-file-ignores", "gen/*.py"], 2, _error("--per-file-ignores", "PATTERN:CODES")
    ),
    "--extend-per-file-ignores": Case(
        ["--extend-per-file-ignores", "!app.py:FL300"], 1, _only([("app.py", "FL204"), ("app.py", "FL300")])
    ),
    "--no-respect-gitignore": Case(
        ["--no-respect-gitignore", "--select", "FL300"],
        1,
        _only([("app.py", "FL300"), ("gen/made.py", "FL300"), ("ignored.py", "FL300")]),
    ),
    "--color-always": Case(["--color", "always"], 1, _colored),
    "--color-never-beats-FORCE_COLOR": Case(["--color", "never"], 1, _plain, env={"FORCE_COLOR": "1"}),
    "--color-always-beats-NO_COLOR": Case(["--color", "always"], 1, _colored, env={"NO_COLOR": "1"}),
    "color-auto-off-the-terminal": Case([], 1, _plain),
    "FORCE_COLOR": Case([], 1, _colored, env={"FORCE_COLOR": "1"}),
    "NO_COLOR": Case([], 1, _plain, env={"NO_COLOR": "1"}),
    "rule-json": Case(["rule", "FL204", "--output-format", "json"], 0, _rule_json),
    "rule-all-json": Case(["rule", "--all", "--output-format", "json"], 0, _rules_json),
    "--statistics": Case(["--statistics"], 1, _statistics),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_cli_convention(run_cli, project: Path, monkeypatch: pytest.MonkeyPatch, case: Case) -> None:
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    if ".venv/tool.py" in case.args:
        (project / ".venv").mkdir()
        (project / ".venv" / "tool.py").write_text(APP.format(name="venv_tool"))
    own_command = case.args[:1] in (["rule"], ["version"], ["-V"], ["--version"])
    outcome = run_cli(*(case.args if own_command else ["check", "--no-cache", *case.args]), input=case.stdin)
    assert outcome.exit_code == case.exit_code, (outcome.stdout, outcome.stderr)
    case.check(outcome, project)


def test_a_default_exclude_applies_until_exclude_replaces_it(run_cli, project: Path) -> None:
    (project / ".venv").mkdir()
    (project / ".venv" / "tool.py").write_text(APP.format(name="venv_tool"))
    assert ".venv/tool.py" not in run_cli("check", "--no-cache", "--show-files").stdout
    assert ".venv/tool.py" in run_cli("check", "--no-cache", "--show-files", "--exclude", "gen").stdout


def test_exit_codes_are_documented_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "Exit codes: **0** no findings; **1** findings" in readme
    assert "--exit-non-zero-on-fix" in readme and "--fix-only" in readme


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal (POSIX)")
@pytest.mark.parametrize(("env", "colored"), [({}, True), ({"NO_COLOR": "1"}, False)], ids=["tty", "tty-NO_COLOR"])
def test_color_auto_is_on_at_a_terminal(project: Path, env: dict[str, str], colored: bool) -> None:
    """``--color auto`` (the default) colours a real terminal's report, unless NO_COLOR is set."""
    leader, follower = os.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")} | env
    try:
        run = subprocess.run(
            [sys.executable, "-m", "fusion_lint", "--no-cache", "app.py"],
            cwd=project,
            stdout=follower,
            stderr=subprocess.PIPE,
            env=environment,
            timeout=120,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    out = b"".join(chunks).decode()
    assert run.returncode == 1 and "FL204" in out, (out, run.stderr)
    assert ("\x1b[" in out) is colored, out
