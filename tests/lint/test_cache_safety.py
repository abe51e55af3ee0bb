"""The cache never touches what it did not write, and never trusts what it did not check
(DESIGN §12.4, issue 17): the trials' reproducers, each against what a ``--no-cache`` run says.
"""

from __future__ import annotations

import os
import pickle
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import fusion_lint.cli.main as cli
import fusion_lint.memo.cache as cache
import fusion_lint.memo.store as cache_store
import fusion_lint.source.runner as runner
from fusion_lint.check.engine import Options, Report, lint
from fusion_lint.memo.cache import RunEntry
from fusion_lint.source.pipeline import FileResult

TOOLS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool


@tool("get_item", errors=[
    ErrorContract(reason="Item-Missing", code=JsonRpcErrorCode.NOT_FOUND, when="No item has that id",
                  recovery="Check the id with the user, then call get_item again."),
])
async def get_item(item_id: str, ctx) -> dict:
    if not item_id:
        ctx.fail("Item-Missing")
    raise ValueError("boom")
"""
THIRTY_DAYS = 30 * 24 * 3600


class Blocked(BaseException):
    """Not an ``OSError`` (which ``TimeoutError`` is): the code under test must not swallow it."""


def project(root: Path, config: str = "") -> None:
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n" + config)
    (root / "tools.py").write_text(TOOLS)


def run(root: Path, use_cache: bool = True) -> Report:
    return lint(Options(paths=[str(root)], use_cache=use_cache, jobs=1))


def seen(report: Report) -> list[tuple[str, str, int, int, str]]:
    return [(d.code, os.path.basename(d.path), d.span.line, d.span.col, d.message) for d in report.diagnostics]


def snapshot(directory: Path) -> dict[str, tuple[bytes, float]]:
    """Every file under ``directory``: content and mtime."""
    return {
        str(p.relative_to(directory)): (p.read_bytes(), p.stat().st_mtime)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def old_pickles(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.pickle").write_bytes(pickle.dumps({"weights": [1, 2, 3]}))
    for index in range(20):
        (directory / f"run-{index}.pickle").write_bytes(pickle.dumps(index))
    then = time.time() - THIRTY_DAYS
    for entry in directory.iterdir():
        os.utime(entry, (then, then))


# ----- the cache owns its directory, and nothing else ------------------------------------------------


def test_a_configured_cache_dir_holding_data_is_left_alone(tmp_path: Path) -> None:
    """``cache-dir = "data"`` next to ``data/model.pickle`` and ``run-*.pickle`` (30 days old): the
    prune deleted them and wrote ``data/.gitignore`` = ``*``."""
    project(tmp_path, 'cache-dir = "data"\n')
    old_pickles(tmp_path / "data")
    before = snapshot(tmp_path / "data")
    cold = run(tmp_path, use_cache=False)
    for _ in range(RUNS := 3):
        assert seen(run(tmp_path)) == seen(cold)
    after = snapshot(tmp_path / "data")
    assert {name: value for name, value in after.items() if not name.startswith("fusion-lint/")} == before
    own = tmp_path / "data" / "fusion-lint"
    assert (own / "CACHEDIR.TAG").read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    assert (own / ".gitignore").read_text().endswith("*\n")
    assert list(own.glob("*.pickle")), f"the cache works from its own folder after {RUNS} runs"


def test_an_absolute_cache_dir_outside_the_project_is_left_alone(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "clone", tmp_path / "home" / "data"
    root.mkdir()
    project(root, f'cache-dir = "{elsewhere}"\n')
    old_pickles(elsewhere)
    before = snapshot(elsewhere)
    run(root)
    run(root)
    assert {n: v for n, v in snapshot(elsewhere).items() if not n.startswith("fusion-lint/")} == before


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("configured", ["", "."])
def test_a_cache_dir_at_the_repository_root_hides_nothing_from_git(tmp_path: Path, configured: str) -> None:
    """``cache-dir = ""`` or ``"."`` wrote ``<repo>/.gitignore`` = ``*``: every file vanished from
    ``git status`` and ``git add -A``."""
    project(tmp_path, f'cache-dir = "{configured}"\n')
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "notes.txt").write_text("an untracked file the user means to add\n")
    run(tmp_path)
    run(tmp_path)
    assert not (tmp_path / ".gitignore").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert sorted(line[3:] for line in status.splitlines()) == ["notes.txt", "pyproject.toml", "tools.py"]
    assert (tmp_path / "fusion-lint" / "CACHEDIR.TAG").is_file()


def test_a_cache_dir_whose_folder_is_taken_too_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project(tmp_path, 'cache-dir = "data"\n')
    (tmp_path / "data" / "fusion-lint").mkdir(parents=True)
    (tmp_path / "data" / "fusion-lint" / "mine.txt").write_text("not a cache\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.main, ["."])
    assert result.exit_code == 2
    assert "cache-dir 'data'" in result.output and "not a fusion-lint cache" in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in (tmp_path / "data").rglob("*")) == ["fusion-lint", "mine.txt"]
    assert CliRunner().invoke(cli.main, [".", "--no-cache"]).exit_code == 1  # without a cache, it lints


def test_prune_removes_only_its_own_entries(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)
    own = tmp_path / ".fusion_lint_cache"
    strangers = {"notes.txt": b"keep me", "model.pickle": b"weights", f"{'e' * 64}.pickle.bak": b"backup"}
    then = time.time() - THIRTY_DAYS
    for name, content in strangers.items():
        (own / name).write_bytes(content)
        os.utime(own / name, (then, then))
    cache.ReportCache(own).prune(set())
    assert {name: (own / name).read_bytes() for name in strangers} == strangers


def test_a_cache_written_before_directories_were_signed_is_adopted(tmp_path: Path) -> None:
    project(tmp_path)
    legacy = tmp_path / ".fusion_lint_cache"
    legacy.mkdir()
    (legacy / ".gitignore").write_bytes(b"# created by fusion-lint\n*\n")
    (legacy / f"{'a' * 64}.pickle").write_bytes(b"an entry of the previous format")
    (legacy / f"run-{'b' * 64}.pickle").write_bytes(b"an entry of the previous format")
    assert seen(run(tmp_path)) == seen(run(tmp_path, use_cache=False))
    assert (legacy / "CACHEDIR.TAG").is_file() and not (legacy / "fusion-lint").exists()


def test_a_folder_that_merely_looks_like_a_legacy_cache_is_not_adopted(tmp_path: Path) -> None:
    """The old cache also wrote its .gitignore into a user's folder (the data loss above): a file
    that is not an entry there means it is not the cache's."""
    project(tmp_path, 'cache-dir = "data"\n')
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / ".gitignore").write_bytes(b"# created by fusion-lint\n*\n")
    (tmp_path / "data" / "model.pickle").write_bytes(b"weights")
    run(tmp_path)
    assert (tmp_path / "data" / "fusion-lint" / "CACHEDIR.TAG").is_file()
    assert not (tmp_path / "data" / "CACHEDIR.TAG").exists()


