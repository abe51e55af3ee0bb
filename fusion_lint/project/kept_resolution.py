"""The language server's resolution, kept from one buffer lint to the next.

A buffer's lint resolves in full only the files whose imports lead to the buffer
(``facts_partial``); every other definition of the project is resolved "for vocabulary" (its
contract's entries, their reasons and codes, its handler's signature). Between two keystrokes
those do not change, so this keeps, per file, the vocabulary-only resolution of its definitions
and what they add to the vocabulary, and replays them while they still hold.

What a vocabulary-only resolution of a file reads: the file's facts (its definitions, helper
calls, contract expressions) and, through ``ProjectIndex``, only names the file spells, followed
through re-exports, constants, ``**BASE`` spreads, list references, enum classes and their bases,
registration helpers and the handler a name leads to — every one of them a name some file on the
way imports or defines. Those are the edges of the buffer's import graph (``facts_partial``: every
prefix of an imported name, every module under an imported package), so such a resolution depends
only on the facts of the files its file reaches in that graph, its file included. Hence:

* a kept file is dropped when a file it reaches changed: another facts object (the kept facts
  give the same object for the same cache key) or, for a file outside the analysed ones that
  the graph found harmless, other bytes; or when it now reaches a file it did not reach (one
  that appeared on disk). The reverse of the graph says who reaches them;
* everything is dropped when what the graph itself rests on moved: the set of analysed files,
  the settings, the import roots, or a file outside the analysed ones that no longer exists
  (who reached it is no longer in the graph); one that exists but that nothing reaches any
  more was reached only by files that changed;
* an entry (``ResolvedEntry``) is shared by every definition holding it, across files, and is
  the same object for all of them, as in a resolution of everything: the kept files holding an
  entry all hold one resolution of it, which serves this lint's definitions too when they give it
  the path it was resolved with (where its diagnostics land); otherwise it is resolved anew and
  the kept files holding the old one are resolved again. Holders are rebuilt by each lint
  (``resolve.assembled``) and ``ProjectView.release`` clears them, so one lint at a time may use
  the kept objects (a lock; a lint that cannot have it in time resolves as if nothing were kept).

The vocabulary is the kept files' shares combined (once per change of them) with the shares of
the definitions resolved in full; when its words are the last lint's, that ``Vocabulary`` serves
again (FL401's suggestion index and the recovery rules' text scans built in it), and when only its
tools are, FL401's index does. The view names the definitions that may report into the reported
files (``ProjectView.touch_candidates``: those resolved in full, and those of kept files whose
contracts are written there), so ``checking.check`` does not look at the others.

The CLI never uses this (there is no language server's kept state); a lint that resolves
everything (``full_paths`` None) neither uses nor updates it, and one that loaded a file the
graph did not know (``facts_partial`` then resolves everything) drops it.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

from fusion_lint.base.stats import KeptCounts
from fusion_lint.facts.model import Entry, FileFacts
from fusion_lint.project.contracts import ContractResolver
from fusion_lint.project.index import ProjectIndex
from fusion_lint.project.resolve import (
    VocabularyShare,
    assembled,
    combined,
    held,
    resolved_definition,
    same_vocabulary,
    vocabulary_of,
    vocabulary_share,
)
from fusion_lint.project.view import ProjectView, ResolvedDefinition, ResolvedEntry, Vocabulary

#: Whether the language server keeps its resolution (the tests turn it off to compare).
KEEP = True

#: How long a lint waits for another one to release the kept resolution before resolving alone.
LOCK_WAIT_S = 2.0


@dataclass
class KeptFile:
    """One file's definitions resolved for vocabulary, and what they used and add."""

    definitions: list[ResolvedDefinition]
    resolutions: dict[int, ResolvedEntry]  # id(entry) -> its resolution, for each entry its contracts hold
    # The entries whose first use here gave another path than the one they were resolved with: if
    # this file is their first holder in a lint, they would be resolved anew (it is not replayed).
    first_elsewhere: list[int]
    share: VocabularyShare
    held: list[tuple[ResolvedEntry, ResolvedDefinition]]  # ``resolve.held(definitions)``
    contract_files: frozenset[str]  # where its contracts are written (where their diagnostics land)


