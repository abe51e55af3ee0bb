"""The run's snapshot (issue 15: a warm run after an edit costs what the edit reaches).

A whole-tree run that checked every item records, in one signed entry of the cache's own
directory, enough to answer the next run without the facts of the files an edit cannot reach:

* each analysed file's content key, and the stat of every file it read besides (a skipped file,
  a service the index loaded): what changed is known before any fact is loaded;
* the modules each file's imports may lead to (``imports``, and every module an import statement
  names: star imports and imports inside functions included), so an edit reaches the files that
  import the edited one, transitively, and nothing else; and where each module was found;
* every checked item's findings (definitions, contract entries, functions), each naming the
  definitions it concerns by (file, place among the file's definitions), so merged diagnostics
  still name every definition, in the project's order;
* what the project-wide parts need: each file's contribution to the tool vocabulary, the labels
  and kinds of its definitions (the summary's counts), its suppression comments, and what the
  second look of the pre-scan learns from it;
* for an entry or a function some other file's definitions hold, serve, reach or call (a shared
  contract, a service), a digest per such file of what its rules read through that file's objects
  (``parts``), by the paths the rules were seen reading as they ran (``schema``, ``reads``) —
  never the content key, so a body edit of a tool that changes nothing they read leaves the
  shared items replayed, and never a list kept by hand, so a rule reading something new is
  covered the moment it reads it.
"""

from __future__ import annotations

import bisect
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from fusion_lint.base.diagnostics import Fix, Span
from fusion_lint.check.reads import ItemKey, Schema, digests
from fusion_lint.facts.model import FileFacts
from fusion_lint.memo.cache import code_fingerprint
from fusion_lint.memo.store import load_entry, store_entry, user_key
from fusion_lint.project.resolve import VocabularyShare, combined, vocabulary, vocabulary_from
from fusion_lint.project.view import FunctionView, ProjectView, ResolvedDefinition, ResolvedEntry, Vocabulary
from fusion_lint.rules import Finding

#: Bumped when the layout of the record changes (the code fingerprint covers everything else).
SNAPSHOT_FORMAT = "2"
DefId: TypeAlias = tuple[str, int]  # (path, place among the definitions resolved from that file)


def snapshot_name(part: str = "base") -> str:
    return (
        f"snap-{hashlib.sha256(f'{code_fingerprint()}|snapshot|{SNAPSHOT_FORMAT}|{part}'.encode()).hexdigest()}.pickle"
    )


# ----- stored as a base and a delta -------------------------------------------------------------------
# A run answered from the snapshot changes the records of the few files it re-checked: it writes
# those (and the earlier delta's) as a delta of the base, not the whole record again (3,000 modules:
# ~0.9 MB, a third of such a run's time). A delta names its base; another base makes it void (the base
# alone is an older, consistent state: the files changed since are re-checked).

#: The fields recorded per file (``"findings"``: of the items located in the file).
PER_FILE = ("keys", "deps", "labels", "vocabulary", "listings", "suppressions", "parts", "items")
#: A delta of more files than this share of the analysed ones is folded into a new base.
DELTA_SHARE = 0.05


def load_snapshot(directory: Path) -> dict[str, Any] | None:
    """The base with its delta applied, or None."""
    key = user_key()
    base = load_entry(directory / snapshot_name(), key)
    if not isinstance(base, dict):
        return None
    delta = load_entry(directory / snapshot_name("delta"), key)
    if not isinstance(delta, dict) or delta.get("base") != base.get("id"):
        return base
    files: dict[str, dict[str, Any]] = delta["files"]
    for name in PER_FILE:
        table = dict(base[name])
        for path, record in files.items():
            table.pop(path, None)
            if name in record:
                table[path] = record[name]
        base[name] = table
    base["findings"] = {
        slot: [item for item in items if item[0][1] not in files] + delta["findings"].get(slot, [])
        for slot, items in base["findings"].items()
    }
    for slot, items in delta["findings"].items():
        base["findings"].setdefault(slot, items)
    base["reached"] = delta["reached"]
    base["schema"] = delta["schema"]
    base["delta"] = set(files)
    return base