# ----- entries are checked, never trusted ---------------------------------------------------------------


def entries(root: Path, runs: bool | None = None) -> list[Path]:
    """The cache's entries: ``runs`` True the whole-run ones, False the per-file ones (the rules'
    findings, ``rules-``, and the run's snapshot, ``snap-``, are neither)."""
    found = sorted((root / ".fusion_lint_cache").glob("*.pickle"))
    return [
        p
        for p in found
        if runs is None or (p.name.startswith("run-") == runs and not p.name.startswith(("rules-", "snap-")))
    ]


@pytest.mark.slow
def test_a_flipped_byte_anywhere_in_an_entry_is_a_miss(tmp_path: Path) -> None:
    """One flipped byte in a run entry silently and permanently changed the output (3 of 60 trials)."""
    project(tmp_path)
    cold = seen(run(tmp_path, use_cache=False))
    assert seen(run(tmp_path)) == cold
    rng = random.Random(17)
    for trial in range(60):
        victims = entries(tmp_path)
        for victim in victims:
            data = bytearray(victim.read_bytes())
            position = rng.randrange(len(data))
            data[position] ^= 1 << rng.randrange(8)
            victim.write_bytes(bytes(data))
        assert seen(run(tmp_path)) == cold, trial


def test_a_planted_entry_is_a_miss_not_all_checks_passed(tmp_path: Path) -> None:
    """Entries rewritten with no diagnostics and ``skipped=True`` gave "All checks passed", exit 0:
    the keys are sha256 over public inputs, so a checkout can ship entries at the right names."""
    project(tmp_path)
    cold = seen(run(tmp_path, use_cache=False))
    run(tmp_path)
    someone_else = os.urandom(32)  # another user's key, or a guess
    for entry in entries(tmp_path):
        planted = (
            RunEntry([]) if entry.name.startswith("run-") else FileResult(str(tmp_path / "tools.py"), skipped=True)
        )
        cache_store.store_entry(entry.parent, entry.name, planted, someone_else)
    assert seen(run(tmp_path)) == cold
    for entry in entries(tmp_path):  # unsigned, as a checkout would ship them
        entry.write_bytes(pickle.dumps(RunEntry([])))
    result = CliRunner().invoke(cli.main, [str(tmp_path)])
    assert result.exit_code == 1 and "All checks passed" not in result.output


