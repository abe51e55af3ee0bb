"""Properties of ``--fix`` over real and generated code (DESIGN §11: "--fix never loses data").

The corpus is every fixture under ``fixtures/`` (copied to a temporary directory, never touched in
place) plus every rule's documented VALID/INVALID example. Generated mutations push that code
towards what the fixes rewrite (a dropped ``raise``, ``McpError(JsonRpcErrorCode.X, ...)``, a lost
``from e``, a CamelCase reason, ``errors=[]``) and vary its layout (CRLF, a BOM, comments, blank
lines, a one-name-per-line import). For all of it, ``--fix --unsafe-fixes``:

* leaves text that CPython parses, with the BOM and line endings it had;
* is idempotent: a second run changes no byte and touches no mtime;

and ``--diff`` writes nothing, while printing exactly what ``--fix`` then writes.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from budget import budget
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from fusion_lint.cli.main import main
from fusion_lint.rules import all_rules

# Property, determinism and pre-commit tests are the slow part of the suite: `-m "not slow"` skips them.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
BOM = b"\xef\xbb\xbf"

FIXTURE_FILES = sorted(
    p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.py") if "__pycache__" not in p.parts
)
EXAMPLES = sorted(
    {
        rule.prelude + example.snippet
        for rule in all_rules()
        for example in (*rule.valid_examples(), *rule.invalid_examples())
    }
)


# ----- running the CLI in a directory ----------------------------------------------------------------


def cli(root: Path, *args: str) -> str:
    """``fusion-lint check . --no-cache ARGS`` run in ``root``; its stdout."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, ["check", ".", "--no-cache", "--jobs", "1", *args])
    finally:
        os.chdir(cwd)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*.py"))
        if ".fusion_lint_cache" not in p.parts
    }


