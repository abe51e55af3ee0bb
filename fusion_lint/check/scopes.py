"""The per-file settings of a run (DESIGN §12.4): for each reported file, the config that governs
it (``config_tree``), the rules that run on it and its per-file ignores; for each contract entry,
the ``recovery-min-words`` of the file it is written in.

The rules run once over the project, with every rule some reported file enables; a finding is
then kept only where its file's config enables its rule and no per-file ignore names it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.selection import RuleSelector
from fusion_lint.config.tree import ConfigTree, Scope
from fusion_lint.project.view import ProjectView

#: Reported whatever the selection says: FL900 only when asked for, FL999 for a bug of ours.
ALWAYS_REPORTED = frozenset({"FL900", "FL999"})


class FileScopes:
    def __init__(self, tree: ConfigTree, root: Path, selector: RuleSelector | None = None):
        self.tree, self.root, self.selector = tree, root, selector
        # Folder -> scope, once per run: the rule phase asks for every definition, entry and
        # function (a config lookup each was most of the rules' time on a large project).
        self._of: dict[str, Scope] = {}
        self._enabled: dict[int, frozenset[str]] = {}  # id of a scope (kept in ``_of``) -> its rules

    def of(self, path: str) -> Scope:
        """The scope of a file (or of a folder the walk reports on: that of the folder holding it)."""
        folder = os.path.dirname(path)
        scope = self._of.get(folder)
        if scope is None:
            scope = self._of[folder] = self.tree.scope(Path(folder), self.root)
        return scope

    def excludes(self, directory: Path) -> list[Any]:
        return self.tree.scope(directory, self.root).excludes

    def _selector(self) -> RuleSelector:
        assert self.selector is not None, "a run that reports builds its scopes with a selector"
        return self.selector

    def enabled(self, path: str) -> frozenset[str]:
        # Once per scope: each diagnostic asks (15,000 on the dense benchmark: 0.4 s of settings dumps).
        scope = self.of(path)
        found = self._enabled.get(id(scope))
        if found is None:
            found = self._enabled[id(scope)] = self._selector().check(scope)
        return found

    def enabled_in(self, paths: Iterable[str]) -> frozenset[str]:
        """Every rule some of ``paths`` enables: the rules the run checks."""
        found: set[str] = set()
        for scope in {id(scope): scope for scope in map(self.of, paths)}.values():
            found |= self._selector().check(scope)
        return frozenset(found)

    def reports(self, diagnostic: Diagnostic) -> bool:
        """Whether the diagnostic's file enables its rule and no per-file ignore of it names it."""
        scope = self.of(diagnostic.path)
        if diagnostic.code not in self.enabled(diagnostic.path) | ALWAYS_REPORTED:
            return False
        selector = self._selector()
        return not any(
            diagnostic.code in selector.ignored(entry) and entry.glob.matches(diagnostic.path)
            for entry in scope.per_file_ignores
        )

    def views(self, project: ProjectView) -> Callable[[str], ProjectView]:
        """The project as a rule checking something in a file sees it: with that file's
        ``recovery-min-words`` (a copy of the view only where a config sets another value)."""
        copies: dict[int, ProjectView] = {project.recovery_min_words: project}

        def view(path: str) -> ProjectView:
            words = self.of(path).settings.recovery_min_words
            if words not in copies:
                copies[words] = dataclasses.replace(project, recovery_min_words=words)
            return copies[words]

        return view

    def cache_parts(self, paths: Iterable[str]) -> list[str]:
        """What the whole-run cache key must cover besides the project's settings: every config
        governing a reported file, with what it enables, and the command line's settings."""
        parts = [f"flags={self.tree.flags!r}"]
        seen: set[Path | None] = set()
        for path in sorted(paths):
            scope = self.of(path)
            if scope.config.path in seen:
                continue
            seen.add(scope.config.path)
            enabled = ",".join(sorted(self.enabled(path)))
            parts.append(f"config={scope.config.path}|{scope.settings.model_dump_json()}|{enabled}")
        return parts
