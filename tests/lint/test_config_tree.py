"""The closest config governs each file, the ruff way (DESIGN §12.4): whatever the order of the
paths, for ``.``, in the editor; ``--config`` forces one, ``--isolated`` none; patterns relative to
the config's folder; which settings are per file and which are the project's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, lint
from fusion_lint.config.settings import CONFIG_FILES, DEFAULT_EXCLUDE

IMPORTS = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode\n"
# Line 4: FL300 (a builtin exception raised in a handler).
RAISES = IMPORTS + '@tool("{name}", errors=[])  # noqa: FL101\ndef {name}(item_id: str):\n    raise ValueError("bad")\n'
# Line 3: FL112 when recovery-min-words is above 4 ("Call get_item with an id": 5 words is fine at 5).
RECOVERY = (
    IMPORTS + '@tool("get_{name}", errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="Gone",\n'
    '    reason="no_match", recovery="Call get_{name} with another id.")])\n'
    "def get_{name}(item_id: str): ...\n"
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def found(outcome) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(path, code) of every diagnostic line of a text report."""
    pairs = []
    for line in outcome.stdout.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[3].startswith(" FL"):
            pairs.append((parts[0], parts[3].split()[0]))
    return pairs


@pytest.fixture
def two_configs(tmp_path: Path) -> Path:
    """The issue's tree: the root config ignores FL300, ``pkg/legacy``'s own config does not."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.fusion-lint]\nignore = ["FL300"]\n',
            "pkg/__init__.py": "",
            "pkg/tools.py": RAISES.format(name="tools"),
            "pkg/legacy/__init__.py": "",
            "pkg/legacy/pyproject.toml": "[project]\nname = 'legacy'\n\n[tool.fusion-lint]\n",
            "pkg/legacy/old.py": RAISES.format(name="old"),
        },
    )
    return tmp_path


ARGUMENTS = {
    "files": ["pkg/tools.py", "pkg/legacy/old.py"],
    "files-reversed": ["pkg/legacy/old.py", "pkg/tools.py"],
    "dot": ["."],
    "default": [],
    "directories": ["pkg/legacy", "pkg"],
}


@pytest.mark.parametrize("paths", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_each_file_is_governed_by_its_closest_config(run_cli, two_configs: Path, paths: list[str]) -> None:
    outcome = run_cli("check", "--no-cache", *paths)
    assert found(outcome) == [("pkg/legacy/old.py", "FL300")], outcome.stdout
    assert outcome.exit_code == 1


def test_a_file_alone_gets_its_own_config(run_cli, two_configs: Path) -> None:
    assert found(run_cli("check", "--no-cache", "pkg/tools.py")) == []
    assert found(run_cli("check", "--no-cache", "pkg/legacy/old.py")) == [("pkg/legacy/old.py", "FL300")]


def test_config_forces_one_for_every_file_and_isolated_uses_none(run_cli, two_configs: Path) -> None:
    (two_configs / "strict.toml").write_text('select = ["FL300"]\n')
    (two_configs / "lenient.toml").write_text('ignore = ["FL3"]\n')
    both = [("pkg/legacy/old.py", "FL300"), ("pkg/tools.py", "FL300")]
    assert found(run_cli("check", "--no-cache", "--config", "strict.toml", ".")) == both
    assert found(run_cli("check", "--no-cache", "--config", "lenient.toml", ".")) == []
    assert found(run_cli("check", "--no-cache", "--isolated", ".")) == both
    assert found(run_cli("check", "--no-cache", "--isolated", "pkg/tools.py")) == [("pkg/tools.py", "FL300")]


def test_select_on_the_command_line_beats_the_configs_ignore(run_cli, two_configs: Path) -> None:
    """The issue's defect: the root config ignores FL300 and ``--select FL300`` said "All checks passed"."""
    both = [("pkg/legacy/old.py", "FL300"), ("pkg/tools.py", "FL300")]
    assert found(run_cli("check", "--no-cache", "--select", "FL300", ".")) == both
    assert found(run_cli("check", "--no-cache", "--select", "prefer-mcp-error-in-handler", "pkg/tools.py")) == both[1:]
    # --ignore on the command line still applies on top of its own --select
    assert found(run_cli("check", "--no-cache", "--select", "FL3", "--ignore", "FL300", ".")) == []