def test_a_well_typed_garbage_entry_is_a_miss_not_an_internal_error(tmp_path: Path) -> None:
    project(tmp_path)
    cold = seen(run(tmp_path, use_cache=False))
    run(tmp_path)
    garbage = FileResult(str(tmp_path / "tools.py"), facts={"definitions": "not facts"})  # type: ignore[arg-type]
    for signed in (False, True):  # as a checkout ships it, and signed with someone else's key
        for entry in entries(tmp_path, runs=True):
            entry.unlink()
        for entry in entries(tmp_path, runs=False):
            if signed:
                cache_store.store_entry(entry.parent, entry.name, garbage, os.urandom(32))
            else:
                entry.write_bytes(pickle.dumps(garbage))
        report = run(tmp_path)
        assert "FL999" not in {d.code for d in report.diagnostics}
        assert seen(report) == cold


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_at_an_entry_path_is_never_opened(tmp_path: Path) -> None:
    """A FIFO at an entry path blocked every later run forever."""
    project(tmp_path)
    cold = seen(run(tmp_path, use_cache=False))
    run(tmp_path)
    for entry in entries(tmp_path):
        entry.unlink()
        os.mkfifo(entry)

    def expired(signum: int, frame: object) -> None:
        raise Blocked("a run blocked on a FIFO in the cache")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    try:
        assert seen(run(tmp_path)) == cold
        assert seen(run(tmp_path)) == cold  # the entries were written over the FIFOs
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert all(stat.S_ISREG(entry.lstat().st_mode) for entry in entries(tmp_path))


def test_an_entry_copied_to_another_name_is_a_miss(tmp_path: Path) -> None:
    """The signature covers the entry's name: a genuine entry of one file cannot answer for another."""
    project(tmp_path)
    (tmp_path / "clean.py").write_text("import mcp_fusion\n")
    cold = seen(run(tmp_path, use_cache=False))
    run(tmp_path)
    files = entries(tmp_path, runs=False)
    assert len(files) == 2
    for entry in entries(tmp_path, runs=True):
        entry.unlink()
    content = {entry: entry.read_bytes() for entry in files}
    files[0].write_bytes(content[files[1]])
    files[1].write_bytes(content[files[0]])
    assert seen(run(tmp_path)) == cold


# ----- the key -----------------------------------------------------------------------------------------


def test_the_key_lives_outside_the_repository_readable_by_its_owner_only(tmp_path: Path) -> None:
    project(tmp_path)
    run(tmp_path)
    path = cache_store.key_path()
    assert path == Path(os.environ["XDG_CACHE_HOME"]) / "fusion-lint" / "key"
    assert tmp_path not in path.parents
    info = path.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_size == 32
    assert info.st_uid == os.geteuid()


