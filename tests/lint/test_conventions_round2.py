"""Ruff's habits, round two (DESIGN §13.5), one row each: the flag, key or command exercised on
fusion-lint, and — where ruff has it and ruff is installed — the same habit exercised on ruff, so
the convention we claim to share is checked against ruff's actual behaviour, not our memory of it.

Our project: ``app.py`` has a fixable FL204 and an unfixable FL300; ruff's: ``r.py`` has a
fixable F401.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

APP = """\
from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, tool


@tool("lookup", errors=[ErrorContract(reason="missing", code=JsonRpcErrorCode.NOT_FOUND,
                                      when="No such key", recovery="Call lookup again with an existing key.")])
def lookup(key: str, ctx: Context) -> str:
    if not key:
        ctx.fail("missing")
    if key == "x":
        raise ValueError("bad")
    return key
"""
RUFF = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")


def codes(text: str) -> list[str]:
    """The codes of a concise report's finding lines."""
    return [line.split(": ", 2)[1].split()[0] for line in text.splitlines() if ": FL" in line and line.count(":") >= 3]


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str


@dataclass
class Row:
    ours: list[str]  # fusion-lint's arguments (``check --no-cache`` is added unless it starts with a command)
    check: Callable[[Run, Path], None]
    ruff: list[str] | None = None  # ruff's arguments, when ruff has the habit
    ruff_check: Callable[[Run, Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    setup: Callable[[Path], None] | None = None  # writes what the row needs into our project
    ruff_setup: Callable[[Path], None] | None = None


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> Run:
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_OUTPUT_FORMAT")} | env
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=environment, timeout=120)
    return Run(done.returncode, done.stdout, done.stderr)


def ours(root: Path, args: list[str], env: dict[str, str]) -> Run:
    commands = ("clean", "clena", "rule", "version", "lock")
    full = args if args[:1] and args[0] in commands else ["check", "--no-cache", *args]
    return _run([sys.executable, "-m", "fusion_lint", *full], root, env)


# ----- the rows' checks ---------------------------------------------------------------------------


def _pylint_lines(run: Run, root: Path) -> None:
    lines = run.stdout.splitlines()
    assert lines and all(line.split(": [", 1)[0].count(":") == 1 and ": [" in line for line in lines), run.stdout


def _concise_lines(run: Run, root: Path) -> None:
    assert any(line.count(":") >= 3 and "[" in line for line in run.stdout.splitlines()), run.stdout
    assert "Found" in run.stdout


def _usage_error(*fragments: str) -> Callable[[Run, Path], None]:
    def check(run: Run, root: Path) -> None:
        assert run.exit_code == 2, (run.stdout, run.stderr)
        assert all(fragment in run.stderr for fragment in fragments), run.stderr

    return check


def _exit(code: int) -> Callable[[Run, Path], None]:
    def check(run: Run, root: Path) -> None:
        assert run.exit_code == code, (run.stdout, run.stderr)

    return check


def _statistics_json(run: Run, root: Path) -> None:
    counted = json.loads(run.stdout)
    assert [set(entry) for entry in counted] == [{"code", "name", "count", "fixable", "fixable_count"}] * len(counted)
    assert counted


def _statistics_json_ours(run: Run, root: Path) -> None:
    _statistics_json(run, root)
    assert json.loads(run.stdout) == [
        {"code": "FL204", "name": "fail-not-raised", "count": 1, "fixable": True, "fixable_count": 1},
        {"code": "FL300", "name": "prefer-mcp-error-in-handler", "count": 1, "fixable": False, "fixable_count": 0},
    ]


def _statistics_only(run: Run, root: Path) -> None:
    lines = run.stdout.splitlines()
    assert not any(line.startswith(("app.py:", "r.py:")) for line in lines), run.stdout  # no findings
    assert any("fixable" in line for line in lines) and any(line.startswith("Found") for line in lines)


def _report_in(relative: str) -> Callable[[Run, Path], None]:
    def check(run: Run, root: Path) -> None:
        assert run.stdout == "" and (root / relative).read_text().strip()

    return check


def _ignored(code: str) -> Callable[[Run, Path], None]:
    def check(run: Run, root: Path) -> None:
        assert code not in codes(run.stdout) and codes(run.stdout), run.stdout

    return check


def _fix_shown(run: Run, root: Path) -> None:
    assert "  fix: Raise the error" in run.stdout.splitlines()


def _ruff_fix_shown(run: Run, root: Path) -> None:
    assert "help: Remove unused import" in run.stdout


def _fixed_listed(run: Run, root: Path) -> None:
    assert "Fixed 1 finding:\n- app.py:\n    1 \u00d7 FL204 (fail-not-raised)\n" in run.stderr, run.stderr
    assert 'raise ctx.fail("missing")' in (root / "app.py").read_text()


def _ruff_fixed_listed(run: Run, root: Path) -> None:
    assert "Fixed 1 error:\n- r.py:\n    1 \u00d7 F401 (unused-import)" in run.stdout + run.stderr


def _write(relative: str, text: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)

    return setup


def _both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        for one in setups:
            one(root)

    return setup


def _cycle(first: str, second: str) -> Callable[[Run, Path], None]:
    def check(run: Run, root: Path) -> None:
        assert run.exit_code == 2 and first in run.stderr and second in run.stderr, run.stderr

    return check


def _finding_at(prefix: str) -> Callable[[Run, Path], None]:
    """A concise report holds a finding line starting with ``prefix`` (``path:line:col: CODE``)."""

    def check(run: Run, root: Path) -> None:
        assert any(line.startswith(prefix) for line in run.stdout.splitlines()), run.stdout

    return check


def _kept_in(relative: str, fragment: str) -> Callable[[Run, Path], None]:
    def check(run: Run, root: Path) -> None:
        assert fragment in (root / relative).read_text(), (root / relative).read_text()

    return check


# ----- the output formats ruff also has: each check reads what the format's consumer reads -------------


def _full_report(run: Run, root: Path) -> None:
    """``full``: each finding with its source line and a caret underline (ruff's default)."""
    lines = run.stdout.splitlines()
    assert any(re.match(r"^\s*\d+ \| +\S", line) for line in lines), run.stdout
    assert any(re.match(r"^\s*\| +\^+", line) for line in lines), run.stdout


_JSON_LINES_KEYS = {"code", "name", "severity", "message", "filename", "location", "end_location", "fix", "url"}


def _json_lines(run: Run, root: Path) -> None:
    """``json-lines``: one JSON object per line, with ruff's keys."""
    objects = [json.loads(line) for line in run.stdout.splitlines()]
    assert objects and all(_JSON_LINES_KEYS <= set(one) for one in objects), run.stdout
    assert all({"row", "column"} <= set(one["location"]) for one in objects)


def _gitlab(run: Run, root: Path) -> None:
    """``gitlab``: GitLab Code Quality's required fields, the path relative to the repository."""
    issues = json.loads(run.stdout)
    assert issues
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue), issue
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        location = issue["location"]
        assert not os.path.isabs(location["path"])
        assert "begin" in location.get("lines", {}) or "line" in location.get("positions", {}).get("begin", {})