def test_the_lsp_uses_the_same_config_per_file(two_configs: Path) -> None:
    pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")
    from test_lsp import LspClient

    client = LspClient(two_configs)
    try:
        client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": two_configs.as_uri(),
                "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
            },
        )
        client.notify("initialized", {})
        codes = {}
        for relative in ("pkg/tools.py", "pkg/legacy/old.py"):
            path = two_configs / relative
            uri = path.as_uri()
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": path.read_text()}},
            )
            codes[relative] = [d["code"] for d in client.diagnostics(uri, version=1)]
        assert codes == {"pkg/tools.py": [], "pkg/legacy/old.py": ["FL300"]}
        client.request("shutdown", None)
        client.notify("exit", None)
    finally:
        client.close()


def test_the_buffer_path_of_the_engine_agrees(two_configs: Path) -> None:
    """What the language server runs for a buffer: ``lint`` with ``stdin=(path, bytes)``."""
    for relative, expected in (("pkg/tools.py", []), ("pkg/legacy/old.py", ["FL300"])):
        path = str(two_configs / relative)
        report = lint(Options(paths=[path], stdin=(path, Path(path).read_bytes()), use_cache=False, jobs=1))
        assert [d.code for d in report.diagnostics] == expected, relative


# ----- which file of a folder is its config -------------------------------------------------------


def test_in_one_folder_the_dedicated_file_wins(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"app.py": RAISES.format(name="app"), "pyproject.toml": '[tool.fusion-lint]\nselect = ["FL1"]\n'})
    assert found(run_cli("check", "--no-cache")) == []
    (tmp_path / "fusion-lint.toml").write_text('select = ["FL3"]\n')
    assert found(run_cli("check", "--no-cache")) == [("app.py", "FL300")]
    (tmp_path / ".fusion-lint.toml").write_text('select = ["FL2"]\n')
    assert found(run_cli("check", "--no-cache")) == []
    shown = run_cli("check", "--show-settings", "app.py")
    assert f"Settings path: {tmp_path / '.fusion-lint.toml'}" in shown.stdout
    assert CONFIG_FILES == (".fusion-lint.toml", "fusion-lint.toml", "pyproject.toml")


def test_a_pyproject_without_the_table_is_no_config(run_cli, two_configs: Path) -> None:
    (two_configs / "pkg/legacy/pyproject.toml").write_text("[project]\nname = 'legacy'\n")
    assert found(run_cli("check", "--no-cache", ".")) == []  # the root's config governs legacy/ too


def test_a_bad_nested_config_names_its_file(run_cli, two_configs: Path) -> None:
    (two_configs / "pkg/legacy/pyproject.toml").write_text("[tool.fusion-lint]\nselect = ['FL3x']\n")
    outcome = run_cli("check", "--no-cache", ".")
    assert outcome.exit_code == 2
    assert outcome.stderr.startswith(f"fusion-lint: error: {two_configs / 'pkg/legacy/pyproject.toml'}: ")
    assert "key 'select'" in outcome.stderr and "'FL3x'" in outcome.stderr


# ----- patterns are relative to the config's folder -------------------------------------------------


PER_FILE_IGNORES = {
    "relative": '"old.py"',
    "dot-slash": '"./old.py"',
    "glob": '"*.py"',
    "double-star": '"**/old.py"',
    "directory": '"./"',
}


@pytest.mark.parametrize("pattern", PER_FILE_IGNORES.values(), ids=PER_FILE_IGNORES.keys())
def test_per_file_ignores_are_relative_to_their_config(run_cli, two_configs: Path, pattern: str) -> None:
    (two_configs / "pkg/legacy/pyproject.toml").write_text(
        f"[tool.fusion-lint]\nper-file-ignores = {{ {pattern} = ['FL300'] }}\n"
    )
    assert found(run_cli("check", "--no-cache", "--select", "FL300", ".")) == [("pkg/tools.py", "FL300")]