def test_a_key_others_can_read_or_a_symlinked_one_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = tmp_path / "xdg" / "fusion-lint" / "key"
    key.parent.mkdir(parents=True, mode=0o700)
    key.write_bytes(b"k" * 32)
    key.chmod(0o644)
    try:
        fresh = cache_store.user_key()
        assert fresh is not None and fresh != b"k" * 32
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
        key.unlink()
        planted = tmp_path / "planted"
        planted.write_bytes(b"p" * 32)
        planted.chmod(0o600)
        key.symlink_to(planted)
        cache_store._key_at.cache_clear()
        replaced = cache_store.user_key()
        assert replaced not in (None, b"p" * 32) and not key.is_symlink() and planted.read_bytes() == b"p" * 32
    finally:
        cache_store._key_at.cache_clear()


def test_without_a_private_key_directory_the_run_lints_without_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "fusion-lint").mkdir(parents=True)
    (tmp_path / "xdg" / "fusion-lint").chmod(0o777)  # anyone could swap the key
    (tmp_path / "project").mkdir()
    project(tmp_path / "project")
    try:
        assert cache_store.user_key() is None
        assert seen(run(tmp_path / "project")) == seen(run(tmp_path / "project", use_cache=False))
        assert not list((tmp_path / "project" / ".fusion_lint_cache").glob("*.pickle"))
    finally:
        cache_store._key_at.cache_clear()


# ----- the key of an entry ------------------------------------------------------------------------------


def test_the_python_version_is_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PEP 695 file linted on 3.11 (FL000) stayed FL000 from the cache on 3.12, where it parses.
    (libcst's version no longer is: nothing the linter reads comes from libcst.)"""
    base = cache.code_fingerprint()
    cache.code_fingerprint.cache_clear()
    monkeypatch.setattr(cache.sys, "version", "3.99.0 (a later Python)")
    other_python = cache.code_fingerprint()
    cache.code_fingerprint.cache_clear()
    monkeypatch.undo()
    assert base != other_python
    assert cache.code_fingerprint() == base


def test_a_file_linted_under_another_python_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path)
    (tmp_path / "generic.py").write_text("import mcp_fusion\n\ntype Pair = tuple[int, int]\n")
    parsed: list[str] = []
    original = runner.analyze_one

    def counting(path: str, data: bytes, runtime_modules: object) -> object:
        parsed.append(os.path.basename(path))
        return original(path, data, runtime_modules)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "isolation_context", lambda files: None)
    monkeypatch.setattr(runner, "analyze_one", counting)
    run(tmp_path)
    parsed.clear()
    run(tmp_path)
    assert parsed == []
    cache.code_fingerprint.cache_clear()
    monkeypatch.setattr(cache.sys, "version", f"{sys.version} (another build)")
    try:
        run(tmp_path)
    finally:
        cache.code_fingerprint.cache_clear()
    assert sorted(parsed) == ["generic.py", "tools.py"]


@pytest.mark.slow
def test_runs_racing_to_create_the_cache_share_one_signed_directory(tmp_path: Path) -> None:
    """The directory appears already signed: a concurrent run never takes it for someone else's
    (and nests a cache inside it)."""
    project(tmp_path)
    command = [sys.executable, "-m", "fusion_lint", "."]
    racing = [subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = {process.communicate(timeout=120)[0] for process in racing}
    assert len(outputs) == 1 and "FL300" in outputs.pop()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".fusion_lint_cache", "pyproject.toml", "tools.py"]
    assert not (tmp_path / ".fusion_lint_cache" / "fusion-lint").exists()


def _interpreters_with_fusion_lint() -> dict[tuple[int, int], str]:
    """This checkout's other environments (``.ci/run`` makes one per CPython; developers keep
    ``.venv*``), by version: the interpreters that can run this very fusion-lint."""
    repository = Path(__file__).resolve().parents[2]
    found: dict[tuple[int, int], str] = {tuple(sys.version_info[:2]): sys.executable}  # type: ignore[dict-item]
    for python in sorted(repository.glob(".*venv*/bin/python")):
        probe = subprocess.run(
            [str(python), "-c", "import sys, fusion_lint; print(*sys.version_info[:2])"], capture_output=True, text=True
        )
        if probe.returncode == 0:
            major, minor = map(int, probe.stdout.split())
            found.setdefault((major, minor), str(python))
    return found


