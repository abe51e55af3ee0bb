"""The cache is no bigger than the source it describes (issue 15): entries are compressed, spans
pickled as seven ints; an entry that inflates past the limit is a miss, however it is signed."""

from __future__ import annotations

import sys
from pathlib import Path

import fusion_lint.memo.store as cache_store
from fusion_lint.base.diagnostics import Span
from fusion_lint.check.engine import Options, lint

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def test_the_cache_of_the_dense_corpus_is_smaller_than_its_source(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from corpus import write_dense_corpus
    finally:
        sys.path.remove(str(BENCH))
    files = write_dense_corpus(tmp_path, 12)
    cached = lint(Options(paths=[str(tmp_path)], jobs=1))
    assert cached.diagnostics == lint(Options(paths=[str(tmp_path)], jobs=1)).diagnostics  # warm, from it
    source = sum(p.stat().st_size for p in files)
    assert _bytes(tmp_path / ".fusion_lint_cache") <= source  # was 2.6x before entries were compressed


def test_a_span_round_trips_through_the_cache_unpickler(tmp_path: Path) -> None:
    key = b"k" * 32
    span = Span(3, 4, 5, 6, 70, 80, 2)
    cache_store.store_entry(tmp_path / "c", "0" * 64 + ".pickle", [span, span], key)
    assert cache_store.load_entry(tmp_path / "c" / ("0" * 64 + ".pickle"), key) == [span, span]


def test_an_entry_inflating_past_the_limit_is_a_miss(tmp_path: Path, monkeypatch) -> None:
    key, name = b"k" * 32, "1" * 64 + ".pickle"
    cache_store.store_entry(tmp_path / "c", name, "x" * 100_000, key)  # compresses to a few hundred bytes
    assert cache_store.load_entry(tmp_path / "c" / name, key) == "x" * 100_000
    monkeypatch.setattr(cache_store, "ENTRY_MAX_BYTES", 50_000)
    assert cache_store.load_entry(tmp_path / "c" / name, key) is None
