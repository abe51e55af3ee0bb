"""Which files to lint: directories walked in a stable order, ``.gitignore`` and excludes honoured.

Configured excludes apply to paths given by name too (pre-commit passes every staged file by
name; ruff needs ``--force-exclude`` for this, we make it the default).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase, translate
from functools import lru_cache
from glob import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fusion_lint.discovery.kept_walk as kept_walk
from fusion_lint.base.files import read_regular

if TYPE_CHECKING:  # imported when a .gitignore is read (_git_spec)
    from pathspec import GitIgnoreSpec

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


def pattern_problem(pattern: str) -> str | None:
    """Why a gitignore-style pattern cannot be used (``[z-a]``: a reversed range), or None."""
    try:
        _compile(pattern)
    except re.error as exc:
        return re.sub(r" at position \d+$", "", str(exc))
    return None


def anchored_rules(base: Path, patterns: Iterable[str]) -> list[IgnoreRules]:
    """Exclude patterns written in a config in ``base`` (or on the command line, ``base`` the working
    directory), as gitignore rules: ``./x`` is ``x`` at the top of ``base`` (as ``/x`` is), and a
    full path (``/home/me/project/build``) is that path. A leading ``/`` is a full path only when
    its first part is a folder at the file system's top and not one in ``base``."""
    relative: list[str] = []
    absolute: list[str] = []
    for written in patterns:
        negated, pattern = ("!", written[1:]) if written.startswith("!") else ("", written)
        while pattern.startswith("./"):
            pattern = "/" + pattern[2:].lstrip("/")
        if pattern.startswith("/") and _names_a_full_path(base, pattern):
            inside = _inside(base, pattern)
            if inside is None:
                absolute.append(negated + pattern)
            elif inside:  # (``base`` itself is the walk's start, never excluded by its own config)
                relative.append(negated + "/" + inside)
            continue
        relative.append(negated + pattern)
    rules = [IgnoreRules(base, relative)] if relative else []
    if absolute:  # matched against full paths
        rules.append(IgnoreRules(Path(os.sep), absolute))
    return rules


def _names_a_full_path(base: Path, pattern: str) -> bool:
    first = pattern.lstrip("/").split("/", 1)[0]
    return bool(first) and os.path.isdir(os.path.join(os.sep, first)) and not os.path.exists(base / first)


def _inside(base: Path, pattern: str) -> str | None:
    """``pattern`` (a full path) relative to ``base`` when it lies inside it, else None."""
    prefix = str(base).rstrip(os.sep) + os.sep
    if pattern.rstrip("/") == str(base):
        return ""
    return pattern[len(prefix) :] if pattern.startswith(prefix) else None


@dataclass
class IgnoreRules:
    """Patterns relative to ``base``; the last matching pattern decides (gitignore semantics)."""

    base: Path
    patterns: list[str]

    def decide(self, path: Path, is_dir: bool) -> bool | None:
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


@lru_cache(maxsize=256)
def _git_spec(lines: tuple[str, ...]) -> GitIgnoreSpec:
    """git's own matching of one file's patterns (pathspec's ``GitIgnoreSpec``: escapes, trailing
    spaces, ``**``, negation, the last match deciding); a line git could never match is dropped."""
    import pathspec  # only when a .gitignore is read: a run without one never imports it

    kept = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except Exception:  # pathspec's error for a pattern git would ignore (``[z-a]``, a lone ``!``)
            continue
        kept.append(line)
    return pathspec.GitIgnoreSpec.from_lines(kept)


