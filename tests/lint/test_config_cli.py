"""Configuration and the command line (DESIGN §6, §7): config errors are one line and exit 2,
selection by code, prefix and name, exit codes, and the text and json formats exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fusion_lint.config.settings import ConfigError, Settings, find_config

IMPORTS = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode\n"
# Line 3: FL107 (warning, reason format) and FL112 (warning, two-word recovery); line 5: FL300.
APP = (
    IMPORTS
    + '@tool("get_item", errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="Gone",\n'
    + '    reason="NoMatch", recovery="Retry later")])\n'
    + "def get_item(item_id: str, ctx):\n"
    + "    raise ValueError('bad')\n"
)
# Line 2: FL101 (warning); line 6: FL205 (error).
OTHER = (
    IMPORTS + '@tool("other", errors=[])\ndef other(): ...\n@tool("bare")\ndef bare(ctx):\n    raise ctx.fail("x")\n'
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, {"pyproject.toml": "[tool.fusion-lint]\n", "app.py": APP, "pkg/other.py": OTHER})
    return tmp_path


def codes_in(stdout: str) -> list[str]:
    return [line.split(": ", 2)[1].split()[0] for line in stdout.splitlines() if line.count(":") >= 3 and " FL" in line]


# ----- configuration errors -----------------------------------------------------------------------


CONFIG_ERRORS = {
    "unknown-key": ("selct = ['FL1']\n", ["key 'selct'", "unknown key", "select"]),
    "wrong-type": ("follow-calls = 'three'\n", ["key 'follow-calls'", "integer", "'three'"]),
    "wrong-type-bool": ("respect-gitignore = 1\n", ["key 'respect-gitignore'", "boolean"]),
    "wrong-list-item": ("select = ['FL1', 2]\n", ["key 'select'", "string"]),
    "out-of-range": ("recovery-min-words = 0\n", ["key 'recovery-min-words'", "greater than or equal to 1"]),
    "bad-module-name": ("runtime-modules = ['not a module']\n", ["key 'runtime-modules'", "dotted module names"]),
    "per-file-ignores-shape": (
        "per-file-ignores = { 'tests/*.py' = 'FL1' }\n",
        ["key 'per-file-ignores.\"tests/*.py\"'", "list"],
    ),
    "unknown-rule-in-select": ("select = ['FL9x']\n", ["key 'select'", "'FL9x'"]),
    "unknown-rule-in-per-file-ignores": (
        "per-file-ignores = { 'a.py' = ['nope'] }\n",
        ['per-file-ignores."a.py"', "'nope'"],
    ),
    "malformed-toml": ("select = [\n", ["invalid TOML"]),
}


@pytest.mark.parametrize(("table", "fragments"), CONFIG_ERRORS.values(), ids=CONFIG_ERRORS.keys())
def test_config_error_is_one_line_exit_2(run_cli, project: Path, table: str, fragments: list[str]) -> None:
    (project / "pyproject.toml").write_text("[tool.fusion-lint]\n" + table)
    outcome = run_cli("check", ".", "--no-cache")
    assert outcome.exit_code == 2
    assert outcome.stdout == ""
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1, outcome.stderr
    assert lines[0].startswith(f"fusion-lint: error: {project / 'pyproject.toml'}: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in outcome.stderr


def test_fusion_lint_toml_keys_at_top_level(run_cli, project: Path) -> None:
    (project / "fusion-lint.toml").write_text("select = ['FL101']\n")
    outcome = run_cli("check", "--no-cache")
    assert codes_in(outcome.stdout) == ["FL101"]
    (project / "fusion-lint.toml").write_text("bogus = 1\n")
    outcome = run_cli("check", "--no-cache")
    assert outcome.exit_code == 2
    assert outcome.stderr.startswith(f"fusion-lint: error: {project / 'fusion-lint.toml'}: key 'bogus'")


def test_config_is_found_walking_up_and_pyproject_without_table_is_skipped(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.fusion-lint]\nfollow-calls = 5\n",
            "sub/pyproject.toml": "[project]\nname = 'x'\n",
            "sub/deep/app.py": "",
        },
    )
    found = find_config(tmp_path / "sub" / "deep" / "app.py")
    assert found.path == tmp_path / "pyproject.toml" and found.settings.follow_calls == 5


def test_no_config_means_defaults(tmp_path: Path) -> None:
    if any((d / name).is_file() for d in tmp_path.parents for name in ("pyproject.toml", "fusion-lint.toml")):
        pytest.skip("a config file above the temporary directory")
    found = find_config(tmp_path)
    assert found.path is None and found.settings == Settings()
    assert found.settings.follow_calls == 3 and found.settings.runtime_modules == ["mcp_fusion"]


def test_explicit_config_file(run_cli, project: Path) -> None:
    (project / "strict.toml").write_text("[tool.fusion-lint]\nselect = ['FL3']\n")
    outcome = run_cli("check", "--config", "strict.toml", "--no-cache", ".")
    assert codes_in(outcome.stdout) == ["FL300"]
    assert codes_in(run_cli("--config", "strict.toml", "--no-cache", ".").stdout) == ["FL300"]


def test_config_error_type_carries_the_message() -> None:
    from fusion_lint.config.settings import parse_settings

    with pytest.raises(ConfigError, match=r"^f\.toml: \[tool\.fusion-lint\] key 'ignore': expected a valid list"):
        parse_settings({"ignore": "FL1"}, "f.toml")


# ----- selection --------------------------------------------------------------------------------


SELECTIONS = {
    "default": ([], ["FL107", "FL112", "FL300", "FL101", "FL205"]),
    "select-code": (["--select", "FL107"], ["FL107"]),
    "select-prefix": (["--select", "FL1"], ["FL107", "FL112", "FL101"]),
    "select-name": (["--select", "prefer-mcp-error-in-handler"], ["FL300"]),
    "select-comma-list": (["--select", "FL107,fail-without-contract"], ["FL107", "FL205"]),
    "select-repeated": (["--select", "FL107", "--select", "FL300"], ["FL107", "FL300"]),
    "ignore-code": (["--ignore", "FL107"], ["FL112", "FL300", "FL101", "FL205"]),
    "ignore-prefix": (["--ignore", "FL1"], ["FL300", "FL205"]),
    "ignore-name": (["--ignore", "error-contract-empty"], ["FL107", "FL112", "FL300", "FL205"]),
    "extend-select": (["--select", "FL3", "--extend-select", "FL205"], ["FL300", "FL205"]),
    "select-lowercase": (["--select", "fl10"], ["FL107", "FL101"]),
    "select-all": (["--select", "ALL", "--ignore", "FL1,FL2"], ["FL300"]),
}


@pytest.mark.parametrize(("flags", "expected"), SELECTIONS.values(), ids=SELECTIONS.keys())
def test_selection_flags(run_cli, project: Path, flags: list[str], expected: list[str]) -> None:
    outcome = run_cli("check", ".", "--no-cache", *flags)
    assert codes_in(outcome.stdout) == expected, outcome.stdout


def test_selection_from_config_and_flags_combine(run_cli, project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.fusion-lint]\nselect = ['FL1']\nignore = ['FL112']\n")
    assert codes_in(run_cli("check", ".", "--no-cache").stdout) == ["FL107", "FL101"]
    # --select replaces the config's select and its ignore (ruff's precedence); --ignore applies on top
    outcome = run_cli("check", ".", "--no-cache", "--select", "FL1,FL3", "--ignore", "FL101")
    assert codes_in(outcome.stdout) == ["FL107", "FL112", "FL300"]
    # without --select, the flags adjust the config's rules: --extend-select adds, --ignore takes away
    outcome = run_cli("check", ".", "--no-cache", "--extend-select", "FL300", "--ignore", "FL101")
    assert codes_in(outcome.stdout) == ["FL107", "FL300"]


def test_unknown_rule_in_a_flag_names_the_flag(run_cli, project: Path) -> None:
    outcome = run_cli("check", ".", "--no-cache", "--ignore", "FL107,nonsense")
    assert outcome.exit_code == 2
    assert outcome.stderr.startswith("fusion-lint: error: --ignore: unknown rule code, prefix or name 'nonsense'")


# ----- exit codes -------------------------------------------------------------------------------


def test_exit_codes(run_cli, project: Path) -> None:
    assert run_cli("check", ".", "--no-cache").exit_code == 1
    assert run_cli("check", ".", "--no-cache", "--exit-zero").exit_code == 0
    assert run_cli("check", ".", "--no-cache", "--select", "FL9").exit_code == 0  # FL900/FL999 only
    clean = run_cli("check", "pkg", "--no-cache", "--select", "FL3")
    assert (clean.exit_code, clean.stdout) == (0, "All checks passed (2 tools; 1 file checked).\n")
    missing = run_cli("check", "nope.py", "--no-cache")
    assert missing.exit_code == 2
    assert missing.stderr == "fusion-lint: error: nope.py: no such file or directory\n"


def test_default_command_and_default_path(run_cli, project: Path) -> None:
    explicit = run_cli("check", ".", "--no-cache")
    assert run_cli(".", "--no-cache").stdout == explicit.stdout
    assert run_cli("--no-cache").stdout == explicit.stdout


def test_python_dash_m_entry_point(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "--no-cache", "--select", "FL101", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stdout.startswith("pkg/other.py:2:")


# ----- output formats ----------------------------------------------------------------------------


def test_text_output_exactly(run_cli, project: Path) -> None:
    # Grouped per file (a blank line between files), then the summary line, then how many findings
    # a fix can take care of (FL107's renaming is unsafe: clients may switch on the reason).
    outcome = run_cli("check", ".", "--no-cache", "--ignore", "FL112,FL101")
    assert outcome.stdout == (
        "app.py:3:12: FL107 [error-contract-reason-format] tool 'get_item': reason 'NoMatch' is not "
        "snake_case; rename it to 'no_match'\n"
        "app.py:5:5: FL300 [prefer-mcp-error-in-handler] tool 'get_item': raise ValueError reaches the model as "
        "a masked INTERNAL_ERROR; raise ctx.fail(<reason>) or an error factory (invalid_params, not_found, ...) "
        "instead\n"
        "\n"
        "pkg/other.py:6:11: FL205 [fail-without-contract] tool 'bare': ctx.fail() in a definition that "
        "declares no contract (at runtime an INTERNAL_ERROR); declare errors=[ErrorContract(...)] on the "
        "definition\n"
        "\n"
        "Found 1 error, 2 warnings in 2 files (3 tools; 2 files checked).\n"
        "1 fixable with --fix --unsafe-fixes.\n"
    )


def test_text_summary_singular(run_cli, project: Path) -> None:
    outcome = run_cli("check", "app.py", "--no-cache", "--select", "FL300")
    assert outcome.stdout.splitlines()[-1] == "Found 0 errors, 1 warning in 1 file (1 tool; 1 file checked)."


def test_quiet_prints_diagnostics_only(run_cli, project: Path) -> None:
    outcome = run_cli("check", "app.py", "--no-cache", "--select", "FL300", "--quiet")
    assert (
        outcome.stdout.splitlines()
        == [line for line in outcome.stdout.splitlines() if line.startswith("app.py:5:5: FL300 ")]
        and outcome.stdout
    )
    clean = run_cli("check", "app.py", "--no-cache", "--select", "FL205", "--quiet")
    assert (clean.exit_code, clean.stdout) == (0, "")


def test_json_output(run_cli, project: Path) -> None:
    outcome = run_cli("check", ".", "--no-cache", "--output-format", "json")
    assert outcome.exit_code == 1
    records = json.loads(outcome.stdout)
    keys = {"code", "name", "severity", "message", "filename", "location", "end_location", "fix", "url"}
    assert all(keys <= set(record) for record in records)
    order = [(r["filename"], r["location"]["row"], r["location"]["column"]) for r in records]
    assert order == sorted(order)
    first = records[0]
    assert first["filename"] == "app.py"
    assert first["code"] == "FL107" and first["name"] == "error-contract-reason-format"
    assert first["severity"] == "warning"
    # 1-based rows and columns: the reason string starts at column 12 of line 3 and ends at 21.
    assert first["location"] == {"row": 3, "column": 12}
    assert first["end_location"] == {"row": 3, "column": 21}
    assert first["url"].startswith("https://")
    assert {r["code"] for r in records} == {"FL107", "FL112", "FL300", "FL101", "FL205"}
    assert {r["severity"] for r in records if r["code"] == "FL205"} == {"error"}


def test_json_output_of_a_clean_run_is_an_empty_list(run_cli, project: Path) -> None:
    outcome = run_cli("check", ".", "--no-cache", "--output-format", "json", "--select", "FL9")
    assert (outcome.exit_code, json.loads(outcome.stdout)) == (0, [])


def test_output_is_the_same_bytes_on_a_second_run(run_cli, project: Path) -> None:
    first = run_cli("check", ".")  # with the cache: cold, then warm
    second = run_cli("check", ".")
    assert first.stdout == second.stdout and first.exit_code == second.exit_code == 1


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--jobs", "0"], ["--jobs", "x>=1"]),
        (["--output-format", "xml"], ["--output-format", "'xml'", "'sarif'"]),
        (["--bogus"], ["--bogus"]),
        (["lock", "--bogus"], ["lock:", "--bogus"]),
        (["rule", "--all", "--bogus"], ["rule:", "--bogus"]),
    ],
)
def test_a_bad_flag_is_one_line_naming_the_flag_and_exit_2(run_cli, args: list[str], names: list[str]) -> None:
    outcome = run_cli(*args)
    assert outcome.exit_code == 2
    assert outcome.stdout == ""
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fusion-lint: error: "), outcome.stderr
    assert all(name in lines[0] for name in names), lines[0]