def copy_fixtures(root: Path) -> None:
    shutil.copytree(
        FIXTURES, root, ignore=shutil.ignore_patterns("__pycache__", ".fusion_lint_cache"), dirs_exist_ok=True
    )
    if not (root / "pyproject.toml").exists():
        (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")


def parses(data: bytes) -> bool:
    text = data[len(BOM) :].decode("utf-8") if data.startswith(BOM) else data.decode("utf-8")
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def assert_fix_is_safe(root: Path) -> dict[str, tuple[bytes, int]]:
    """Run ``--fix --unsafe-fixes`` twice on ``root``; check the properties; the state after."""
    before = tree_state(root)
    cli(root, "--fix", "--unsafe-fixes")
    after = tree_state(root)
    assert set(after) == set(before), "files appeared or vanished"
    for name, (data, _) in after.items():
        original = before[name][0]
        if data == original:
            continue
        assert parses(original) and parses(data), f"{name}: the fixed text does not parse"
        assert data.startswith(BOM) == original.startswith(BOM), f"{name}: BOM changed"
        if b"\r\n" in original:
            assert data.count(b"\n") == data.count(b"\r\n"), f"{name}: line endings changed"
        else:
            assert b"\r" not in data, f"{name}: line endings changed"
    cli(root, "--fix", "--unsafe-fixes")
    assert tree_state(root) == after, "a second --fix changed something"
    return after


# ----- the fixtures as they are ----------------------------------------------------------------------------


@pytest.mark.skipif(not FIXTURE_FILES, reason="no fixtures")
def test_fix_on_every_fixture_reparses_and_is_idempotent(tmp_path: Path) -> None:
    copy_fixtures(tmp_path)
    before = tree_state(tmp_path)
    after = assert_fix_is_safe(tmp_path)
    # The fixtures demonstrate fixable findings: something must have been fixed.
    assert any(after[name][0] != before[name][0] for name in before)


@pytest.mark.skipif(not FIXTURE_FILES, reason="no fixtures")
@pytest.mark.skipif(shutil.which("patch") is None, reason="patch(1) is not installed")
def test_diff_writes_nothing_and_is_exactly_what_fix_writes(tmp_path: Path) -> None:
    diffed, fixed = tmp_path / "diffed", tmp_path / "fixed"
    copy_fixtures(diffed)
    copy_fixtures(fixed)
    before = tree_state(diffed)
    diff = cli(diffed, "--diff", "--unsafe-fixes")
    assert tree_state(diffed) == before, "--diff touched a file"
    assert diff.startswith("--- a/")
    cli(fixed, "--fix", "--unsafe-fixes")
    # Applied with patch(1), the diff turns the untouched tree into the fixed one.
    subprocess.run(["patch", "-p1", "--quiet", "--no-backup-if-mismatch"], input=diff.encode(), cwd=diffed, check=True)
    assert {k: v[0] for k, v in tree_state(diffed).items()} == {k: v[0] for k, v in tree_state(fixed).items()}


# ----- generated mutations ------------------------------------------------------------------------------

FACTORIES = {
    "not_found": "NOT_FOUND",
    "conflict": "CONFLICT",
    "forbidden": "FORBIDDEN",
    "invalid_params": "INVALID_PARAMS",
    "service_unavailable": "SERVICE_UNAVAILABLE",
    "timeout": "TIMEOUT",
}
Mutation = Callable[[str, int], str | None]


def _at(pattern: str, replace: Callable[[re.Match], str]) -> Mutation:
    """A mutation rewriting the ``n``-th match (modulo their number) of ``pattern``."""
    compiled = re.compile(pattern, re.MULTILINE)

    def mutate(text: str, n: int) -> str | None:
        matches = list(compiled.finditer(text))
        if not matches:
            return None
        match = matches[n % len(matches)]
        return text[: match.start()] + replace(match) + text[match.end() :]

    return mutate


def _camel_reason(text: str, n: int) -> str | None:
    """Every use of one snake_case string literal becomes CamelCase (a reason FL107 renames back)."""
    literals = sorted(set(re.findall(r"""(["'])([a-z]+(?:_[a-z0-9]+)+)\1""", text)))
    if not literals:
        return None
    _, name = literals[n % len(literals)]
    camel = "".join(part.capitalize() for part in name.split("_"))
    return re.sub(rf"""(["']){name}\1""", lambda m: f"{m.group(1)}{camel}{m.group(1)}", text)


def _vertical_import(text: str, n: int) -> str | None:
    match = re.search(r"^from mcp_fusion import ([^\n(\\]+)$", text, re.MULTILINE)
    if match is None:
        return None
    names = [name.strip() for name in match.group(1).split(",")]
    block = "from mcp_fusion import (\n" + "".join(f"    {name},\n" for name in names) + ")"
    return text[: match.start()] + block + text[match.end() :]


MUTATIONS: dict[str, Mutation] = {
    "drop-raise": _at(r"raise (\w+\.fail\()", lambda m: m.group(1)),
    "factory-to-mcp-error": _at(
        r"\b(" + "|".join(FACTORIES) + r")\((\)?)",
        lambda m: f"McpError(JsonRpcErrorCode.{FACTORIES[m.group(1)]}" + (")" if m.group(2) else ", "),
    ),
    "fail-to-factory": _at(
        r"""\b\w+\.fail\((["'])\w+\1(, )?\)?""", lambda m: "not_found(" + (")" if m.group(0).endswith(")") else "")
    ),
    "fail-to-mcp-error": _at(
        r"""\b\w+\.fail\((["'])\w+\1(, )?\)?""",
        lambda m: "McpError(JsonRpcErrorCode.NOT_FOUND" + (")" if m.group(0).endswith(")") else ", "),
    ),
    "drop-cause": _at(r"(raise .*?) from \w+", lambda m: m.group(1)),
    "camel-reason": _camel_reason,
    "empty-errors": _at(r"errors=\w+", lambda m: "errors=[]"),
    "add-empty-errors": _at(r"""@(\w+\.)?tool\((["'][\w-]+["'])""", lambda m: m.group(0) + ", errors=[]"),
    "trailing-comment": _at(r"\)$", lambda m: ")  # note"),
    "blank-line": _at(r"^(?=    \w)", lambda m: "\n"),
    "vertical-import": _vertical_import,
}


def mutate(text: str, steps: list[tuple[str, int]]) -> str:
    """Apply each step whose result CPython still parses (a mutation must not make a syntax error)."""
    for name, n in steps:
        changed = MUTATIONS[name](text, n)
        if changed is None or changed == text:
            continue
        try:
            ast.parse(changed)
        except SyntaxError:
            continue
        text = changed
    return text


SOURCES = [("fixture", name) for name in FIXTURE_FILES] + [("example", str(i)) for i in range(len(EXAMPLES))]
# Half the draws come from code that raises: that is where most fixes apply.
RAISING = [
    (kind, key)
    for kind, key in SOURCES
    if "raise " in (EXAMPLES[int(key)] if kind == "example" else (FIXTURES / key).read_text(encoding="utf-8"))
]
IMPORTS = "from mcp_fusion import JsonRpcErrorCode, McpError, not_found\n"


@budget(40)
@given(
    source=st.one_of(st.sampled_from(RAISING), st.sampled_from(SOURCES)),
    steps=st.lists(st.tuples(st.sampled_from(sorted(MUTATIONS)), st.integers(0, 40)), min_size=1, max_size=6),
    crlf=st.booleans(),
    bom=st.booleans(),
)
def test_fix_on_mutated_code_reparses_and_is_idempotent(
    source: tuple[str, str], steps: list[tuple[str, int]], crlf: bool, bom: bool
) -> None:
    kind, key = source
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if kind == "fixture":
            copy_fixtures(root)
            target = root / key
            text = target.read_text(encoding="utf-8")
        else:
            (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
            target = root / "app.py"
            text = EXAMPLES[int(key)]
        if "McpError" not in text:  # so that rewriting a factory to McpError resolves
            text = IMPORTS + text
        text = mutate(text, steps)
        if crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        target.write_bytes((BOM if bom else b"") + text.encode("utf-8"))
        # --diff first: it must not touch anything.
        before = tree_state(root)
        cli(root, "--diff", "--unsafe-fixes")
        assert tree_state(root) == before, "--diff touched a file"
        assert_fix_is_safe(root)