def test_per_file_ignores_absolute_and_negated(run_cli, two_configs: Path) -> None:
    config = two_configs / "pyproject.toml"
    absolute = (two_configs / "pkg/tools.py").as_posix()
    config.write_text(f'[tool.fusion-lint]\nper-file-ignores = {{ "{absolute}" = ["FL300"] }}\n')
    (two_configs / "pkg/other.py").write_text(RAISES.format(name="other"))
    assert found(run_cli("check", "--no-cache", "pkg/tools.py", "pkg/other.py")) == [("pkg/other.py", "FL300")]
    # "!pattern": every file the pattern does not match
    config.write_text('[tool.fusion-lint]\nper-file-ignores = { "!pkg/other.py" = ["FL300"] }\n')
    assert found(run_cli("check", "--no-cache", "pkg/tools.py", "pkg/other.py")) == [("pkg/other.py", "FL300")]
    # the root's patterns do not reach a file its nested config governs
    config.write_text('[tool.fusion-lint]\nper-file-ignores = { "pkg/legacy/*" = ["FL300"] }\n')
    assert ("pkg/legacy/old.py", "FL300") in found(run_cli("check", "--no-cache", "."))


def test_excludes_are_relative_to_their_config(run_cli, two_configs: Path) -> None:
    nested = two_configs / "pkg/legacy"
    write(nested, {"gen/made.py": RAISES.format(name="made"), "pkg/legacy/deep.py": RAISES.format(name="deep")})
    (nested / "pyproject.toml").write_text('[tool.fusion-lint]\nextend-exclude = ["/gen", "./pkg/legacy"]\n')
    assert found(run_cli("check", "--no-cache", ".")) == [("pkg/legacy/old.py", "FL300")]
    # an absolute path works too
    (nested / "pyproject.toml").write_text(
        f'[tool.fusion-lint]\nextend-exclude = ["{nested.as_posix()}/gen", "deep.py"]\n'
    )
    assert found(run_cli("check", "--no-cache", ".")) == [("pkg/legacy/old.py", "FL300")]


def test_a_config_excludes_a_folder_that_has_a_config_of_its_own(run_cli, two_configs: Path) -> None:
    (two_configs / "pyproject.toml").write_text('[tool.fusion-lint]\nextend-exclude = ["pkg/legacy"]\n')
    outcome = run_cli("check", "--no-cache", ".")
    assert found(outcome) == [("pkg/tools.py", "FL300")] and "2 files checked)" in outcome.stdout


@pytest.mark.parametrize(
    "table",
    [
        'per-file-ignores = { "[z-a].py" = ["FL300"] }',
        'per-file-ignores = { "!" = ["FL300"] }',
        'exclude = ["[z-a]"]',
        'extend-exclude = ["a/[z-a]/b"]',
    ],
)
def test_a_pattern_that_cannot_be_parsed_names_the_key_and_the_file(run_cli, two_configs: Path, table: str) -> None:
    (two_configs / "pkg/legacy/pyproject.toml").write_text(f"[tool.fusion-lint]\n{table}\n")
    outcome = run_cli("check", "--no-cache", ".")
    assert outcome.exit_code == 2, outcome.stdout
    (line,) = outcome.stderr.splitlines()
    assert line.startswith(f"fusion-lint: error: {two_configs / 'pkg/legacy/pyproject.toml'}: [tool.fusion-lint] key ")
    assert f"key '{table.split(' ')[0]}'" in line and "cannot parse the pattern" in line


# ----- per file, and project-wide ------------------------------------------------------------------


def test_recovery_min_words_is_the_entry_files_own(run_cli, tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.fusion-lint]\nrecovery-min-words = 8\n",
            "app.py": RECOVERY.format(name="app"),
            "sub/fusion-lint.toml": "recovery-min-words = 3\n",
            "sub/item.py": RECOVERY.format(name="item"),
        },
    )
    assert found(run_cli("check", "--no-cache", "--select", "FL112", ".")) == [("app.py", "FL112")]