@dataclass
class GitIgnoreRules:
    """One file of git's exclude patterns — a ``.gitignore``, ``.git/info/exclude`` or the file
    ``core.excludesFile`` names — relative to ``base`` (the ``.gitignore``'s folder; the
    repository's top for the other two), matched as git matches them."""

    base: Path
    patterns: list[str]  # the file's lines as written (comments and blanks included: git's to judge)
    _spec: GitIgnoreSpec | None = field(default=None, compare=False, repr=False)  # built on the first decision

    def decide(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a ``!`` pattern, None: no pattern of this file matches."""
        try:
            relative = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        if relative == ".":
            return None
        if self._spec is None:
            self._spec = _git_spec(tuple(self.patterns))
        checked = self._spec.check_file(relative + "/" if is_dir else relative)
        return checked.include


def _read_patterns(path: Path, base: Path) -> GitIgnoreRules | None:
    try:  # a FIFO (or a device) named .gitignore is never opened
        text = read_regular(str(path), GITIGNORE_MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    lines = text.splitlines()  # (git drops the CR of a CRLF line too)
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    return GitIgnoreRules(base, lines)


def _read_gitignore(directory: Path) -> GitIgnoreRules | None:
    return _read_patterns(directory / ".gitignore", directory)


def repository_excludes(top: Path) -> list[GitIgnoreRules]:
    """The repository-wide exclude files of the repository whose top is ``top``, lowest precedence
    first (git's order): the file ``core.excludesFile`` names (default
    ``$XDG_CONFIG_HOME/git/ignore``), then ``.git/info/exclude`` (in the common folder of a worktree).
    Both are relative to the repository's top; every ``.gitignore`` beats them."""
    git_dir, common = _git_dirs(top)
    if common is None:
        return []
    found = []
    for path in (_excludes_file(common), common / "info" / "exclude"):
        rules = _read_patterns(path, top) if path is not None else None
        if rules is not None:
            found.append(rules)
    return found


def _git_dirs(top: Path) -> tuple[Path | None, Path | None]:
    """The repository's git folder and its common folder (a worktree's ``.git`` is a file naming
    its git folder, whose ``commondir`` names the main one)."""
    dot = top / ".git"
    git_dir: Path | None = None
    if dot.is_dir():
        git_dir = dot
    elif dot.is_file():
        try:
            first = read_regular(str(dot), 4096).decode("utf-8", "replace").strip()
        except OSError:
            return None, None
        if first.startswith("gitdir:"):
            git_dir = Path(os.path.normpath(top / first[len("gitdir:") :].strip()))
    if git_dir is None:
        return None, None
    common = git_dir
    try:
        named = read_regular(str(git_dir / "commondir"), 4096).decode("utf-8", "replace").strip()
        common = Path(os.path.normpath(git_dir / named))
    except OSError:
        pass
    return git_dir, common


def _excludes_file(common: Path) -> Path | None:
    """``core.excludesFile`` as git reads it: the system, global (``$XDG_CONFIG_HOME/git/config``,
    ``~/.gitconfig``) and repository configs in that order, the last setting winning; unset, git's
    default ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``). ``GIT_CONFIG_NOSYSTEM``,
    ``GIT_CONFIG_SYSTEM`` and ``GIT_CONFIG_GLOBAL`` mean what they mean to git."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    value: str | None = None
    system = (
        [] if os.environ.get("GIT_CONFIG_NOSYSTEM") else [Path(os.environ.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))]
    )
    user = os.environ.get("GIT_CONFIG_GLOBAL")
    personal = [Path(user)] if user else [Path(xdg) / "git" / "config", Path(os.path.expanduser("~/.gitconfig"))]
    for config in (*system, *personal, common / "config"):
        setting = _core_excludes_file(config)
        if setting is not None:
            value = setting
    if value is None:
        return Path(xdg) / "git" / "ignore"
    return Path(os.path.expanduser(value)) if value else None


_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]')


def _core_excludes_file(config: Path) -> str | None:
    """The ``excludesFile`` key of a git config's ``[core]`` section (names are case-insensitive;
    a value may be quoted and followed by a ``#`` or ``;`` comment)."""
    try:
        text = read_regular(str(config), GITIGNORE_MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    section, found = "", None
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            section = header.group(1).lower()
            line = line[header.end() :]
        key, equals, raw = line.partition("=")
        if section != "core" or not equals or key.strip().lower() != "excludesfile":
            continue
        found = _config_value(raw)
    return found


def _config_value(raw: str) -> str:
    out, quoted, i = [], False, 0
    raw = raw.strip()
    while i < len(raw):
        char = raw[i]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and i + 1 < len(raw):
            i += 1
            out.append({"n": "\n", "t": "\t"}.get(raw[i], raw[i]))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        i += 1
    return "".join(out).strip()


@dataclass(frozen=True)
class PathGlob:
    """A ``per-file-ignores`` pattern, as ruff reads one: relative to ``base`` (the folder of the
    config it is written in; ``./x`` too) or a full path; a pattern without a slash also matches
    the file's name; ``legacy/`` matches every file below that folder; ``**/`` matches any number
    of folders; ``!pattern`` matches every file the pattern does not."""

    written: str
    base: str

    @property
    def negated(self) -> bool:
        return self.written.startswith("!")

    @property
    def _pattern(self) -> str:
        return self.written[1:] if self.negated else self.written

    def _full(self) -> str:
        pattern = self._pattern
        return pattern if os.path.isabs(pattern) else os.path.join(escape(self.base), pattern)

    def matches(self, path: str) -> bool:
        pattern = self._pattern
        full = os.path.normpath(self._full()) + ("/" if pattern.endswith("/") else "")
        if full.endswith("/"):
            hit = path.startswith(full) or fnmatchcase(path, full + "*")
        else:
            hit = any(fnmatchcase(path, candidate) for candidate in {full, full.replace("/**/", "/")})
        if not hit and "/" not in pattern:
            hit = fnmatchcase(os.path.basename(path), pattern)
        return hit != self.negated


def glob_problem(pattern: str) -> str | None:
    """Why a ``per-file-ignores`` pattern cannot be used (as ruff's globs refuse them: an empty
    pattern, a ``[`` never closed, a reversed range), or None."""
    body = pattern[1:] if pattern.startswith("!") else pattern
    if not body.strip():
        return "an empty pattern matches no file"
    index = body.find("[")
    while index != -1:
        first = index + 2 if body.startswith("[!", index) else index + 1
        close = body.find("]", first + 1 if body.startswith("]", first) else first)
        if close == -1:
            return f"the '[' at {index + 1} is never closed"
        members = body[first:close]
        for at in range(1, len(members) - 1):
            if members[at] == "-" and members[at - 1] > members[at + 1]:
                return f"bad character range {members[at - 1]}-{members[at + 1]}"
        index = body.find("[", close + 1)
    try:
        re.compile(translate(body))
    except re.error as exc:  # pragma: no cover (translate escapes what it does not understand)
        return re.sub(r" at position \d+$", "", str(exc))
    return None


@dataclass
class Discovery:
    """The result of walking the paths: files in a stable order, and what could not be read."""

    files: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


#: The exclude rules that judge the entries of a folder (those of the config governing it).
ExcludeRules = Callable[[Path], Sequence[IgnoreRules]]


class Walker:
    """``excludes`` are patterns relative to ``root``; ``exclude_rules``, when given, replaces them
    with the rules of each folder (each file is governed by the closest config above it): a file
    is judged by the rules of its folder, a folder by those of the folder holding it, so a config
    can exclude a sub-folder that has a config of its own."""

    def __init__(
        self,
        root: Path,
        excludes: Iterable[str] = (),
        respect_gitignore: bool = True,
        exclude_rules: ExcludeRules | None = None,
        lease: kept_walk.WalkLease | None = None,
    ):
        self.root = root
        self.lease = lease  # the language server's: folder listings kept from its last lints
        fixed = [IgnoreRules(root, list(excludes))]
        self.exclude_rules: ExcludeRules = exclude_rules or (lambda directory: fixed)
        self.respect_gitignore = respect_gitignore
        self._gitignores: dict[Path, GitIgnoreRules | None] = {}
        self._chains: dict[Path, list[GitIgnoreRules]] = {}
        self._repositories: dict[
            Path, list[GitIgnoreRules]
        ] = {}  # a repository's info/exclude, excludesFile  # a directory's chain: asked once per file in it
        # .gitignore files are read up to the repository's top; outside a repository, up to the
        # project root only (a .gitignore above it belongs to something else).
        self._gitignore_top = next((d for d in (root, *root.parents) if (d / ".git").exists()), root)

    def _gitignore_chain(self, directory: Path) -> list[GitIgnoreRules]:
        known = self._chains.get(directory)
        if known is None:
            known = self._chains[directory] = self._build_chain(directory)
        return known

    def _build_chain(self, directory: Path) -> list[GitIgnoreRules]:
        chain: list[GitIgnoreRules] = []
        for candidate in (directory, *directory.parents):
            if candidate not in self._gitignores:
                self._gitignores[candidate] = _read_gitignore(candidate)
            rules = self._gitignores[candidate]
            if rules is not None:
                chain.append(rules)
            if (candidate / ".git").exists():
                chain.extend(reversed(self._repository_excludes(candidate)))
                break
            if candidate == self._gitignore_top:
                break
        return list(reversed(chain))  # lowest precedence first: each later file overrides

    def _repository_excludes(self, top: Path) -> list[GitIgnoreRules]:
        known = self._repositories.get(top)
        if known is None:
            known = self._repositories[top] = repository_excludes(top)
        return known

    def excluded(self, path: Path, is_dir: bool) -> bool:
        rules = self.exclude_rules(path.parent)
        if any(r.decide(path, is_dir) for r in rules) or any(self._name_excluded(r, path, is_dir) for r in rules):
            return True
        if not self.respect_gitignore:
            return False
        verdict = None
        for gitignore in self._gitignore_chain(path.parent):
            decided = gitignore.decide(path, is_dir)
            if decided is not None:
                verdict = decided
        return bool(verdict)

    @staticmethod
    def _name_excluded(rules: IgnoreRules, path: Path, is_dir: bool) -> bool:
        # Exclude patterns without a slash also apply to paths outside their base (by their name).
        base, inside = str(rules.base), str(path)
        if inside == base or inside.startswith(base.rstrip(os.sep) + os.sep):  # strings: once per file walked
            return False  # ``decide`` judged it
        for pattern in rules.patterns:
            if "/" not in pattern.rstrip("/") and not pattern.startswith("!"):
                regex, _, dir_only = _compile(pattern)
                if (is_dir or not dir_only) and regex.match(path.name):
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

    def judged_by(self, directory: Path) -> tuple[Any, ...]:
        """What decides which entries of ``directory`` are walked: the exclude rules of its config
        and, when respected, its ``.gitignore`` chain (as they are now: read by this walk)."""
        chain = self._gitignore_chain(directory) if self.respect_gitignore else ()
        return (
            self.respect_gitignore,
            tuple((str(r.base), tuple(r.patterns)) for r in self.exclude_rules(directory)),
            tuple((str(r.base), tuple(r.patterns)) for r in chain),
        )

    def _walk_dir(self, directory: Path, result: Discovery, seen: set[str], visited: set[str]) -> None:
        real = os.path.realpath(directory)
        if real in visited:
            return  # a symlink loop, or the same tree reached twice
        visited.add(real)
        lease = self.lease
        rules, before = None, None
        if lease is not None:
            try:
                rules = self.judged_by(directory)
            except Exception:  # a broken config: raised where the walk judges an entry, as without this
                lease = None
        if lease is not None:
            entries = lease.entries(str(directory), rules)
            if entries is not None:
                for is_dir, listed_path in entries:
                    if is_dir:
                        self._walk_dir(Path(listed_path), result, seen, visited)
                    elif listed_path not in seen:
                        seen.add(listed_path)
                        result.files.append(listed_path)
                return
            before = kept_walk.folder_signature(str(directory))  # (taken before it is listed)
        try:
            listed = sorted(os.scandir(directory), key=lambda e: e.name)
        except FileNotFoundError:
            return  # gone since its parent was listed (another run's cache staging directory): nothing to lint
        except OSError as exc:
            result.problems.append((str(directory), f"cannot list directory: {exc.strerror or exc}"))
            return
        kept: list[tuple[bool, str]] = []
        keepable = True  # (a folder whose entries could not all be judged is listed again next time)
        for entry in listed:
            path = Path(entry.path)
            try:
                # Symlinked directories are not followed (as git and ruff do): a link back up the
                # tree would loop, and a link across it would report the same file twice.
                is_dir = entry.is_dir(follow_symlinks=False)
                # A FIFO, device or socket named like a module is listed too: reading it is FL001
                # "not a regular file", never a silent skip (nor a blocked run).
                is_file = entry.name.endswith(".py") and (entry.is_file() or _special(entry))
                # A linked module's kind follows its target, which may change while this folder does not.
                keepable = keepable and not (entry.name.endswith(".py") and entry.is_symlink())
            except OSError as exc:
                result.problems.append((str(path), f"cannot inspect: {exc.strerror or exc}"))
                keepable = False
                continue
            if is_dir:
                if not self.excluded(path, True):
                    kept.append((True, str(path)))
                    self._walk_dir(path, result, seen, visited)
            elif is_file and not self.excluded(path, False):
                kept.append((False, str(path)))
                self._add(path, result, seen)
        if lease is not None:
            lease.record(str(directory), before if keepable else None, rules, tuple(kept))


def _special(entry: os.DirEntry[str]) -> bool:
    """A FIFO, device or socket (through a symlink too); a dangling symlink is not listed."""
    try:
        return not stat.S_ISREG(entry.stat().st_mode) and not stat.S_ISDIR(entry.stat().st_mode)
    except FileNotFoundError:
        return False