def _rdjson(run: Run, root: Path) -> None:
    """``rdjson``: reviewdog's Diagnostic Format (source, diagnostics with a code and a range)."""
    report = json.loads(run.stdout)
    assert report["source"]["name"] and report["diagnostics"]
    for diagnostic in report["diagnostics"]:
        assert diagnostic["message"] and diagnostic["code"]["value"]
        assert {"line", "column"} <= set(diagnostic["location"]["range"]["start"])


_AZURE = re.compile(
    r"^##vso\[task\.logissue type=(error|warning);sourcepath=[^;]+;linenumber=\d+;columnnumber=\d+;code=[A-Z]+\d+;\]"
)


def _azure(run: Run, root: Path) -> None:
    """``azure``: Azure Pipelines' logging commands (lines not starting ``##vso`` are log text)."""
    commands = [line for line in run.stdout.splitlines() if line.startswith("##vso")]
    assert commands and all(_AZURE.match(line) for line in commands), run.stdout


def _sarif(run: Run, root: Path) -> None:
    """``sarif``: SARIF 2.1.0 results with a rule id and a physical location."""
    log = json.loads(run.stdout)
    (only,) = log["runs"]
    assert only["tool"]["driver"]["name"] and only["results"]
    for result in only["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert result["ruleId"] and location["artifactLocation"]["uri"] and location["region"]["startLine"] >= 1


def _sarif_relative(run: Run, root: Path) -> None:
    """Ours also: URIs relative to the repository root (ruff's are absolute file:// URIs, which
    GitHub code scanning maps only when run from the checkout's root)."""
    _sarif(run, root)
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(run.stdout)["runs"][0]["results"]
    ]
    assert uris and all(uri == "app.py" for uri in uris), uris


