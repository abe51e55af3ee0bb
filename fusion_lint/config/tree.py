"""Which configuration governs each file, the ruff way (DESIGN §12.4).

Each file is governed by the closest config above it: in each folder, from the file's own upward,
``.fusion-lint.toml``, then ``fusion-lint.toml``, then a ``pyproject.toml`` with a
``[tool.fusion-lint]`` table (one without is no config, and the search goes on upward). Configs do
not merge: a nested config replaces the ones above it for its folder's files, as in ruff.
``--config PATH`` makes one config govern every file; ``--isolated`` uses none (the defaults).

Two kinds of settings:

* **Per file**, from the file's closest config: ``select``, ``ignore``, ``extend-select``,
  ``per-file-ignores``, ``exclude``, ``extend-exclude`` and ``recovery-min-words`` (of the contract
  entries written in the file). Their patterns are relative to the folder of the config they are
  written in; a folder is excluded by the config of the folder holding it.
* **Project-wide**, from the *project's* config — the closest one to the common folder of the
  paths given (so the same whatever the order of the paths; ``.`` is the project), skipping a
  config in a package's own folder (it governs the package's files, but the package is part of
  the project above it, which a single file's run must resolve it in too):
  ``runtime-modules``, ``follow-calls``, ``cache-dir`` and ``respect-gitignore``. They shape the
  project every file is resolved in (what the pre-scan looks for, how far calls are followed
  across files, where the cache is), which must be one for the whole run.

The command line's settings (``FlagSettings``) beat every config's; their patterns are relative to
the working directory.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fusion_lint.config.settings import DEFAULTS, ConfigError, LoadedConfig, Settings, config_in
from fusion_lint.discovery.walk import IgnoreRules, PathGlob, anchored_rules, glob_problem, pattern_problem


@dataclass(frozen=True)
class FlagSettings:
    """What the command line sets for every file: ``--exclude`` replaces each config's ``exclude``
    (the default list included), ``--extend-exclude`` adds to it; ``--per-file-ignores`` replaces
    each config's ``per-file-ignores``, ``--extend-per-file-ignores`` adds; ``--[no-]respect-gitignore``
    replaces ``respect-gitignore``. Patterns are relative to ``base``, the working directory."""

    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    respect_gitignore: bool | None = None
    base: str = field(default_factory=os.getcwd)

    @classmethod
    def parse(
        cls,
        exclude: Sequence[str] | None = None,
        extend_exclude: Sequence[str] = (),
        per_file_ignores: Sequence[str] | None = None,
        extend_per_file_ignores: Sequence[str] = (),
        respect_gitignore: bool | None = None,
    ) -> FlagSettings:
        """From the flags as typed (``--per-file-ignores 'tests/*.py:FL300,FL302'``); a bad pattern
        is a ``ConfigError`` naming the flag."""
        for flag, patterns in (("--exclude", exclude or ()), ("--extend-exclude", extend_exclude)):
            for pattern in patterns:
                problem = pattern_problem(pattern)
                if problem is not None:
                    raise ConfigError(f"{flag}: cannot parse the pattern {pattern!r}: {problem}")
        return cls(
            exclude=tuple(exclude) if exclude is not None else None,
            extend_exclude=tuple(extend_exclude),
            per_file_ignores=_pairs(per_file_ignores, "--per-file-ignores") if per_file_ignores is not None else None,
            extend_per_file_ignores=_pairs(extend_per_file_ignores, "--extend-per-file-ignores"),
            respect_gitignore=respect_gitignore,
        )


def _pairs(values: Iterable[str], flag: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    pairs = []
    for value in values:
        pattern, colon, codes = value.rpartition(":")
        keys = tuple(code.strip() for code in codes.split(",") if code.strip())
        if not colon or not pattern or not keys:
            raise ConfigError(f"{flag}: expected PATTERN:CODES such as 'tests/*.py:FL300,FL302', not {value!r}")
        problem = glob_problem(pattern)
        if problem is not None:
            raise ConfigError(f"{flag}: cannot parse the pattern {pattern!r}: {problem}")
        pairs.append((pattern, keys))
    return tuple(pairs)


@dataclass(frozen=True)
class PerFileIgnore:
    glob: PathGlob
    keys: tuple[str, ...]  # rule codes, prefixes or names, as written
    source: str | None  # where they were written, for an error: a config's table (None: the flag)
    option: str  # the key or flag


@dataclass
class Scope:
    """What governs the files of the folders a config covers."""

    config: LoadedConfig
    base: Path  # what its patterns are relative to: the config's folder (the project root if none)
    excludes: list[IgnoreRules]
    per_file_ignores: list[PerFileIgnore]

    @property
    def settings(self) -> Settings:
        return self.config.settings

    @property
    def table(self) -> str:
        return table_of(self.config)


def table_of(config: LoadedConfig) -> str:
    """How an error names where a config's lists were written."""
    return f"{config.path}: [tool.fusion-lint]" if config.path else "configuration"