def store_snapshot(directory: Path, snapshot: dict[str, Any], changed: set[str]) -> None:
    """``snapshot`` whole as a new base (``changed`` empty), else the files changed since the base
    as its delta (folded into a new base once they are many)."""
    key = user_key()
    files = set(snapshot.pop("delta", set())) | changed
    if not changed or len(files) > max(16, DELTA_SHARE * len(snapshot["keys"])):
        snapshot["id"] = os.urandom(8).hex()
        store_entry(directory, snapshot_name(), snapshot, key)
        return
    records = {path: {name: snapshot[name][path] for name in PER_FILE if path in snapshot[name]} for path in files}
    findings = {slot: [item for item in items if item[0][1] in files] for slot, items in snapshot["findings"].items()}
    delta = {
        "base": snapshot["id"],
        "files": records,
        "findings": {slot: items for slot, items in findings.items() if items},
        "reached": snapshot["reached"],
        "schema": snapshot["schema"],
    }
    store_entry(directory, snapshot_name("delta"), delta, key)


def _digest(*parts: object) -> bytes:
    # 8 bytes: compared with one stored digest per (item, file), never looked up among many.
    return hashlib.blake2b(repr(parts).encode("utf-8", "backslashreplace"), digest_size=8).digest()


def places(definitions: Iterable[ResolvedDefinition]) -> dict[int, DefId]:
    """Each definition's (file, place in that file's definitions), by object id."""
    found: dict[int, DefId] = {}
    counts: dict[str, int] = {}
    for definition in definitions:
        place = counts.get(definition.path, 0)
        counts[definition.path] = place + 1
        found[id(definition)] = (definition.path, place)
    return found


def item_id(scope: str, item: object, place: dict[int, DefId]) -> tuple[object, ...]:
    if scope == "definition":
        return ("D", *place[id(item)])
    if scope == "entry":
        span = item.entry.span  # type: ignore[attr-defined]  # scope "entry": item is a ResolvedEntry
        return ("E", item.path, span.start, span.end)  # type: ignore[attr-defined]  # a ResolvedEntry, as above
    return ("F", item.path, item.function.qualname)  # type: ignore[attr-defined]  # scope "function": a FunctionView


# ----- what an edit reaches ------------------------------------------------------------------------


