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
vocabulary) where a partial one does not. A skipped file of the walk that imports nothing and names
no tool leads nowhere and adds nothing: it is harmless. Any other file a name may lead to makes the
lint resolve everything, as does a reported file that is not analysed.
"""
from __future__ import annotations

import bisect
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Optional

from .config import Settings
from .partial_run import may_name_tools
from .project.index import ProjectIndex
from .project.resolve import resolve
from .project.view import ProjectView
from .snapshot import reached_from

#: Whether a buffer's lint resolves only what can report into it (the tests turn it off to compare).
FACTS_PARTIAL = True

_IMPORTS = re.compile(rb"\bimport\b")

#: The files the last buffer's lint resolved in full (None: all of them), for the tests.
LAST_FULL_PATHS: Optional[set[str]] = None


def resolved(index: ProjectIndex, settings: Settings, walked: list[str], report_set: set[str], loaded: list[str],
             read: Callable[[str], Optional[bytes]]) -> ProjectView:  # fmt: skip
    """The buffer's resolved project: in full for the files that may report into it (all when
    the import graph cannot tell, or when the resolution loaded a file the graph did not know)."""
    global LAST_FULL_PATHS
    rules = settings.recovery_min_words, tuple(settings.runtime_modules)
    LAST_FULL_PATHS = chosen = full_paths(index, walked, report_set, read)
    known = set(walked)  # (a harmless skipped file of the walk may be loaded: it adds nothing)
    view = resolve(index, *rules, chosen)
    if chosen is not None and any(path not in known for path in loaded):  # (``full_paths`` rules it out)
        LAST_FULL_PATHS = None
        view = resolve(index, *rules)
    return view


def full_paths(index: ProjectIndex, walked: Iterable[str], report_set: set[str],
               read: Callable[[str], Optional[bytes]]) -> Optional[set[str]]:  # fmt: skip
    """The analysed files whose definitions may report into ``report_set`` (those included), or
    None when the import graph cannot tell (resolve everything) or names most of the project."""
    analysed = set(index.files)
    if not FACTS_PARTIAL or not report_set <= analysed:
        return None
    harmless: set[str] = set()
    for path in set(walked) - analysed:
        data = read(path)
        if data is None or may_name_tools(data) or _IMPORTS.search(data) is not None:
            return None  # it may lead on to a reported file, or add to the vocabulary
        harmless.add(path)
    graph = _ImportGraph(index, analysed | harmless)
    deps: dict[str, set[str]] = {}
    for path, facts in list(index.files.items()):
        targets = graph.targets(facts.imports.values(), facts.imported_modules)
        if targets is None:
            return None
        deps[path] = targets
    reaching = reached_from(report_set, deps)  # type: ignore[arg-type]
    return reaching if len(reaching) <= max(16, len(analysed) // 4) else None


class _ImportGraph:
    """Where each imported name may lead the index, as ``snapshot.dependencies`` tells it (every
    prefix of the name, as ``ProjectIndex.lookup`` tries them; for a module imported, every module
    under it), each distinct name worked out once; None for a name that may lead to a file
    outside ``known`` (one the graph has no facts of)."""

    def __init__(self, index: ProjectIndex, known: set[str]):
        self.index = index
        self.known = known
        self.names = sorted(index.modules)
        self.found: dict[tuple[str, bool], Optional[frozenset[str]]] = {}

    def targets(self, bound: Iterable[str], modules: Iterable[str]) -> Optional[set[str]]:
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

    def _targets(self, qname: str, whole: bool) -> Optional[frozenset[str]]:
        index, reached = self.index, set()
        parts = qname.split(".")
        for cut in range(1, len(parts) + 1):
            name = ".".join(parts[:cut])
            path = index.modules.get(name) or index.find_module_file(name)
            if path is not None and path not in self.known:
                return None
            if path is not None and path in index.files:
                reached.add(path)
        # ``import pkg`` then ``pkg.sub.f()``: a name of a folder reaches every module under it.
        for root in index.search_roots:
            folder = root.joinpath(*parts)
            if folder.is_dir() and not _all_known_under(folder, self.known):
                return None
        if whole:
            start = bisect.bisect_left(self.names, qname + ".")
            while start < len(self.names) and self.names[start].startswith(qname + "."):
                reached.add(index.modules[self.names[start]])
                start += 1
        return frozenset(reached)


def _all_known_under(folder: Path, known: set[str]) -> bool:
    for directory, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".py") and os.path.join(directory, name) not in known:
                return False
    return True