class ConfigTree:
    """The configs of a run, each file read once: the closest config of any folder, the project's."""

    def __init__(
        self,
        forced: LoadedConfig | None = None,
        isolated: bool = False,
        flags: FlagSettings | None = None,
        overrides: Mapping[str, Any] | None = None,
    ):
        """``overrides``: settings by field name that replace every config's (inline ``--config
        "KEY = VALUE"``), validated already."""
        self.overrides = dict(overrides or {})
        forced = DEFAULTS if isolated and forced is None else forced
        self.forced = self._overridden(forced) if forced is not None else None
        self.flags = flags or FlagSettings()
        self._closest: dict[Path, LoadedConfig] = {}
        self._overridden_configs: dict[Path | None, LoadedConfig] = {}
        self._scopes: dict[Path | None, Scope] = {}

    def _overridden(self, config: LoadedConfig) -> LoadedConfig:
        if not self.overrides:
            return config
        settings = dataclasses.replace(config.settings, **self.overrides)
        return dataclasses.replace(config, settings=settings)

    def closest(self, directory: Path) -> LoadedConfig:
        """The config governing the files directly in ``directory`` (an absolute path), with the
        inline overrides applied."""
        if self.forced is not None:
            return self.forced
        found = self._closest_file(directory)
        if not self.overrides:
            return found
        known = self._overridden_configs.get(found.path)  # one object per config: scopes are kept by it
        if known is None:
            known = self._overridden_configs[found.path] = self._overridden(found)
        return known

    def _closest_file(self, directory: Path) -> LoadedConfig:
        known = self._closest.get(directory)  # every file of a folder asks: no walk up for those after the first
        if known is not None:
            return known
        visited = []
        found: LoadedConfig | None = None
        for candidate in (directory, *directory.parents):
            if candidate in self._closest:
                found = self._closest[candidate]
                break
            visited.append(candidate)
            found = config_in(candidate)
            if found is not None:
                break
        config = found or DEFAULTS
        for candidate in visited:
            self._closest[candidate] = config
        return config

    def project(self, paths: Sequence[Path]) -> LoadedConfig:
        """The project's config: the closest to the common folder of ``paths`` that is not inside a
        package. A config in a package's folder (one with ``__init__.py``) governs that package's
        files, but the package belongs to the project above it: so ``fusion-lint pkg/sub/x.py``
        (pre-commit, the editor) resolves ``x.py`` in the same project as ``fusion-lint .`` does."""
        config = self.closest(common_folder(paths))
        while config.root is not None and (config.root / "__init__.py").is_file():
            above = (
                self.closest(config.root.parent) if config.root.parent != config.root else self._overridden(DEFAULTS)
            )
            if above.path is None:
                break  # no config above the package: its own is the project's
            config = above
        return config

    def scope(self, directory: Path, root: Path) -> Scope:
        """The scope of the files directly in ``directory``; ``root``: the project root (the base of
        the default settings' patterns)."""
        config = self.closest(directory)
        if config.path not in self._scopes:
            self._scopes[config.path] = self._scope(config, config.root or root)
        return self._scopes[config.path]

    def _scope(self, config: LoadedConfig, base: Path) -> Scope:
        settings, flags = config.settings, self.flags
        cwd = Path(flags.base)
        if flags.exclude is not None:
            excludes = anchored_rules(cwd, flags.exclude)
        else:
            excludes = anchored_rules(base, settings.exclude)
        excludes += anchored_rules(base, settings.extend_exclude) + anchored_rules(cwd, flags.extend_exclude)
        table = table_of(config)
        if flags.per_file_ignores is not None:
            ignores = _ignores(flags.per_file_ignores, str(cwd), None, "per-file-ignores")
        else:
            ignores = [
                PerFileIgnore(PathGlob(pattern, str(base)), tuple(keys), table, f'per-file-ignores."{pattern}"')
                for pattern, keys in settings.per_file_ignores.items()
            ]
        ignores += _ignores(flags.extend_per_file_ignores, str(cwd), None, "extend-per-file-ignores")
        return Scope(config, base, excludes, ignores)

    def scopes(self) -> list[Scope]:
        """Every scope built so far (the configs this run used), in a stable order."""
        return [self._scopes[key] for key in sorted(self._scopes, key=lambda path: str(path or ""))]


def _ignores(
    pairs: Iterable[tuple[str, tuple[str, ...]]], base: str, source: str | None, option: str
) -> list[PerFileIgnore]:
    return [PerFileIgnore(PathGlob(pattern, base), keys, source, option) for pattern, keys in pairs]


def common_folder(paths: Sequence[Path]) -> Path:
    """The deepest folder holding every path (a file counts as its folder)."""
    folders = [Path(os.path.abspath(path)) for path in paths] or [Path(os.path.abspath("."))]
    folders = [folder if folder.is_dir() else folder.parent for folder in folders]
    return Path(os.path.commonpath([str(folder) for folder in folders]))