def test_project_wide_settings_come_from_the_projects_config(run_cli, two_configs: Path) -> None:
    """``runtime-modules`` shapes the whole project: a nested config's applies only when its folder
    is the project (every path inside it, and the folder no package of the project above)."""
    (two_configs / "pkg/legacy/__init__.py").unlink()  # legacy/ is then a project of its own
    (two_configs / "pkg/legacy/pyproject.toml").write_text(
        '[tool.fusion-lint]\nruntime-modules = ["vendored.fusion"]\n'
    )
    assert found(run_cli("check", "--no-cache", ".")) == [("pkg/legacy/old.py", "FL300")]
    assert found(run_cli("check", "--no-cache", "pkg/legacy")) == []  # nothing there imports vendored.fusion
    shown = json.loads(run_cli("check", "--show-settings", "--output-format", "json", "pkg/legacy/old.py").stdout)
    assert shown["project"]["settings_path"] == str(two_configs / "pkg/legacy/pyproject.toml")
    assert shown["project"]["runtime-modules"] == ["vendored.fusion"]


TOOL_NAMED = IMPORTS + '@tool("get_item")\ndef get_item(item_id: str) -> str:\n    return item_id\n'
# Line 2: FL401 when no tool of the project is called get_item.
NAMES_GET_ITEM = (
    IMPORTS + '@tool("old", errors=[ErrorContract(code=JsonRpcErrorCode.NOT_FOUND, when="Gone", reason="gone",'
    ' recovery="Call get_item again with an existing id.")])  # noqa: FL202\ndef old(item_id: str): ...\n'
)


def test_a_config_in_a_subpackage_keeps_it_in_the_project_above(run_cli, two_configs: Path) -> None:
    """pre-commit and the editor pass one file: ``pkg/legacy/old.py`` must be resolved in the same
    project as for ``.`` (its recovery names a tool of ``pkg/tools.py``: no FL401), while its own
    config still governs its rules."""
    write(two_configs, {"pkg/tools.py": TOOL_NAMED, "pkg/legacy/old.py": NAMES_GET_ITEM})
    (two_configs / "pkg/legacy/pyproject.toml").write_text("[tool.fusion-lint]\nrecovery-min-words = 9\n")
    expected = [("pkg/legacy/old.py", "FL112")]  # legacy's own recovery-min-words, and no FL401
    assert found(run_cli("check", "--no-cache", ".")) == expected
    assert found(run_cli("check", "--no-cache", "pkg/legacy/old.py")) == expected
    assert found(run_cli("check", "--no-cache", "pkg/legacy")) == expected
    path = str(two_configs / "pkg/legacy/old.py")  # what the language server runs for the buffer
    report = lint(Options(paths=[path], stdin=(path, Path(path).read_bytes()), use_cache=False, jobs=1))
    assert [d.code for d in report.diagnostics] == ["FL112"]
    shown = json.loads(run_cli("check", "--show-settings", "--output-format", "json", "pkg/legacy/old.py").stdout)
    assert shown["settings_path"] == str(two_configs / "pkg/legacy/pyproject.toml")
    assert shown["project"]["settings_path"] == str(two_configs / "pyproject.toml")


def test_default_excludes_are_ruffs() -> None:
    ruff = {
        ".bzr",
        ".direnv",
        ".eggs",
        ".git",
        ".git-rewrite",
        ".hg",
        ".ipynb_checkpoints",
        ".mypy_cache",
        ".nox",
        ".pants.d",
        ".pyenv",
        ".pytest_cache",
        ".pytype",
        ".ruff_cache",
        ".svn",
        ".tox",
        ".venv",
        ".vscode",
        "__pypackages__",
        "_build",
        "buck-out",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
    }
    assert set(DEFAULT_EXCLUDE) == ruff | {".fusion_lint_cache"}


def test_default_excludes_skip_those_folders(run_cli, tmp_path: Path) -> None:
    files = {f"{folder}/x.py": RAISES.format(name="x") for folder in (".pytest_cache", "site-packages", ".vscode")}
    write(tmp_path, {"pyproject.toml": "[tool.fusion-lint]\n", **files, "app.py": RAISES.format(name="app")})
    assert found(run_cli("check", "--no-cache", ".")) == [("app.py", "FL300")]
