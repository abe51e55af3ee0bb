"""Which files a lint of one buffer resolves in full, from the facts in memory (no file's bytes).

The language server lints one buffer in a project whose facts it keeps; a partial resolution
(``project.resolve``'s ``full_paths``) resolves in full only the definitions that can report into
the buffer. ``project.partial`` tells those from every file's text; the server does not keep the
texts, so this tells them from the import graph instead, under the same reasoning: a definition
lands a diagnostic in a reported file only through qualified names its file spells, and those are
the names its imports bind (``FileFacts.imports``, function-level imports, relative and star imports
included: ``FileFacts.imported_modules``) and the names under them. So the files that may report into
the reported ones are those whose imports lead to one of them, transitively
(the edges ``snapshot.dependencies`` draws).

That graph only knows the analysed files. A name may also lead to a file the pre-scan skipped or
one outside the walk, which the index loads when a handler's reach goes through it, and which a
whole-project resolution might load (with the tools its ``Tool(...)``/``mount(...)`` add to the
vocabulary) where a partial one does not. A file a name leads to that imports nothing and names no
tool leads nowhere and adds nothing; any other one is followed through its facts (loaded as the
index would load them), unless it lists tools or mounts a server: then, as for a reported file that
is not analysed, the lint resolves everything. A skipped file no name leads to is never loaded.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import fusion_lint.project.kept_resolution as kept_resolution
from fusion_lint.check.partial_run import may_name_tools
from fusion_lint.check.session import Session
from fusion_lint.check.snapshot import modules_under, prefixes, reached_from
from fusion_lint.config.settings import Settings
from fusion_lint.facts.model import FileFacts
from fusion_lint.project.index import ProjectIndex
from fusion_lint.project.resolve import resolve
from fusion_lint.project.view import ProjectView

#: Whether a buffer's lint resolves only what can report into it (the tests turn it off to compare).
FACTS_PARTIAL = True

_IMPORTS = re.compile(rb"\bimport\b")


def resolved(
    index: ProjectIndex,
    settings: Settings,
    walked: list[str],
    report_set: set[str],
    loaded: list[str],
    read: Callable[[str], bytes | None],
    session: Session,
) -> ProjectView:
    """The buffer's resolved project: in full for the files that may report into it (all when
    the import graph cannot tell, or when the resolution loaded a file the graph did not know).
    In the language server, the files resolved only for vocabulary come from its last lint where
    they still hold (``project.kept_resolution``). ``session``: the run's (its counters are told
    which files were resolved in full and which the graph looked at)."""
    stats = session.stats
    rules = settings.recovery_min_words, tuple(settings.runtime_modules)
    graph = _graph(index, report_set, read)
    stats.partial.full_paths = chosen = graph.chosen if graph is not None else None
    stats.partial.looked_at = list(graph.nodes) if graph is not None else []
    # (files the graph took the facts of may be loaded: this lint's graph, never a module global
    # another editor lint running at the same time may have rewritten meanwhile)
    known = set(walked) | (set(graph.nodes) if graph is not None else set())
    kept = session.lent.resolution if chosen is not None and kept_resolution.KEEP else None
    view = None
    if kept is not None and graph is not None and chosen is not None:
        key = (settings.model_dump_json(), tuple(index.search_roots), index.follow_calls, tuple(sorted(index.files)))
        deps = graph.deps
        view = kept.resolve(
            index,
            rules,
            key,
            chosen,
            {**graph.nodes, **graph.digests},
            lambda changed: reached_from(changed, deps),
            report_set,
            stats.kept,
        )
    if view is None:
        view = resolve(index, *rules, chosen)
    if chosen is not None and any(path not in known for path in loaded):  # (``_graph`` rules it out)
        if kept is not None and view.release_hook is not None:  # (this lint holds what is kept)
            kept.clear()  # (it rests on the graph, which did not know that file; before the
        view.release()  # view's release lets another lint have it)
        stats.partial.full_paths = None
        view = resolve(index, *rules)
    return view


def _graph(index: ProjectIndex, report_set: set[str], read: Callable[[str], bytes | None]) -> _ImportGraph | None:
    """The import graph of the analysed files, with the files that may report into ``report_set``
    (``chosen``, None when they are most of the project); None when the graph cannot tell."""
    analysed = set(index.files)
    if not FACTS_PARTIAL or not report_set <= analysed:
        return None
    graph = _ImportGraph(index, analysed, read)
    deps = graph.deps
    pending = [*index.files.items()]
    while pending:
        for path, facts in pending:
            targets = graph.targets(facts.imports.values(), facts.imported_modules)
            if targets is None:
                return None
            deps[path] = targets
        pending = [(path, facts) for path, facts in graph.nodes.items() if path not in deps]
    reaching = reached_from(report_set, deps)
    graph.chosen = reaching if len(reaching) <= max(16, len(analysed) // 4) else None
    return graph


class _ImportGraph:
    """Where each imported name may lead the index, as ``snapshot.dependencies`` tells it (every
    prefix of the name, as ``ProjectIndex.lookup`` tries them; for a module imported, every module
    under it), each distinct name worked out once. A file a name leads to that is not analysed
    (one the pre-scan skipped, one outside the walk) is harmless when it imports nothing and names
    no tool; otherwise its facts are loaded (as the index would) and it becomes a node of the graph,
    unless it lists tools or mounts a server (the vocabulary would depend on whether a
    resolution loads it) or cannot be read: then None. (The index loads only the files such names
    lead to: a skipped file no name leads to is never loaded.) A harmless file is a target without
    edges of its own: what the language server kept rests on its bytes (``kept_resolution``)."""

    def __init__(self, index: ProjectIndex, analysed: set[str], read: Callable[[str], bytes | None]):
        self.index = index
        self.analysed = analysed
        self.read = read
        self.harmless: dict[str, bool] = {}
        self.nodes: dict[str, FileFacts] = {}  # the files outside the analysed ones with edges
        self.names = sorted(index.modules)
        self.found: dict[tuple[str, bool], frozenset[str] | None] = {}
        self.deps: dict[str, set[str]] = {}  # each analysed file and node -> the files its imports may lead to
        self.digests: dict[str, bytes] = {}  # each harmless file -> its bytes' hash (``kept_resolution``)
        self.chosen: set[str] | None = None  # the files that may report into the reported ones

    def targets(self, bound: Iterable[str], modules: Iterable[str]) -> set[str] | None:
        reached: set[str] = set()
        for qname, whole in (*((q, False) for q in bound), *((m, True) for m in modules)):
            key = (qname, whole)
            if key not in self.found:
                self.found[key] = self._targets(qname, whole)
            found = self.found[key]
            if found is None:
                return None
            reached |= found
        return reached

    def _targets(self, qname: str, whole: bool) -> frozenset[str] | None:
        index, reached = self.index, set()
        parts = qname.split(".")
        for name in prefixes(qname):
            path = index.modules.get(name) or index.find_module_file(name)
            if path is not None and not self.known(path):
                return None
            if path is not None and (path in self.analysed or path in self.nodes or self.harmless.get(path)):
                reached.add(path)
        # ``import pkg`` then ``pkg.sub.f()``: a name of a folder reaches every module under it.
        for root in index.search_roots:
            folder = root.joinpath(*parts)
            if folder.is_dir() and not self._all_known_under(folder, reached):
                return None
        if whole:
            reached.update(index.modules[name] for name in modules_under(self.names, qname))
        return frozenset(reached)

    def known(self, path: str) -> bool:
        """Whether the graph knows where ``path`` leads: analysed, harmless or a node."""
        if path in self.analysed or path in self.nodes:
            return True
        if path not in self.harmless:
            data = self.read(path)
            self.harmless[path] = data is not None and not may_name_tools(data) and _IMPORTS.search(data) is None
            if data is not None and self.harmless[path]:
                self.digests[path] = hashlib.blake2b(data, digest_size=16).digest()
            if data is not None and not self.harmless[path]:
                facts = self.index.load(path)
                if facts is None or facts.listed_tools or facts.mount_prefixes:
                    return False
                self.nodes[path] = facts
                return True
        return self.harmless[path]

    def _all_known_under(self, folder: Path, reached: set[str]) -> bool:
        for directory, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(directory, name)
                if name.endswith(".py") and not self.known(path):
                    return False
                if path in self.nodes or self.harmless.get(path):
                    reached.add(path)
        return True
