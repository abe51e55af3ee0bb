"""A partial run: a few files of a large project named without the cache (pre-commit's shape).

The files no reported file depends on (``project.partial.reaching_files``) are read with light
facts (``facts.extract(light=True)``: the bodies that add nothing to the module are not walked),
and their definitions are resolved only as far as the vocabulary, the holders of entries and the
order of definitions need (``project.resolve``). When the resolution follows a body of a light
file, the index loads its full facts (``full``). Light facts are never cached: a run with the cache
reads full facts, cached for the runs to come, and resolves everything.

The editor can do the same from facts it already holds: ``reaching_files`` over its texts, then
``resolve(index, ..., full_paths)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fusion_lint.base.stats import RunStats
from fusion_lint.config.settings import Settings
from fusion_lint.facts.model import FileFacts
from fusion_lint.project.index import ProjectIndex
from fusion_lint.project.partial import reaching_files
from fusion_lint.project.resolve import resolve
from fusion_lint.project.view import ProjectView
from fusion_lint.source.runner import KeptWorker, run_files

#: Whether a run without the cache that reports part of the project reads the rest with light facts
#: and resolves only what can report into the reported files (the tests turn it off to compare).
PARTIAL_RUNS = True


@dataclass
class PartialRun:
    """What one partial run decided and did (``resolved`` tells the run's counters the outcome)."""

    report_set: set[str]
    texts: dict[str, bytes] = field(default_factory=dict)  # every file read, the pre-scan's skipped ones too
    light: set[str] = field(default_factory=set)  # the files first read with light facts
    upgraded: list[str] = field(default_factory=list)  # light files whose full facts were loaded later
    full_paths: set[str] | None = None  # the files whose definitions are resolved in full (None: all)
    analysed: set[str] = field(default_factory=set)  # the files whose definitions are the project's

    @classmethod
    def chosen(cls, use_cache: bool, paths: Sequence[str], report_set: set[str]) -> PartialRun | None:
        """A partial run when the run reads no cache and reports only some of the project's files."""
        return cls(report_set) if PARTIAL_RUNS and not use_cache and set(paths) != report_set else None

    def loader(
        self,
        analysed: list[str],
        settings: Settings,
        root: Path,
        overrides: dict[str, bytes],
        kept: KeptWorker,
        deadline: float | None = None,
    ) -> Callable[[str], FileFacts | None]:
        """``ProjectIndex``'s ``full``, once every analysed file is known (the second look's too):
        a light file's full facts, when the resolution follows a body of it (``deadline``: the
        run's, ``run_files``)."""
        self.decide(analysed)

        def full(path: str) -> FileFacts | None:
            self.upgraded.append(path)
            return run_files(
                [path],
                settings,
                jobs=1,
                use_cache=False,
                cache_root=root,
                prescan=False,
                overrides=overrides,
                kept=kept,
                deadline=deadline,
            )[0].facts

        return full

    def lighter(self, contents: dict[str, bytes], to_analyse: set[str]) -> set[str]:
        """``run_files``'s ``light``: every file to analyse but those that may report into the
        reported ones (a re-export may pass through a file the pre-scan skips: all are looked at)."""
        self.texts.update(contents)
        if any(may_name_tools(data) for path, data in contents.items() if path not in to_analyse):
            return set()  # the run will resolve everything (``decide``): light facts would cost twice
        reaching = reaching_files(contents, self.report_set)
        self.light = to_analyse - reaching if reaching is not None else set()
        return self.light

    def decide(self, analysed: list[str]) -> None:
        """The files to resolve in full, once every analysed file is known (the second look's too)."""
        self.analysed = kept = set(analysed)
        aside = [data for path, data in self.texts.items() if path not in kept]
        if all(path in self.texts for path in analysed) and not any(map(may_name_tools, aside)):
            self.full_paths = reaching_files(self.texts, self.report_set)

    def holds(self, loaded: list[str], read: Callable[[str], bytes | None]) -> bool:
        """Whether the files the index loaded from outside the walk (found by a module name: an
        excluded folder, another import root) leave ``full_paths`` as it was: none of them is a way
        into a reported file that the walk's texts could not show."""
        outside = {path: data for path in loaded if path not in self.texts and (data := read(path)) is not None}
        if not outside:
            return True
        if any(map(may_name_tools, outside.values())):
            return False
        again = reaching_files({**self.texts, **outside}, self.report_set)
        return again is not None and again & self.analysed <= (self.full_paths or set())


def resolved(
    index: ProjectIndex,
    settings: Settings,
    partial: PartialRun | None,
    loaded: list[str],
    read: Callable[[str], bytes | None],
    stats: RunStats,
) -> ProjectView:
    """The run's resolved project: in full for the files that may report into the reported ones
    (all, without a partial run or when the resolution went through a file outside the walk).
    ``stats``: the run's counters, told what was read lightly and resolved in full."""
    rules = settings.recovery_min_words, tuple(settings.runtime_modules)
    view = resolve(index, *rules, partial.full_paths if partial is not None else None)
    if partial is not None and partial.full_paths is not None and not partial.holds(loaded, read):
        partial.full_paths = None
        view = resolve(index, *rules)
    if partial is not None:
        stats.partial.light, stats.partial.upgraded = partial.light, partial.upgraded  # (loads go on later)
        stats.partial.full_paths = partial.full_paths
    return view


# A file the index loads only when a handler's reach goes through it still adds the tools a
# low-level ``Tool(name=...)`` lists and the prefixes a ``mount(...)`` gives to the vocabulary:
# which of those a whole-tree run would load is what a partial run does not find out, so a file
# the pre-scan left that may hold one (or that is not plain ASCII) makes the run resolve all.
_TOOLS_NAMED = re.compile(rb"\b(?:Tool|mount)\b")


def may_name_tools(data: bytes) -> bool:
    return not data.isascii() or _TOOLS_NAMED.search(data) is not None