@dataclass
class KeptResolution:
    key: Hashable | None = None
    seen: dict[str, object] = field(default_factory=dict)  # path -> its facts (or bytes' hash) at the last lint
    files: dict[str, KeptFile] = field(default_factory=dict)
    # id(entry) -> (the entry, its kept resolution, the kept files using it)
    entries: dict[int, tuple[Entry, ResolvedEntry, set[str]]] = field(default_factory=dict)
    vocabulary: Vocabulary | None = None  # the last one (FL401's suggestion index is built in it once)
    union: VocabularyShare | None = None  # what all kept files add to the vocabulary (None: to be made)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        self.key, self.vocabulary, self.union = None, None, None
        self.seen, self.files, self.entries = {}, {}, {}

    def drop(self) -> None:
        """What a run raised while reusing may have come from here: the next lint that holds it
        starts afresh (one that holds it now finishes with what it has; ``_resolve`` then clears)."""
        self.key = None

    def resolve(
        self,
        index: ProjectIndex,
        rules: tuple[int, tuple[str, ...]],
        key: Hashable,
        full_paths: set[str],
        outside: dict[str, object],
        reaching: Callable[[Iterable[str]], set[str]],
        report_set: set[str],
        counts: KeptCounts,
    ) -> ProjectView | None:
        """The buffer's resolved project (``resolve.resolve(index, *rules, full_paths)``'s), the
        kept files replayed where they hold; None when another lint holds them too long.
        ``key``: what the import graph rests on; ``outside``: the files outside the analysed ones
        the graph followed (their facts) or found harmless (their bytes' hash); ``reaching``:
        the files whose imports lead to some of the given ones, transitively; ``counts``: the run's
        counters, set to what this lint did with the kept files."""
        if not self.lock.acquire(timeout=LOCK_WAIT_S):
            return None
        try:
            view = self._resolve(index, rules, key, full_paths, outside, reaching, report_set, counts)
        except BaseException:  # (a superseded lint stops here; what is kept still holds: files are
            self.lock.release()  # dropped before ``seen`` moves, and kept only once resolved)
            raise
        view.release_hook = weakref.finalize(view, self.lock.release)  # (released with the view, or at its end)
        return view

    def _resolve(
        self,
        index: ProjectIndex,
        rules: tuple[int, tuple[str, ...]],
        key: Hashable,
        full_paths: set[str],
        outside: dict[str, object],
        reaching: Callable[[Iterable[str]], set[str]],
        report_set: set[str],
        counts: KeptCounts,
    ) -> ProjectView:
        analysed = index._analysed  # (the project's definitions, in its order)
        current = {**{path: index.files[path] for path in analysed}, **outside}
        if key != self.key or any(path not in current and not os.path.exists(path) for path in self.seen):
            counts.cleared = bool(self.files)
            self.clear()
            self.key = key
        changed = [path for path, now in current.items() if not _same(self.seen.get(path), now)]
        for path in reaching(changed) if changed else ():
            counts.dropped += path in self.files
            self._drop(path)
        self.seen = current
        contracts = ContractResolver(index, self._kept_entry)
        definitions: list[ResolvedDefinition] = []
        candidates: list[ResolvedDefinition] = []  # those whose diagnostics could land in the reported files
        full: list[ResolvedDefinition] = []
        holding: list[list[tuple[ResolvedEntry, ResolvedDefinition]]] = []
        for path in analysed:
            if path in full_paths:
                resolved = [resolved_definition(index, contracts, d, path, None) for d in index.definitions(path)]
                full += resolved
                candidates += resolved
                holding.append(held(resolved))
            else:
                kept = self.files.get(path)
                if kept is None or not _replayable(kept, contracts):
                    kept = self._record(index, contracts, path, full_paths)
                    counts.resolved += 1
                else:
                    counts.replayed += 1
                resolved = kept.definitions
                holding.append(kept.held)
                if path in report_set or not kept.contract_files.isdisjoint(report_set):
                    candidates += resolved
            definitions += resolved
        if self.union is None:
            self.union = combined(kept.share for kept in self.files.values())
        # (a kept file resolved in full this time adds the same words either way: its definitions,
        # their contracts and their handlers' parameters are the same)
        vocabulary = self._vocabulary([self.union, vocabulary_share(full)], index.files.values())
        view = assembled(
            index,
            definitions,
            itertools.chain.from_iterable(holding),
            contracts,
            full_paths,
            vocabulary,
            *rules,
            full=len(full),
        )
        view.touch_candidates = candidates
        return view

    def _record(self, index: ProjectIndex, contracts: ContractResolver, path: str, full_paths: set[str]) -> KeptFile:
        self._drop(path)
        uses: list[tuple[Entry, str, ResolvedEntry]] = []
        contracts.uses = uses
        try:
            definitions = [resolved_definition(index, contracts, d, path, full_paths) for d in index.definitions(path)]
        finally:
            contracts.uses = None
        written = frozenset().union(*(d.contract.files for d in definitions))
        resolutions: dict[int, ResolvedEntry] = {}
        first_elsewhere = []
        for entry, used_with, resolution in uses:
            if id(entry) not in resolutions:
                resolutions[id(entry)] = resolution
                if resolution.path != used_with:
                    first_elsewhere.append(id(entry))
            known = self.entries.get(id(entry))
            if known is not None and known[1] is not resolution:  # (cannot be: ``_kept_entry`` dropped them)
                self._drop_holders(id(entry))
                known = None
            if known is None:
                self.entries[id(entry)] = (entry, resolution, {path})
            else:
                known[2].add(path)
        share = vocabulary_share(definitions)
        kept = KeptFile(definitions, resolutions, first_elsewhere, share, held(definitions), written)
        self.files[path], self.union = kept, None
        return kept

    def _drop(self, path: str) -> None:
        kept = self.files.pop(path, None)
        if kept is None:
            return
        self.union = None
        for number, resolution in kept.resolutions.items():
            known = self.entries.get(number)
            if known is not None and known[1] is resolution:
                known[2].discard(path)
                if not known[2]:
                    del self.entries[number]

    def _drop_holders(self, number: int) -> None:
        known = self.entries.get(number)
        for path in list(known[2]) if known is not None else ():
            self._drop(path)

    def _kept_entry(self, entry: Entry, path: str) -> ResolvedEntry | None:
        """The resolution of an entry no definition of this lint held yet, that kept files hold
        (so it holds: their reach did not change), if it was resolved with the same path (where
        its fields' diagnostics land). With another path it is resolved anew, and the kept files
        holding the other resolution are dropped (none of them was replayed in this lint yet: the
        entry would be known), so every kept file holding an entry holds the same resolution."""
        known = self.entries.get(id(entry))
        if known is None:
            return None
        if known[0] is entry and known[1].path == path:
            return known[1]
        self._drop_holders(id(entry))
        return None

    def _vocabulary(self, shares: list[VocabularyShare], files: Iterable[FileFacts]) -> Vocabulary:
        made = vocabulary_of(shares, files)
        last = self.vocabulary
        if last is not None and same_vocabulary(last, made):
            return last  # the same words: its suggestion index and text scans serve again
        if last is not None and last.tools == made.tools and "tool_index" in last.__dict__:
            made.__dict__["tool_index"] = last.tool_index  # (FL401's index of the same tools: ``Vocabulary``)
        self.vocabulary = made
        return made


def _same(before: object, now: object) -> bool:
    """The same facts object, or the same bytes' hash."""
    return before is now or (isinstance(now, bytes) and before == now)


def _replayable(kept: KeptFile, contracts: ContractResolver) -> bool:
    """Whether the kept file's entries are the resolutions this lint uses: then it takes them.
    An entry this lint already resolved is the one the file holds (``_kept_entry``: one
    resolution per entry among kept files and this lint); one it did not is resolved with the
    path this file gives it, unless ``first_elsewhere`` says otherwise."""
    entries = contracts.entries
    if any(number not in entries for number in kept.first_elsewhere):
        return False
    entries.update(kept.resolutions)  # (in the order of first use; a known one keeps its place)
    return True
