"""A warm whole-tree run answered from the run's snapshot (``snapshot``): only the files an edit
reaches are loaded, resolved and checked; every other item's findings are replayed.

Soundness first: whatever the snapshot cannot vouch for — a new, deleted or renamed file, a
skipped or loaded file that moved, a problem file, another frame (settings, configs, selection,
reported paths), a changed vocabulary, a shared entry or function whose readers changed, a reach
into files the last run did not read, a rule that raised — sends the run down the ordinary path
(``None``), which then records a new snapshot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fusion_lint.memo.stat_index as stat_index
from fusion_lint.base.diagnostics import Fix, Span
from fusion_lint.base.stats import SnapshotCounts
from fusion_lint.check.checking import check, merged
from fusion_lint.check.reads import Reads
from fusion_lint.check.rule_cache import StoredFix
from fusion_lint.check.snapshot import (
    Recorder,
    combined_vocabulary,
    counted_as,
    dependencies,
    item_counts,
    link_parts,
    listing_part,
    load_snapshot,
    places,
    reached_from,
    store_snapshot,
    vocabulary_parts,
)
from fusion_lint.check.suppression import Reported
from fusion_lint.facts.model import FileFacts
from fusion_lint.memo.stat_index import signature
from fusion_lint.project.index import ProjectIndex
from fusion_lint.project.resolve import resolve, same_vocabulary
from fusion_lint.project.view import ProjectView
from fusion_lint.rules import Finding, Rule, all_rules
from fusion_lint.source.pipeline import FileResult, hub_of
from fusion_lint.source.runner import KeptWorker, run_files

# ``analysis`` below is the engine's ``Analysis`` (not imported: the engine imports this module).
Analysis = Any
#: Beyond this share of the analysed files reached by an edit, the ordinary path is as cheap.
MAX_REACHED_SHARE = 0.1


class Subject:
    """A definition a replayed finding names: its label and its place in the project's order."""

    __slots__ = ("label", "key")

    def __init__(self, label: str, key: tuple[str, int]):
        self.label, self.key = label, key


