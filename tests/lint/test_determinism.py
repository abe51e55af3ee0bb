"""Deterministic output (DESIGN §11, issue 9): the same input gives the same bytes, whatever
``--jobs``, across runs, and from the cache."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

import fusion_lint.cli.main as cli

# Property, determinism and pre-commit tests are the slow part of the suite: `-m "not slow"` skips them.
pytestmark = pytest.mark.slow

BENCH_CORPUS = Path(__file__).resolve().parents[2] / "bench" / "corpus.py"
FORMATS = ("text", "json", "sarif", "github", "junit")


def _corpus_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_corpus", BENCH_CORPUS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16 generated tool modules (enough for several workers) with their shared modules."""
    root = tmp_path_factory.mktemp("corpus")
    _corpus_module().write_dense_corpus(root, modules=16)
    return root


def lint_bytes(root: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli.main, [".", *args], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return result.stdout_bytes


@pytest.mark.parametrize("output_format", FORMATS)
def test_jobs_do_not_change_a_byte(corpus: Path, output_format: str, monkeypatch: pytest.MonkeyPatch) -> None:
    one = lint_bytes(corpus, "--no-cache", "--jobs", "1", "--output-format", output_format, monkeypatch=monkeypatch)
    two = lint_bytes(corpus, "--no-cache", "--jobs", "2", "--output-format", output_format, monkeypatch=monkeypatch)
    three = lint_bytes(corpus, "--no-cache", "--jobs", "3", "--output-format", output_format, monkeypatch=monkeypatch)
    assert one == two == three
    assert one.count(b"FL") > 50  # the corpus carries real findings in every format


def test_runs_and_the_cache_do_not_change_a_byte(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = lint_bytes(corpus, "--no-cache", "--jobs", "2", monkeypatch=monkeypatch)
    assert lint_bytes(corpus, "--no-cache", "--jobs", "2", monkeypatch=monkeypatch) == reference
    assert lint_bytes(corpus, monkeypatch=monkeypatch) == reference  # writes the cache
    assert lint_bytes(corpus, monkeypatch=monkeypatch) == reference  # reads it
    assert lint_bytes(corpus, "--jobs", "1", monkeypatch=monkeypatch) == reference


def test_the_corpus_generator_is_deterministic(tmp_path: Path) -> None:
    corpus = _corpus_module()
    first, second = tmp_path / "a", tmp_path / "b"
    written = corpus.write_dense_corpus(first, modules=3)
    corpus.write_dense_corpus(second, modules=3)
    assert [p.read_bytes() for p in written] == [(second / p.relative_to(first)).read_bytes() for p in written]
