"""Which files to lint: directories walked in a stable order, ``.gitignore`` and excludes honoured.

Configured excludes apply to paths given by name too (pre-commit passes every staged file by
name; ruff needs ``--force-exclude`` for this, we make it the default).
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

from .files import read_regular

#: A .gitignore larger than this is not read (git's own limit is 100 MB; real ones are a few kB).
GITIGNORE_MAX_BYTES = 1_000_000


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> tuple[re.Pattern[str], bool, bool]:
    """gitignore pattern -> (regex over a '/'-separated relative path, negated, directory-only)."""
    negated = pattern.startswith("!")
    if negated:
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            # A "]" right after "[" (or "[!") is part of the set, as in fnmatch and git.
            first = i + 2 if pattern.startswith("[!", i) else i + 1
            close = pattern.find("]", first + 1 if pattern.startswith("]", first) else first)
            if close == -1:
                out.append(re.escape("["))
                i += 1
            else:
                body = pattern[i + 1 : close].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = close + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{''.join(out)}(?:/.*)?$"), negated, dir_only


def pattern_problem(pattern: str) -> Optional[str]:
    """Why a gitignore-style pattern cannot be used (``[z-a]``: a reversed range), or None."""
    try:
        _compile(pattern)
    except re.error as exc:
        return re.sub(r" at position \d+$", "", str(exc))
    return None


@dataclass
class IgnoreRules:
    """Patterns relative to ``base``; the last matching pattern decides (gitignore semantics)."""

    base: Path
    patterns: list[str]

    def decide(self, path: Path, is_dir: bool) -> Optional[bool]:
        try:
            relative = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        if relative == ".":
            return None
        verdict = None
        for pattern in self.patterns:
            regex, negated, dir_only = _compile(pattern)
            if dir_only and not is_dir:
                # ``build/`` still excludes files inside build/: match on the parent directories.
                parent = relative.rsplit("/", 1)[0] if "/" in relative else ""
                if not parent or not regex.match(parent):
                    continue
            elif not regex.match(relative):
                continue
            verdict = not negated
        return verdict


def _read_gitignore(directory: Path) -> Optional[IgnoreRules]:
    path = directory / ".gitignore"
    try:  # a FIFO (or a device) named .gitignore is never opened
        lines = read_regular(str(path), GITIGNORE_MAX_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    patterns = [line.rstrip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    # A pattern git would never match (``[z-a]``) is dropped, not a crash of the walk.
    patterns = [pattern for pattern in patterns if pattern_problem(pattern) is None]
    return IgnoreRules(directory, patterns) if patterns else None


@dataclass
class Discovery:
    """The result of walking the paths: files in a stable order, and what could not be read."""

    files: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


class Walker:
    def __init__(self, root: Path, excludes: Iterable[str], respect_gitignore: bool = True):
        self.root = root
        self.excludes = IgnoreRules(root, list(excludes))
        self.respect_gitignore = respect_gitignore
        self._gitignores: dict[Path, Optional[IgnoreRules]] = {}
        self._chains: dict[Path, list[IgnoreRules]] = {}  # a directory's chain: asked once per file in it
        # .gitignore files are read up to the repository's top; outside a repository, up to the
        # project root only (a .gitignore above it belongs to something else).
        self._gitignore_top = next(
            (d for d in (root, *root.parents) if (d / ".git").exists()), root
        )

    def _gitignore_chain(self, directory: Path) -> list[IgnoreRules]:
        known = self._chains.get(directory)
        if known is None:
            known = self._chains[directory] = self._build_chain(directory)
        return known

    def _build_chain(self, directory: Path) -> list[IgnoreRules]:
        chain: list[IgnoreRules] = []
        for candidate in (directory, *directory.parents):
            if candidate not in self._gitignores:
                self._gitignores[candidate] = _read_gitignore(candidate)
            rules = self._gitignores[candidate]
            if rules is not None:
                chain.append(rules)
            if (candidate / ".git").exists() or candidate == self._gitignore_top:
                break
        return list(reversed(chain))  # outermost first: deeper files override

    def excluded(self, path: Path, is_dir: bool) -> bool:
        if self.excludes.decide(path, is_dir) or self._name_excluded(path.name, is_dir):
            return True
        if not self.respect_gitignore:
            return False
        verdict = None
        for rules in self._gitignore_chain(path.parent):
            decided = rules.decide(path, is_dir)
            if decided is not None:
                verdict = decided
        return bool(verdict)

    def _name_excluded(self, name: str, is_dir: bool) -> bool:
        # Exclude patterns without a slash also apply to paths outside the root (by their name).
        for pattern in self.excludes.patterns:
            if "/" not in pattern.rstrip("/") and not pattern.startswith("!"):
                regex, _, dir_only = _compile(pattern)
                if (is_dir or not dir_only) and regex.match(name):
                    return True
        return False

    def walk(self, paths: Iterable[Path], result: Discovery) -> None:
        seen: set[str] = set()
        visited_dirs: set[str] = set()
        for given in paths:
            path = Path(os.path.abspath(given))
            if path.is_dir():
                self._walk_dir(path, result, seen, visited_dirs)
            elif not self._any_parent_excluded(path) and not self.excluded(path, False):
                self._add(path, result, seen)
        result.files.sort()

    def _any_parent_excluded(self, path: Path) -> bool:
        for parent in path.parents:
            if parent == self.root or self.root not in parent.parents:
                break
            if self.excluded(parent, True):
                return True
        return False

    def _add(self, path: Path, result: Discovery, seen: set[str]) -> None:
        key = str(path)
        if key not in seen:
            seen.add(key)
            result.files.append(key)

    def _walk_dir(self, directory: Path, result: Discovery, seen: set[str], visited: set[str]) -> None:
        real = os.path.realpath(directory)
        if real in visited:
            return  # a symlink loop, or the same tree reached twice
        visited.add(real)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            result.problems.append((str(directory), f"cannot list directory: {exc.strerror or exc}"))
            return
        for entry in entries:
            path = Path(entry.path)
            try:
                # Symlinked directories are not followed (as git and ruff do): a link back up the
                # tree would loop, and a link across it would report the same file twice.
                is_dir = entry.is_dir(follow_symlinks=False)
                # A FIFO, device or socket named like a module is listed too: reading it is FL001
                # "not a regular file", never a silent skip (nor a blocked run).
                is_file = entry.name.endswith(".py") and (entry.is_file() or _special(entry))
            except OSError as exc:
                result.problems.append((str(path), f"cannot inspect: {exc.strerror or exc}"))
                continue
            if is_dir:
                if not self.excluded(path, True):
                    self._walk_dir(path, result, seen, visited)
            elif is_file and not self.excluded(path, False):
                self._add(path, result, seen)


def _special(entry: os.DirEntry) -> bool:
    """A FIFO, device or socket (through a symlink too); a dangling symlink is not listed."""
    try:
        return not stat.S_ISREG(entry.stat().st_mode) and not stat.S_ISDIR(entry.stat().st_mode)
    except FileNotFoundError:
        return False