def _racy(stat: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """A stat the next run may compare with: none for a file modified within ``RACY_S`` (a write
    in the same clock tick would keep its stat)."""
    import time

    if stat is None or time.time_ns() - max(stat[3], stat[4]) < stat_index.RACY_S * 1e9:
        return None
    return stat


def snapshot_allowed(enabled: Iterable[str]) -> bool:
    """Whether the snapshot may answer (or record) a run of these rules: not when one reads the
    callers of what a handler reaches (FL208, opt-in), which the snapshot does not keep."""
    return not any(rule.reads_callers for rule in all_rules() if rule.code in enabled)


# ----- recording --------------------------------------------------------------------------------


def record(
    analysis: Analysis, view: ProjectView, recorder: Recorder, reads: Reads, frame: str, directory: Path
) -> None:
    """The snapshot of a whole-tree run that checked every item (``engine.lint``), ``reads`` what
    the rules of its shared items read; none when a file could not be analysed (the next run tries
    it again), or when those rules read the project beyond what the snapshot checks itself."""
    if any(r.problem is not None for r in analysis.results) or reads.opaque:
        return
    files = analysis.index.files
    analysed = {r.path: r for r in analysis.results if r.facts is not None}
    parts = vocabulary_parts(view, analysed)
    listings = {path: listing_part(facts) for path, facts in files.items()}
    combined = combined_vocabulary(parts.values(), listings.values())
    if not recorder.ok or not same_vocabulary(combined, view.vocabulary):
        return
    labels: dict[str, list[tuple[str, tuple[str, ...]]]] = {path: [] for path in analysed}
    for definition in view.definitions:
        labels.setdefault(definition.path, []).append((definition.label, counted_as(definition)))
    reached: dict[str, set[str]] = {}
    for function in view.functions:
        reached.setdefault(function.path, set()).add(function.function.qualname)
    outside = set(files) - set(analysed)
    snapshot = {
        "frame": frame,
        "keys": {path: bytes.fromhex(r.key) for path, r in analysed.items()},  # (half the size of hex)
        "skipped": sorted(r.path for r in analysis.results if r.skipped),
        "stats": {
            path: _racy(signature(path)) for path in sorted(outside | {r.path for r in analysis.results if r.skipped})
        },
        "modules": dict(analysis.index.modules),
        "deps": dependencies(files, analysis.index.modules),
        "hubs": {path: hub_of(r) for path, r in analysed.items()},
        "labels": {path: tuple(found) for path, found in labels.items()},
        "vocabulary": parts,
        "listings": listings,
        "suppressions": {
            path: (f.suppressions, f.file_suppressions, f.string_lines, f.unknown_directives)
            for path, f in files.items()
            if path in analysed and (f.suppressions or f.file_suppressions or f.unknown_directives)
        },
        "findings": recorder.findings,
        "schema": reads.frozen(),
        "parts": link_parts(view, reads.schema),
        "reached": {path: frozenset(names) for path, names in reached.items()},
        "items": item_counts(view),
    }
    store_snapshot(directory, snapshot, set())


# ----- whether the snapshot can answer ----------------------------------------------------------


@dataclass
class Plan:
    snapshot: dict[str, Any]
    reached: set[str]  # the analysed files an edit reaches (the changed ones and their importers)
    contents: dict[str, bytes] = dataclasses.field(default_factory=dict)  # what the walk read of them


def plan(
    directory: Path, frame: str, results: list[FileResult], report_set: set[str], counts: SnapshotCounts
) -> Plan | None:
    """Whether the snapshot can answer this run (before any fact is loaded), and what it must
    re-check (``counts``: the run's, told why not)."""
    counts.why_not = ""
    snapshot = load_snapshot(directory)
    why = _unusable(snapshot, frame, results, report_set)
    if why:
        counts.why_not = why
        return None
    assert isinstance(snapshot, dict)
    changed = {r.path for r in results if r.key is not None and snapshot["keys"][r.path] != bytes.fromhex(r.key)}
    reached = reached_from(changed, snapshot["deps"]) & snapshot["keys"].keys()
    if len(reached) > max(16, MAX_REACHED_SHARE * len(snapshot["keys"])):
        counts.why_not = f"the edit reaches {len(reached)} files"
        return None
    return Plan(snapshot, reached)


def _unusable(snapshot: object, frame: str, results: list[FileResult], report_set: set[str]) -> str:
    if not isinstance(snapshot, dict) or snapshot.get("frame") != frame:
        return "no snapshot of this frame"
    if report_set != {r.path for r in results}:
        return "not the whole tree"
    if any(r.problem is not None for r in results):
        return "a file that cannot be analysed"
    keyed = {r.path for r in results if r.key is not None}
    if keyed != snapshot["keys"].keys() or sorted(r.path for r in results if r.skipped) != snapshot["skipped"]:
        return "files added, deleted or changed kind"
    for path, stat in snapshot["stats"].items():
        if stat is None or signature(path) != stat:
            return f"a skipped or loaded file moved: {path}"
    return ""


# ----- answering ----------------------------------------------------------------------------------


def replay(
    analysis: Analysis, found: Plan, active: Sequence[type[Rule]], frame: str, directory: Path, roots: list[Path]
) -> tuple[list[Reported], dict[str, FileFacts], dict[str, int], set[str]] | None:
    """The run's findings (as ``checking.check`` returns them), stand-in facts of every analysed
    file for suppression, the summary's counts and every file whose facts the answer rests on;
    None when the snapshot cannot vouch for the answer."""
    taken = analysis.stats.snapshot
    taken.used, taken.resolved = False, 0
    taken.reached, taken.loaded = set(found.reached), set()
    snapshot, reached, settings = found.snapshot, found.reached, analysis.settings
    fresh = (
        {
            r.path: r
            for r in run_files(
                sorted(reached),
                settings,
                jobs=1,
                use_cache=True,
                cache_root=analysis.root,
                prescan=False,
                contents=found.contents,
            )
        }
        if reached
        else {}
    )
    now = {r.path: r.key for r in analysis.results}
    for path, result in fresh.items():
        if result.facts is None or result.key != now[path]:  # it changed again since the walk
            _fallback(analysis, "a reached file could not be analysed again")
            return None
        if hub_of(result) != snapshot["hubs"][path]:
            _fallback(analysis, "an edit changed what the second look learns")
            return None
    kept = KeptWorker(settings.runtime_modules)

    def load(path: str) -> FileFacts | None:
        taken.loaded.add(path)
        return run_files([path], settings, jobs=1, use_cache=True, cache_root=analysis.root, prescan=False, kept=kept)[
            0
        ].facts

    facts = {path: result.facts for path, result in fresh.items() if result.facts is not None}
    taken.loaded |= set(facts)
    index = ProjectIndex(dict(facts), load, roots, settings.follow_calls)
    index.modules.update(snapshot["modules"])  # where the last run found each module
    try:
        view = resolve(index, settings.recovery_min_words, tuple(settings.runtime_modules))
    finally:
        kept.close()
    taken.resolved = len(view.definitions)
    analysis.stats.resolve = view.resolve_counts()
    answer = _answer(analysis, snapshot, reached, view, index, active)
    if answer is None:
        view.release()
        return None
    findings, counts, updated = answer
    updated["frame"] = frame
    if reached:  # (nothing changed since the snapshot: nothing to write)
        store_snapshot(directory, updated, reached)
    view.release()
    taken.used = True
    stand_ins = {
        path: FileFacts(
            path,
            None,
            suppressions=dict(s),
            file_suppressions=dict(f),
            string_lines=dict(m),
            unknown_directives=dict(u),
        )
        for path, (s, f, m, u) in updated["suppressions"].items()
    }
    return findings, stand_ins, counts, set(snapshot["listings"])


def _fallback(analysis: Analysis, why: str) -> None:
    analysis.stats.snapshot.why_not = why
    return None


def _answer(
    analysis: Analysis,
    snapshot: dict[str, Any],
    reached: set[str],
    view: ProjectView,
    index: ProjectIndex,
    active: Sequence[type[Rule]],
) -> tuple[list[Reported], dict[str, int], dict[str, Any]] | None:
    if set(index.files) - set(snapshot["listings"]):
        _fallback(analysis, "the edit reaches a file the last run did not read")
        return None
    place = places(view.definitions)
    parts = dict(snapshot["vocabulary"])
    parts.update(vocabulary_parts(view, reached))
    listings = dict(snapshot["listings"])
    listings.update({path: listing_part(index.files[path]) for path in reached})
    vocabulary = combined_vocabulary(parts.values(), listings.values())
    if not same_vocabulary(
        vocabulary, combined_vocabulary(snapshot["vocabulary"].values(), snapshot["listings"].values())
    ):
        _fallback(analysis, "the tool vocabulary changed")
        return None
    view.vocabulary = vocabulary
    schema = snapshot["schema"]
    links = link_parts(view, schema, reached)
    for path in reached:
        stored = {item: d for item, d in snapshot["parts"].get(path, {}).items() if item[1] not in reached}
        now = {item: d for item, d in links.get(path, {}).items() if item[1] not in reached}
        if stored != now:
            _fallback(analysis, f"what a shared item reads of {path} changed")
            return None
    in_view = {(f.path, f.function.qualname) for f in view.functions}
    for function in view.functions:  # every call edge the full graph would have is in this one
        for _, path, qualname in index.call_targets(function.function, function.path):
            if (path, qualname) not in in_view and qualname in snapshot["reached"].get(path, ()):
                _fallback(analysis, "a call into a function the partial view does not hold")
                return None
    recorder = Recorder(place, analysis.text)
    assert analysis.scopes is not None
    reads = Reads(schema)
    ran = check(
        view,
        active,
        reached,
        analysis.scopes.views(view),
        None,
        observe=recorder,
        reads=reads,
        counts=analysis.stats.check,
    )
    if not recorder.ok or any(r.diagnostic.code == "FL999" for r in ran):
        _fallback(analysis, "a rule raised, or a finding cannot be recorded")
        return None
    if reads.frozen() != schema:  # the re-checked shared items read something new: the schema grows
        # (the digests of the files not re-checked were made with fewer paths: the next run reaching
        # one of them finds another digest and takes the ordinary path, never a stale replay)
        schema = reads.frozen()
        links = link_parts(view, schema, reached)
    labels = dict(snapshot["labels"])
    for path in reached:
        labels[path] = tuple((d.label, counted_as(d)) for d in view.definitions if d.path == path)
    findings: dict[tuple[str, str], list[tuple[object, ...]]] = {}
    for rule in active:
        for scope in rule.checks():
            slot = (rule.code, scope)
            kept = [item for item in snapshot["findings"].get(slot, ()) if item[0][1] not in reached]
            findings[slot] = kept + recorder.findings.get(slot, [])
    updated = dict(snapshot)
    keys = {r.path: r.key for r in analysis.results}
    updated["keys"] = {**snapshot["keys"], **{path: bytes.fromhex(keys[path]) for path in reached}}
    updated["deps"] = {**snapshot["deps"], **dependencies({p: index.files[p] for p in reached}, snapshot["modules"])}
    updated["labels"], updated["vocabulary"], updated["listings"], updated["findings"] = (
        labels,
        parts,
        listings,
        findings,
    )
    updated["parts"] = {**snapshot["parts"], **{path: links.get(path, {}) for path in reached}}
    updated["schema"] = schema
    new_reached = {path: set(names) for path, names in snapshot["reached"].items()}
    for function in view.functions:
        new_reached.setdefault(function.path, set()).add(function.function.qualname)
    updated["reached"] = {path: frozenset(names) for path, names in new_reached.items()}
    suppressions = {p: s for p, s in snapshot["suppressions"].items() if p not in reached}
    for path in reached:
        f = index.files[path]
        if f.suppressions or f.file_suppressions or f.unknown_directives:
            suppressions[path] = (f.suppressions, f.file_suppressions, f.string_lines, f.unknown_directives)
    updated["suppressions"] = suppressions
    updated["items"] = {**snapshot["items"], **item_counts(view, reached)}
    totals = [sum(counts[scope] for counts in updated["items"].values()) for scope in range(3)]
    checked = sum(
        totals[("definition", "entry", "function").index(scope)] for rule in active for scope in rule.checks()
    )
    counted = analysis.stats.check
    counted.replayed = checked - counted.ran  # every other (rule, item) pair answered from the snapshot
    return _findings(findings, labels, active), _counts(labels), updated


def _counts(labels: dict[str, tuple[tuple[str, tuple[str, ...]], ...]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in sorted(labels):
        for _, kinds in labels[path]:
            for kind in kinds:
                counts[kind] = counts.get(kind, 0) + 1
    return counts


def _findings(
    findings: dict[tuple[str, str], list[tuple[Any, ...]]],
    labels: dict[str, tuple[tuple[str, tuple[str, ...]], ...]],
    active: Sequence[type[Rule]],
) -> list[Reported]:
    """Every item's findings as ``checking.check`` merges them, naming definitions by stand-ins."""
    subjects: dict[tuple[str, int], Subject] = {}

    def subject(place: tuple[str, int]) -> Subject:
        found = subjects.get(place)
        if found is None:
            found = subjects[place] = Subject(labels[place[0]][place[1]][0], place)
        return found

    by_code = {rule.code: rule for rule in active}
    stream: list[tuple[type[Rule], Finding, list[Any]]] = []
    for (code, _), items in findings.items():
        rule = by_code[code]
        for _, encoded in items:
            for span, message, path, concerned, fix in encoded:
                builder: Callable[[str], Fix | None] | None = StoredFix(fix[1]) if fix is not None else None
                finding = Finding(Span(*span), message, path, builder, [subject(p) for p in concerned])  # type: ignore[misc]  # stand-ins: merged() reads only a subject's key and label
                stream.append((rule, finding, []))
    return merged(stream, lambda s: s.key)
