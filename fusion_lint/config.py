"""Configuration: ``[tool.fusion-lint]`` in ``pyproject.toml``, or ``fusion-lint.toml`` /
``.fusion-lint.toml`` with the keys at the top level (DESIGN §6, §12.4).

A config file is data, never code: parsed with tomllib/tomli, validated by a pydantic model; a bad
key or value is a ``ConfigError`` naming the file, the key and what was expected (exit 2).
"""
from __future__ import annotations

import keyword
import os
import re
import sys
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .discovery import glob_problem, pattern_problem
from .files import FileTooLarge, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: The config files of one folder, the first found winning (the dedicated files before
#: ``pyproject.toml``, as ruff puts ``.ruff.toml`` and ``ruff.toml`` before it). A
#: ``pyproject.toml`` without a ``[tool.fusion-lint]`` table is no config.
CONFIG_FILES = (".fusion-lint.toml", "fusion-lint.toml", "pyproject.toml")
#: A configuration file larger than this is refused (real ones are a few kB).
CONFIG_MAX_BYTES = 10_000_000

#: Directories nobody wants linted (ruff's list, and our cache's default folder); ``exclude``
#: replaces it, ``extend-exclude`` adds.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pypackages__", "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
    ".fusion_lint_cache",
)  # fmt: skip


class ConfigError(Exception):
    """A configuration problem; its text is the one line the user sees."""