def dependencies(files: dict[str, FileFacts], modules: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """The project files each file's names may lead to: every module its imports name, the
    packages above them (Python imports them first) and, for a module imported whole, every
    module under it (``import pkg`` then ``pkg.sub.f()``)."""
    names = sorted(modules)
    found: dict[str, tuple[str, ...]] = {}
    for path, facts in files.items():
        reached: set[str] = set()
        for qname in (*facts.imports.values(), *facts.imported_modules):
            reached.update(target for name in prefixes(qname) if (target := modules.get(name)) is not None)
        for module in facts.imported_modules:
            reached.update(modules[name] for name in modules_under(names, module))
        reached.discard(path)
        found[path] = tuple(sorted(reached))
    return found


def prefixes(qname: str) -> list[str]:
    """``a``, ``a.b``, ``a.b.c`` for ``a.b.c``: every module a qualified name may be found in (as
    ``ProjectIndex.lookup`` tries them)."""
    parts = qname.split(".")
    return [".".join(parts[:cut]) for cut in range(1, len(parts) + 1)]


def modules_under(names: list[str], module: str) -> Iterator[str]:
    """The modules of ``names`` (sorted) inside package ``module``."""
    start = bisect.bisect_left(names, module + ".")
    while start < len(names) and names[start].startswith(module + "."):
        yield names[start]
        start += 1


def reached_from(changed: Iterable[str], dependencies: Mapping[str, Iterable[str]]) -> set[str]:
    """The changed files and every file whose imports lead to one of them, transitively."""
    users: dict[str, list[str]] = {}
    for path, targets in dependencies.items():
        for target in targets:
            users.setdefault(target, []).append(path)
    reached = set(changed)
    stack = list(reached)
    while stack:
        for user in users.get(stack.pop(), ()):
            if user not in reached:
                reached.add(user)
                stack.append(user)
    return reached


# ----- the project-wide parts ----------------------------------------------------------------------


def vocabulary_parts(view: ProjectView, paths: Iterable[str]) -> dict[str, tuple[Any, ...]]:
    """Each file's contribution to the vocabulary from its definitions (``resolve.vocabulary`` of
    them alone: a union of these, then the mount prefixes, is the project's)."""
    by_path: dict[str, list[ResolvedDefinition]] = {path: [] for path in paths}
    for definition in view.definitions:
        if definition.path in by_path:
            by_path[definition.path].append(definition)
    parts = {}
    for path, definitions in by_path.items():
        parts[path] = vocabulary(definitions).words()  # VocabularyShare's fields, in order
    return parts


def listing_part(facts: FileFacts) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (tuple(facts.listed_tools), tuple(facts.mount_prefixes))


def combined_vocabulary(parts: Iterable[tuple[Any, ...]], listings: Iterable[tuple[Any, ...]]) -> Vocabulary:
    """The project's vocabulary from its files' parts, as ``resolve.vocabulary`` builds it."""
    return vocabulary_from(combined(VocabularyShare(*part) for part in parts), listings)


def item_counts(view: ProjectView, paths: set[str] | None = None) -> dict[str, tuple[int, int, int]]:
    """How many definitions, entries and functions each file (of ``paths``) holds: what the
    engine counts as checked (``RunStats.check``), ran or replayed."""
    counts: dict[str, list[int]] = {path: [0, 0, 0] for path in paths or ()}
    lists: tuple[Sequence[ResolvedDefinition | ResolvedEntry | FunctionView], ...] = (
        view.definitions,
        view.entries,
        view.functions,
    )
    for scope, items in enumerate(lists):
        for item in items:
            if paths is None or item.path in paths:
                counts.setdefault(item.path, [0, 0, 0])[scope] += 1
    return {path: (d, e, f) for path, (d, e, f) in counts.items()}


def definition_kind(definition: ResolvedDefinition) -> str:
    """Its kind as the summary names it (a low-level server's call_tool handler is a dispatcher)."""
    return "dispatcher" if definition.definition.dispatcher else definition.kind


def counted_as(definition: ResolvedDefinition) -> tuple[str, ...]:
    """What the summary counts it as (``engine.definition_counts``): its kind, and ``unresolved``
    when its handler is no function of the project, so the summary never says "All checks passed"
    over a registration whose handler nothing checked (DESIGN §13.3)."""
    kind = definition_kind(definition)
    return (kind, UNRESOLVED) if definition.handler is None else (kind,)


#: The summary's count of registrations whose handler could not be resolved (FL190 names each).
UNRESOLVED = "unresolved"


# ----- what the rules of a shared item read of other files -----------------------------------------


def shared_items(view: ProjectView) -> Iterator[tuple[str, ItemKey, ResolvedEntry | FunctionView]]:
    """Every entry and function of the view, as ``reads.digests`` takes them."""
    for entry in view.entries:
        yield "entry", ("E", entry.path, entry.entry.span.start, entry.entry.span.end), entry
    for function in view.functions:
        yield "function", ("F", function.path, function.function.qualname), function


def link_parts(view: ProjectView, schema: Schema, paths: set[str] | None = None) -> dict[str, dict[ItemKey, bytes]]:
    """For each file (of ``paths``, else every file), per entry or function of ANOTHER file with
    neighbours in it: a digest of those neighbours and of what the rules read through them, as the
    run's schema records it (``reads``)."""
    return digests(shared_items(view), schema, paths)


# ----- findings, by item -----------------------------------------------------------------------------


class Recorder:
    """What every item's rules found (``checking.check``'s observer), encoded for the snapshot:
    (code, scope) -> [(item id, [(span, message, path, subjects, fix), ...])]. ``ok`` turns False
    when a finding cannot be recorded (a subject without a place, a fix without its text)."""

    def __init__(self, place: dict[int, DefId], text: Callable[[str], str | None]):
        self.place, self.text = place, text
        self.texts: dict[str, str | None] = {}
        self.findings: dict[tuple[str, str], list[tuple[object, ...]]] = {}
        self.ok = True

    def __call__(self, code: str, scope: str, item: object, findings: list[Finding]) -> None:
        if not findings:
            return
        defaults: Callable[[], Iterable[object]] = {
            "definition": lambda: [item],
            "entry": lambda: item.holders,  # type: ignore[attr-defined]  # scope "entry": item is a ResolvedEntry
            "function": lambda: item.handler_of,  # type: ignore[attr-defined]  # scope "function": a FunctionView
        }[scope]
        encoded = []
        for finding in findings:
            concerned = finding.subjects if finding.subjects is not None else defaults()
            subjects = tuple(self.place.get(id(subject)) for subject in concerned)
            if None in subjects:
                self.ok = False
                return
            encoded.append((span_tuple(finding.span), finding.message, finding.path, subjects, self._fix(finding)))
        self.findings.setdefault((code, scope), []).append((item_id(scope, item, self.place), encoded))

    def _fix(self, finding: Finding) -> tuple[bool, Fix | None] | None:
        if finding.fix is None:
            return None
        if finding.path not in self.texts:
            self.texts[finding.path] = self.text(finding.path)
        text = self.texts[finding.path]
        if text is None:
            self.ok = False
            return None
        return (True, finding.fix(text))


def span_tuple(s: Span) -> tuple[int, int, int, int, int, int, int]:
    return (s.line, s.col, s.end_line, s.end_col, s.start, s.end, s.stmt_line)