def test_a_file_one_python_cannot_parse_is_parsed_by_the_next_from_the_same_cache(tmp_path: Path) -> None:
    """The trial itself: PEP 695 linted on 3.11 (FL000), then on 3.12 with the same cache."""
    interpreters = _interpreters_with_fusion_lint()
    older = [v for v in interpreters if v < (3, 12)]
    newer = [v for v in interpreters if v >= (3, 12)]
    if not older or not newer:
        pytest.skip(f"needs environments of this checkout on both sides of 3.12 (found {sorted(interpreters)})")
    project(tmp_path)
    (tmp_path / "generic.py").write_text("import mcp_fusion\n\ntype Pair = tuple[int, int]\n")
    outputs = {}
    for version in (max(older), min(newer)):
        done = subprocess.run(
            [interpreters[version], "-m", "fusion_lint", "."], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        outputs[version] = done.stdout
    assert "generic.py:3:6: FL000" in outputs[max(older)] and "needs Python \u2265 3.12" in outputs[max(older)]
    assert "FL000" not in outputs[min(newer)]


HUB = "from mcp_fusion import ErrorContract, JsonRpcErrorCode, tool\n\n__all__ = ['ErrorContract', 'JsonRpcErrorCode', 'tool']\n"
HUB_USER = """\
from app.api import tool


@tool("get_thing")
async def get_thing(thing_id: str, ctx) -> dict:
    raise ValueError("no thing")
"""


def app_package(root: Path, modules: dict[str, str]) -> Path:
    """A project whose package ``app`` holds ``modules`` (name -> text): the package's folder."""
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    for name, text in modules.items():
        (root / "app" / name).write_text(text)
    return root / "app"


def test_a_repaired_syntax_error_in_a_file_the_second_look_admits_is_not_replayed(tmp_path: Path) -> None:
    """Found by bench/differential.py --corpus (aws-transform-mcp-server): a file the pre-scan skips
    and the second look admits (it imports a re-export hub) is "skipped" in the whole run's key, so
    its content is not in it. Broken, its FL000 had no digest in the run entry either: once repaired,
    the warm run replayed the syntax error."""
    tools = app_package(tmp_path, {"api.py": HUB, "tools.py": HUB_USER}) / "tools.py"
    assert any(code == "FL300" for code, *_ in seen(run(tmp_path)))  # (the second look admitted it)
    tools.write_text(HUB_USER + "\ndef broken(:\n")
    assert seen(run(tmp_path)) == seen(run(tmp_path, use_cache=False))
    assert "FL000" in [code for code, *_ in seen(run(tmp_path))]
    tools.write_text(HUB_USER + "\n")
    assert seen(run(tmp_path)) == seen(run(tmp_path, use_cache=False))
    assert "FL000" not in [code for code, *_ in seen(run(tmp_path))]


HANDLER_CALLING_A_HELPER = """\
from mcp_fusion import tool

from app.helpers import fetch


@tool("get_thing")
async def get_thing(thing_id: str, ctx) -> dict:
    return fetch(thing_id)
"""
HELPER = 'def fetch(thing_id):\n    raise ValueError("no thing")\n'


def test_a_repaired_syntax_error_in_a_file_loaded_on_demand_is_not_replayed(tmp_path: Path) -> None:
    """Found by bench/differential.py --corpus (aws-documentation-mcp-server, valkey-mcp-server): a
    helper the pre-scan skips is loaded when a handler's reach goes through it. Broken, it gave no
    facts, so the run entry kept no digest of it: once repaired, the warm run replayed the answer of
    the broken helper (its findings missing)."""
    helper = app_package(tmp_path, {"server.py": HANDLER_CALLING_A_HELPER, "helpers.py": HELPER}) / "helpers.py"
    found = seen(run(tmp_path))
    assert any(path.endswith("helpers.py") for _, path, *_ in found), found  # (reached through it)
    helper.write_text(HELPER + "\ndef broken(:\n")
    assert seen(run(tmp_path)) == seen(run(tmp_path, use_cache=False))
    helper.write_text(HELPER + "\n")
    assert seen(run(tmp_path)) == seen(run(tmp_path, use_cache=False)) == found