class Settings(BaseModel):
    """The validated ``[tool.fusion-lint]`` table."""

    # strict: TOML has real types, so ``follow-calls = "3"`` or ``respect-gitignore = 1`` is a mistake.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)

    select: Optional[list[str]] = None
    ignore: list[str] = Field(default_factory=list)
    extend_select: list[str] = Field(default_factory=list, alias="extend-select")
    per_file_ignores: dict[str, list[str]] = Field(default_factory=dict, alias="per-file-ignores")
    exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = Field(default_factory=list, alias="extend-exclude")
    respect_gitignore: bool = Field(True, alias="respect-gitignore")
    runtime_modules: list[str] = Field(default_factory=lambda: ["mcp_fusion"], alias="runtime-modules")
    recovery_min_words: int = Field(5, alias="recovery-min-words", ge=1, le=100)
    follow_calls: int = Field(3, alias="follow-calls", ge=0, le=20)
    cache_dir: str = Field(".fusion_lint_cache", alias="cache-dir")

    @field_validator("runtime_modules")
    @classmethod
    def _modules(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one module name")
        for name in value:
            parts = name.split(".")
            if not all(part.isidentifier() for part in parts):
                raise ValueError(f"expected dotted module names such as 'vendored.fusion', not {name!r}")
            reserved = next((part for part in parts if keyword.iskeyword(part)), None)
            if reserved is not None:  # no import statement can name it: nothing would be checked
                raise ValueError(f"{name!r} is not a module name: {reserved!r} is a Python keyword")
        return value

    @field_validator("exclude", "extend_exclude")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            problem = pattern_problem(pattern)
            if problem is not None:
                raise ValueError(f"cannot parse the pattern {pattern!r}: {problem}")
        return value

    @field_validator("per_file_ignores")
    @classmethod
    def _globs(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for pattern in value:
            problem = glob_problem(pattern)
            if problem is not None:
                raise ValueError(f"cannot parse the pattern {pattern!r}: {problem}")
        return value


class LoadedConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    settings: Settings
    path: Optional[Path]  # the file it came from; None: defaults

    @property
    def root(self) -> Optional[Path]:
        return self.path.parent if self.path is not None else None


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key_path(location: tuple[Any, ...]) -> str:
    """A TOML dotted key: ``per-file-ignores."tests/*.py"`` (parts that are not bare keys quoted)."""
    parts = [str(part) for part in location if not isinstance(part, int)]
    return ".".join(part if _BARE_KEY.match(part) else f'"{part}"' for part in parts) or "(table)"


def _describe_error(error: dict[str, Any]) -> tuple[str, str]:
    key = _key_path(tuple(error["loc"]))
    kind = error["type"]
    if kind == "extra_forbidden":
        expected = "a known key: " + ", ".join(
            sorted(f.alias or name for name, f in Settings.model_fields.items())
        )
        return key, f"unknown key (expected {expected})"
    message = str(error["msg"])
    # pydantic says "Input should be a valid list"; the user reads "expected a list".
    message = re.sub(r"^Input should be ", "expected ", message)
    message = re.sub(r"^Value error, ", "", message)
    return key, f"{message} (got {error.get('input')!r})"


def parse_settings(table: Any, source: str, table_name: str = "[tool.fusion-lint]") -> Settings:
    """Validate one table; ``table_name`` is how messages name it ("" for a file's top level)."""
    where = f"{source}: {table_name} " if table_name else f"{source}: "
    if not isinstance(table, dict):
        raise ConfigError(f"{where}must be a table")
    try:
        return Settings.model_validate(table)
    except ValidationError as exc:
        key, what = _describe_error(exc.errors()[0])
        raise ConfigError(f"{where}key '{key}': {what}") from None


def read_config_file(path: Path) -> Optional[Settings]:
    """Settings of one file; None when it is a pyproject.toml without our table."""
    try:
        data = read_regular(str(path), CONFIG_MAX_BYTES)
    except FileTooLarge:
        raise ConfigError(f"{path}: cannot read: larger than {CONFIG_MAX_BYTES // 1_000_000} MB") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    document = parse_toml(data, path)
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        table = tool.get("fusion-lint") if isinstance(tool, dict) else None
        if table is None:
            return None
        return parse_settings(table, str(path))
    # fusion-lint.toml and .fusion-lint.toml hold the keys at the top level (a [tool.fusion-lint]
    # table works too).
    nested = document.get("tool", {}).get("fusion-lint") if isinstance(document.get("tool"), dict) else None
    if nested is not None:
        return parse_settings(nested, str(path))
    return parse_settings(document, str(path), table_name="")


def parse_toml(data: bytes, path: Path) -> dict[str, Any]:
    """The TOML document; every way it can be broken is a ``ConfigError`` naming the file, the line
    and, where one is written there, the key."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        where = _line_and_key(data.decode("utf-8", "replace"), line)
        raise ConfigError(f"{path}: {where}: not valid UTF-8 (byte {exc.start}); TOML files are UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # the parser recurses once per nested array or inline table
        line = _deepest_line(text)
        raise ConfigError(f"{path}: {_line_and_key(text, line)}: invalid TOML: arrays or tables nested too deeply") from None


_KEY_AT_LINE_START = re.compile(r"\s*([A-Za-z0-9_.\"'-]+?)\s*=")


def _line_and_key(text: str, line: int) -> str:
    """``line 3 (key 'exclude')``: the key is the one assigned on that line or the nearest above."""
    lines = text.split("\n")
    for number in range(min(line, len(lines)), 0, -1):
        match = _KEY_AT_LINE_START.match(lines[number - 1])
        if match:
            return f"line {line} (key '{match.group(1)}')"
    return f"line {line}"


def _deepest_line(text: str) -> int:
    """Where brackets and braces first nest deeper than any real configuration does (strings are
    not skipped: this only places an error the parser already found)."""
    depth = 0
    for index, char in enumerate(text):
        depth += char in "[{"
        depth -= char in "]}"
        if depth > 100:
            return text.count("\n", 0, index) + 1
    return 1


DEFAULTS = LoadedConfig(settings=Settings(), path=None)


def config_in(directory: Path) -> Optional[LoadedConfig]:
    """The config file of one folder, if it has one (``CONFIG_FILES`` says which wins)."""
    for name in CONFIG_FILES:
        path = directory / name
        try:
            is_file = path.is_file()
        except OSError:  # a path longer than the system allows: nothing can be read there
            is_file = False
        if is_file:
            settings = read_config_file(path)
            if settings is not None:
                return LoadedConfig(settings=settings, path=path)
    return None


def find_config(start: Path) -> LoadedConfig:
    """The nearest config at or above ``start`` (a file or directory)."""
    directory = start if start.is_dir() else start.parent
    directory = Path(os.path.abspath(directory))
    for candidate in (directory, *directory.parents):
        found = config_in(candidate)
        if found is not None:
            return found
    return DEFAULTS


def load_explicit(path: Path) -> LoadedConfig:
    settings = read_config_file(path)
    if settings is None:
        raise ConfigError(f"{path}: no [tool.fusion-lint] table")
    return LoadedConfig(settings=settings, path=Path(os.path.abspath(path)))