def _format(
    name: str, ours_check: Callable[[Run, Path], None], theirs: Callable[[Run, Path], None] | None = None
) -> Row:
    return Row(["--output-format", name], ours_check, ["--output-format", name], theirs or ours_check)


# A raise whose message is a multi-line string, the suppression after its closing quotes (line 12).
_APP_STRING_NOQA = APP.replace(
    'raise ValueError("bad")', 'raise ValueError("""\n        bad\n        """)  # noqa: FL300'
)
_LONG_WORDS = " ".join(["word"] * 30)

ROWS = {
    "format-full": _format("full", _full_report),
    "format-json-lines": _format("json-lines", _json_lines),
    "format-gitlab": _format("gitlab", _gitlab),
    "format-rdjson": _format("rdjson", _rdjson),
    "format-azure": _format("azure", _azure),
    "format-sarif": _format("sarif", _sarif_relative, _sarif),
    "output-format-in-config": Row(
        [],
        _pylint_lines,
        [],
        _pylint_lines,
        setup=_write("pyproject.toml", '[tool.fusion-lint]\noutput-format = "pylint"\n'),
        ruff_setup=_write("pyproject.toml", '[tool.ruff]\noutput-format = "pylint"\n'),
    ),
    "output-format-from-the-environment": Row(
        [],
        _pylint_lines,
        [],
        _pylint_lines,
        env={"FUSION_LINT_OUTPUT_FORMAT": "pylint", "RUFF_OUTPUT_FORMAT": "pylint"},
    ),
    "environment-beats-config": Row(
        [],
        _pylint_lines,
        [],
        _pylint_lines,
        env={"FUSION_LINT_OUTPUT_FORMAT": "pylint", "RUFF_OUTPUT_FORMAT": "pylint"},
        setup=_write("pyproject.toml", '[tool.fusion-lint]\noutput-format = "json"\n'),
        ruff_setup=_write("pyproject.toml", '[tool.ruff]\noutput-format = "json"\n'),
    ),
    "flag-beats-environment": Row(
        ["--output-format", "concise"],
        _concise_lines,
        ["--output-format", "concise"],
        _concise_lines,
        env={"FUSION_LINT_OUTPUT_FORMAT": "pylint", "RUFF_OUTPUT_FORMAT": "pylint"},
    ),
    "environment-unknown-format": Row(
        [],
        _usage_error("FUSION_LINT_OUTPUT_FORMAT", "'xml'"),
        [],
        _exit(2),
        env={"FUSION_LINT_OUTPUT_FORMAT": "xml", "RUFF_OUTPUT_FORMAT": "xml"},
    ),
    "config-unknown-format": Row(
        [],
        _usage_error("pyproject.toml", "output-format", "'xml'"),
        setup=_write("pyproject.toml", '[tool.fusion-lint]\noutput-format = "xml"\n'),
    ),
    "extend": Row(
        [],
        _ignored("FL300"),
        [],
        _exit(0),
        setup=_both(
            _write("sub/base.toml", 'ignore = ["FL300"]\n'),
            _write("pyproject.toml", '[tool.fusion-lint]\nextend = "sub/base.toml"\n'),
        ),
        ruff_setup=_both(
            _write("sub/base.toml", 'lint.ignore = ["F401"]\n'),
            _write("pyproject.toml", '[tool.ruff]\nextend = "sub/base.toml"\n'),
        ),
    ),
    "extend-chained-relative-to-each-file": Row(
        [],
        _ignored("FL300"),
        [],
        _exit(0),
        setup=_both(
            _write("sub/deeper/root.toml", 'ignore = ["FL300"]\n'),
            _write("sub/base.toml", 'extend = "deeper/root.toml"\n'),
            _write("pyproject.toml", '[tool.fusion-lint]\nextend = "sub/base.toml"\n'),
        ),
        ruff_setup=_both(
            _write("sub/deeper/root.toml", 'lint.ignore = ["F401"]\n'),
            _write("sub/base.toml", 'extend = "deeper/root.toml"\n'),
            _write("pyproject.toml", '[tool.ruff]\nextend = "sub/base.toml"\n'),
        ),
    ),
    "extend-cycle": Row(
        [],
        _cycle("a.toml", "b.toml"),
        [],
        _exit(2),
        setup=_both(
            _write("a.toml", 'extend = "b.toml"\n'),
            _write("b.toml", 'extend = "a.toml"\n'),
            _write("pyproject.toml", '[tool.fusion-lint]\nextend = "a.toml"\n'),
        ),
        ruff_setup=_both(
            _write("a.toml", 'extend = "b.toml"\n'),
            _write("b.toml", 'extend = "a.toml"\n'),
            _write("pyproject.toml", '[tool.ruff]\nextend = "a.toml"\n'),
        ),
    ),
    "config-inline": Row(
        ["--config", "ignore = ['FL300']"], _ignored("FL300"), ["--config", "lint.ignore = ['F401']"], _exit(0)
    ),
    "config-inline-bad-key": Row(
        ["--config", "bad-key = 1"],
        _usage_error("--config", "'bad-key'", "unknown key"),
        ["--config", "bad-key = 1"],
        _exit(2),
    ),
    "config-inline-bad-value": Row(["--config", "follow-calls = 'x'"], _usage_error("--config", "follow-calls")),
    "extend-ignore": Row(
        ["--extend-ignore", "FL300"],
        _ignored("FL300"),
        ["--extend-ignore", "F401"],
        _exit(0),
        setup=_write("pyproject.toml", '[tool.fusion-lint]\nignore = ["FL1"]\n'),
    ),
    "show-fixes": Row(["--show-fixes"], _fix_shown, ["--show-fixes", "--output-format", "full"], _ruff_fix_shown),
    "show-fixes-with-fix": Row(["--fix", "--show-fixes"], _fixed_listed, ["--fix", "--show-fixes"], _ruff_fixed_listed),
    "mistyped-command": Row(
        ["clena"], _usage_error("unknown command 'clena'", "did you mean 'clean'"), ["clena"], _exit(2)
    ),
    "output-file-makes-its-folder": Row(
        ["-o", "reports/lint/out.txt"],
        _report_in("reports/lint/out.txt"),
        ["-o", "reports/lint/out.txt"],
        _report_in("reports/lint/out.txt"),
    ),
    "statistics-alone": Row(["--statistics"], _statistics_only, ["--statistics"], _statistics_only),
    "noqa-after-a-multi-line-string": Row(
        [],
        _ignored("FL300"),
        ["--select", "E501"],
        _exit(0),
        setup=_write("app.py", _APP_STRING_NOQA),
        ruff_setup=_write("r.py", f'X = """\n{_LONG_WORDS}\n"""  # noqa: E501\n'),
    ),
    "unused-suppression-at-the-directive": Row(
        ["--report-unused-suppressions"],
        _finding_at("app.py:1:25: FL900"),
        ["--select", "RUF100", "--output-format", "concise"],
        _finding_at("r.py:1:15: RUF100"),
        setup=_write("app.py", "import os  # why: kept  # noqa: FL302\n" + APP),
        ruff_setup=_write("r.py", "x = 1  # why  # noqa: F401\n"),
    ),
    "unknown-directive": Row(
        [],
        _finding_at("app.py:11:17: FL900"),
        setup=_write("app.py", APP.replace("    return key", "    return key  # fusion-lint: ignored")),
    ),
    "cr-only-line-endings": Row(
        [],
        _finding_at("app.py:8:9: FL204"),
        ["--output-format", "concise"],
        _finding_at("r.py:2:8: F401"),
        setup=lambda root: (root / "app.py").write_bytes(APP.replace("\n", "\r").encode()),
        ruff_setup=lambda root: (root / "r.py").write_bytes(b"\rimport os\r"),
    ),
    "ruff-external-keeps-our-codes-in-a-shared-noqa": Row(
        [],
        _ignored("FL300"),
        ["--select", "F401,RUF100,RUF102", "--fix"],
        _kept_in("r.py", "# noqa: F401, FL300"),
        setup=_write("app.py", APP.replace('raise ValueError("bad")', 'raise ValueError("bad")  # noqa: F401, FL300')),
        ruff_setup=_both(
            _write("pyproject.toml", '[tool.ruff]\nlint.external = ["FL"]\n'),
            _write("r.py", "import os  # noqa: F401, FL300\n"),
        ),
    ),
    "statistics-json": Row(
        ["--statistics", "--output-format", "json"],
        _statistics_json_ours,
        ["--statistics", "--output-format", "json"],
        _statistics_json,
    ),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_convention(row: Row, tmp_path: Path) -> None:
    root = tmp_path / "ours"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (root / "app.py").write_text(APP)
    if row.setup:
        row.setup(root)
    row.check(ours(root, row.ours, row.env), root)
    if row.ruff is None:
        return  # ruff has no such habit
    if RUFF is None:
        pytest.skip("ruff is not installed: our half passed, the comparison with ruff is not made")
    theirs = tmp_path / "ruff"
    theirs.mkdir()
    (theirs / "pyproject.toml").write_text("[tool.ruff]\n")
    (theirs / "r.py").write_text("import os\n")
    if row.ruff_setup:
        row.ruff_setup(theirs)
    command = row.ruff if row.ruff[:1] == ["clena"] else ["check", "--no-cache", *row.ruff]
    assert row.ruff_check is not None
    row.ruff_check(_run([RUFF, *command], theirs, row.env), theirs)


# ----- the rows that need more than one run ----------------------------------------------------------


def test_clean_removes_only_the_cache_it_owns(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(APP)
    run = _run([sys.executable, "-m", "fusion_lint", "check", "."], tmp_path, {})
    assert run.exit_code == 1 and (tmp_path / ".fusion_lint_cache" / "CACHEDIR.TAG").is_file()

    cleaned = _run([sys.executable, "-m", "fusion_lint", "clean"], tmp_path, {})
    assert cleaned.exit_code == 0 and "Removed the cache" in cleaned.stdout, cleaned
    assert not (tmp_path / ".fusion_lint_cache").exists() and (tmp_path / "app.py").exists()
    again = _run([sys.executable, "-m", "fusion_lint", "clean"], tmp_path, {})
    assert again.exit_code == 0 and "nothing to remove" in again.stdout

    # A cache-dir that is someone else's folder: the cache goes into a subfolder of its own, and
    # clean removes that subfolder only.
    (tmp_path / "pyproject.toml").write_text('[tool.fusion-lint]\ncache-dir = "shared"\n')
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "notes.txt").write_text("mine")
    _run([sys.executable, "-m", "fusion_lint", "check", "."], tmp_path, {})
    assert (tmp_path / "shared" / "fusion-lint" / "CACHEDIR.TAG").is_file()
    cleaned = _run([sys.executable, "-m", "fusion_lint", "clean"], tmp_path, {})
    assert cleaned.exit_code == 0 and "Removed the cache" in cleaned.stdout
    assert (tmp_path / "shared" / "notes.txt").read_text() == "mine" and not (
        tmp_path / "shared" / "fusion-lint"
    ).exists()
    if RUFF is not None:  # ruff's clean removes its own cache as well
        (tmp_path / "r.py").write_text("import os\n")
        _run([RUFF, "check", "r.py"], tmp_path, {})
        assert (tmp_path / ".ruff_cache").is_dir()
        assert _run([RUFF, "clean"], tmp_path, {}).exit_code == 0 and not (tmp_path / ".ruff_cache").exists()


def test_a_bare_word_naming_nothing_is_a_usage_error_and_a_path_still_lints(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text(APP)
    nothing = _run([sys.executable, "-m", "fusion_lint", "nothing"], tmp_path, {})
    assert nothing.exit_code == 2 and "'nothing' is neither a command" in nothing.stderr
    assert ours(tmp_path, ["app.py"], {}).exit_code == 1
    # A file named like a command is a file: it is linted, not taken for the command.
    (tmp_path / "clena").mkdir()
    (tmp_path / "clena" / "x.py").write_text(APP)
    assert codes(_run([sys.executable, "-m", "fusion_lint", "clena", "--no-cache"], tmp_path, {}).stdout) == [
        "FL204",
        "FL300",
    ]


SIBLING_TOOL = APP.replace('"lookup"', '"find_customer"').replace("def lookup", "def find_customer")
UNKNOWN_TOOL_APP = APP.replace("Call lookup again with an existing key.", "Call find_customer first, then call lookup.")


def test_config_from_a_parent_folder_keeps_the_project_root(tmp_path: Path) -> None:
    """``--config ../base.toml`` sets the settings, never where the project is: a sibling
    project's tools stay out of FL401's vocabulary."""
    (tmp_path / "base.toml").write_text('select = ["FL401"]\n')
    (tmp_path / "sibling").mkdir()
    (tmp_path / "sibling" / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "sibling" / "tools.py").write_text(SIBLING_TOOL)
    app = tmp_path / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (app / "server.py").write_text(UNKNOWN_TOOL_APP)

    forced = ours(app, ["--config", "../base.toml", "."], {})
    plain = ours(app, ["--select", "FL401", "."], {})
    assert codes(forced.stdout) == codes(plain.stdout) == ["FL401"], (forced.stdout, plain.stdout)
    assert "'find_customer'" in forced.stdout
    settings = ours(app, ["--config", "../base.toml", "--show-settings", "--output-format", "json", "server.py"], {})
    assert json.loads(settings.stdout)["project"]["root"] == str(app)


def test_extend_shows_its_chain_and_names_the_file_of_a_mistake(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.fusion-lint]\nextend = "../shared/base.toml"\nselect = ["FL2"]\n')
    (tmp_path / "app.py").write_text(APP)
    shared = tmp_path.parent / "shared"
    shared.mkdir(exist_ok=True)
    (shared / "base.toml").write_text('ignore = ["FL204"]\nextend-select = ["FL207"]\n')
    shown = json.loads(ours(tmp_path, ["--show-settings", "--output-format", "json", "app.py"], {}).stdout)
    assert shown["settings_extends"] == [str(shared / "base.toml")]
    assert shown["settings"]["select"] == ["FL2"] and shown["settings"]["ignore"] == ["FL204"]  # own key, base key
    assert shown["settings"]["extend-select"] == ["FL207"]
    (shared / "base.toml").write_text("follow-calls = -1\n")
    broken = ours(tmp_path, [], {})
    assert broken.exit_code == 2 and str(shared / "base.toml") in broken.stderr and "follow-calls" in broken.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.fusion-lint]\nextend = "missing.toml"\n')
    missing = ours(tmp_path, [], {})
    assert missing.exit_code == 2 and "extend" in missing.stderr and "missing.toml" in missing.stderr


def test_extend_select_adds_to_the_base_and_inline_config_beats_every_file(tmp_path: Path) -> None:
    from fusion_lint.config.settings import load_explicit, parse_override

    (tmp_path / "base.toml").write_text('extend-select = ["FL207"]\nfollow-calls = 5\n')
    (tmp_path / "fusion-lint.toml").write_text('extend = "base.toml"\nextend-select = ["FL300"]\n')
    loaded = load_explicit(tmp_path / "fusion-lint.toml")
    assert loaded.settings.extend_select == ["FL207", "FL300"] and loaded.settings.follow_calls == 5
    assert parse_override("follow-calls = 1\nrespect-gitignore = false") == {
        "follow_calls": 1,
        "respect_gitignore": False,
    }
    (tmp_path / "app.py").write_text(APP)
    shown = json.loads(
        ours(
            tmp_path, ["--config", "follow-calls = 1", "--show-settings", "--output-format", "json", "app.py"], {}
        ).stdout
    )
    assert shown["project"]["follow-calls"] == 1  # the config file says 5


def test_output_format_is_not_part_of_the_cache_key() -> None:
    from fusion_lint.config.settings import Settings

    assert Settings().model_dump_json() == Settings(output_format="gitlab").model_dump_json()
    assert Settings().model_dump_json() != Settings(follow_calls=1).model_dump_json()


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
def test_without_external_ruffs_fix_deletes_our_code_from_a_shared_noqa(tmp_path: Path) -> None:
    """Why the docs tell ruff users to set ``lint.external = ["FL"]``: ruff calls FL300 an invalid
    code (RUF102; RUF100 in older ruff) and its fix removes it from the comment."""
    assert RUFF is not None
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n")
    (tmp_path / "r.py").write_text("import os  # noqa: F401, FL300\n")
    _run([RUFF, "check", "--no-cache", "--select", "F401,RUF100,RUF102", "--fix"], tmp_path, {})
    assert (tmp_path / "r.py").read_text() == "import os  # noqa: F401\n"
    docs = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    assert 'lint.external = ["FL"]' in docs


def test_the_cache_never_lands_inside_a_package_named_as_the_argument(tmp_path: Path) -> None:
    """No config, ``fusion-lint pkg`` from the folder above: the cache is beside the package, where
    ruff puts its own, never inside it (it would ship in the package's wheel); ``clean pkg`` finds it."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "app.py").write_text(APP)
    for argument in ("pkg", "pkg/sub", "pkg/sub/app.py"):
        run = _run([sys.executable, "-m", "fusion_lint", "check", argument], tmp_path, {})
        assert run.exit_code == 1, run
        assert (tmp_path / ".fusion_lint_cache" / "CACHEDIR.TAG").is_file(), argument
        assert not list(package.rglob(".fusion_lint_cache")), argument
    cleaned = _run([sys.executable, "-m", "fusion_lint", "clean", "pkg"], tmp_path, {})
    assert "Removed the cache" in cleaned.stdout and not (tmp_path / ".fusion_lint_cache").exists(), cleaned
    if RUFF is not None:  # ruff's cache lands beside the package too
        _run([RUFF, "check", "pkg"], tmp_path, {})
        assert (tmp_path / ".ruff_cache").is_dir() and not list(package.rglob(".ruff_cache"))
