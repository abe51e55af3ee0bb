"""Configuration: ``[tool.fusion-lint]`` in ``pyproject.toml``, or ``fusion-lint.toml`` /
``.fusion-lint.toml`` with the keys at the top level (DESIGN §6, §12.4).

A config file is data, never code: parsed with tomllib/tomli, validated by a pydantic model (``config_schema``); a bad
key or value is a ``ConfigError`` naming the file, the key and what was expected (exit 2).
"""

from __future__ import annotations

import json
import os
import re
import sys
from copy import deepcopy
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from fusion_lint.base.files import FileTooLarge, read_regular
from fusion_lint.config.formats import OUTPUT_FORMATS as OUTPUT_FORMATS

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
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    ".fusion_lint_cache",
)


#: Settings that shape only how a report is printed, never what is found: not part of any cache key.
REPORTING_ONLY = frozenset({"output_format"})


class ConfigError(Exception):
    """A configuration problem; its text is the one line the user sees."""


def _default_exclude() -> list[str]:
    return list(DEFAULT_EXCLUDE)


def _default_runtime_modules() -> list[str]:
    return ["mcp_fusion"]


@dataclass(frozen=True)
class Settings:
    """The validated ``[tool.fusion-lint]`` table.

    A plain dataclass so that a run without a config table never imports pydantic (start-up);
    a table is validated by ``config_schema`` (pydantic, strict), which builds one of these.
    """

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=_default_exclude)
    extend_exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    runtime_modules: list[str] = field(default_factory=_default_runtime_modules)
    recovery_min_words: int = 5
    follow_calls: int = 3
    cache_dir: str = ".fusion_lint_cache"
    output_format: str | None = None  # None: the command line's, the environment's, else concise

    def model_dump(self, by_alias: bool = False) -> dict[str, Any]:
        """The fields as a dict (by TOML key with ``by_alias``), in declaration order; a copy, as
        pydantic's was (a caller may change it)."""
        return {(name.replace("_", "-") if by_alias else name): deepcopy(getattr(self, name)) for name in SETTING_NAMES}

    def model_dump_json(self) -> str:
        """The settings as compact JSON (cache keys, selection memo): equal settings, equal text.
        How the report is printed (``REPORTING_ONLY``) is left out: it changes no finding."""
        fields_in_order = {name: getattr(self, name) for name in SETTING_NAMES if name not in REPORTING_ONLY}
        return json.dumps(fields_in_order, ensure_ascii=False, separators=(",", ":"))


#: Field names in declaration order; a TOML key is the name with ``-`` for ``_``.
SETTING_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Settings))


@dataclass(frozen=True)
class LoadedConfig:
    settings: Settings
    path: Path | None  # the file it came from; None: defaults
    extends: tuple[Path, ...] = ()  # the files its ``extend`` chain merged in, nearest first

    @property
    def root(self) -> Path | None:
        return self.path.parent if self.path is not None else None


def parse_settings(table: Any, source: str, table_name: str = "[tool.fusion-lint]") -> Settings:
    """Validate one table; ``table_name`` is how messages name it ("" for a file's top level)."""
    where = f"{source}: {table_name} " if table_name else f"{source}: "
    if not isinstance(table, dict):
        raise ConfigError(f"{where}must be a table")
    if not table:  # ``[tool.fusion-lint]`` alone: the defaults, nothing to validate
        return Settings()
    from fusion_lint.config.schema import validate  # pydantic: only when there is a table to validate

    try:
        return Settings(**validate(table))
    except ValueError as exc:  # the schema's one-line description of the first problem
        raise ConfigError(f"{where}{exc}") from None


def read_config_file(path: Path) -> Settings | None:
    """Settings of one file; None when it is a pyproject.toml without our table."""
    return read_config(path)[0]


def read_config(path: Path) -> tuple[Settings | None, tuple[Path, ...]]:
    """Settings of one file, its ``extend`` chain merged in, and the files that chain read (the
    bases, nearest first); ``(None, ())`` for a pyproject.toml without our table."""
    found = _config_table(path)
    if found is None:
        return None, ()
    table, table_name = found
    bases: list[Path] = []
    table = _extended(table, table_name, Path(os.path.abspath(path)), (), bases)
    return parse_settings(table, str(path), table_name), tuple(bases)


def _config_table(path: Path) -> tuple[dict[str, Any], str] | None:
    """The raw table of a config file and how messages name it; None: a pyproject.toml without it."""
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
        return table, "[tool.fusion-lint]"
    # fusion-lint.toml and .fusion-lint.toml hold the keys at the top level (a [tool.fusion-lint]
    # table works too).
    nested = document.get("tool", {}).get("fusion-lint") if isinstance(document.get("tool"), dict) else None
    if nested is not None:
        return nested, "[tool.fusion-lint]"
    return document, ""


#: Lists an extending config adds to its base's (ruff's ``extend-*``); every other key replaces.
EXTENDED_LISTS = ("extend-select", "extend-exclude")


def _extended(table: Any, table_name: str, path: Path, chain: tuple[Path, ...], bases: list[Path]) -> dict[str, Any]:
    """``table`` with its ``extend = "base.toml"`` merged under it (ruff's inheritance): the path
    is relative to the file that writes it, the base may extend another, a cycle is an error naming
    every file in it. The extending file's keys replace the base's, ``extend-select`` and
    ``extend-exclude`` add to them. Each file is validated on its own first, so an error names the
    file the mistake is in."""
    if not isinstance(table, dict) or "extend" not in table:
        return table
    where = f"{path}: {table_name} " if table_name else f"{path}: "
    own = {key: value for key, value in table.items() if key != "extend"}
    target = table["extend"]
    if not isinstance(target, str) or not target:
        raise ConfigError(f"{where}key 'extend': expected the path of a config file (got {target!r})")
    base = Path(os.path.abspath(path.parent / os.path.expanduser(target)))
    if base == path or base in chain:
        cycle = " -> ".join(str(p) for p in (*chain, path, base)[(list((*chain, path)).index(base)) :])
        raise ConfigError(f"{where}key 'extend': the configs extend each other in a cycle: {cycle}")
    try:
        base_found = _config_table(base)
    except ConfigError as exc:
        raise ConfigError(f"{where}key 'extend': {exc}") from None
    if base_found is None:
        raise ConfigError(f"{where}key 'extend': {base}: no [tool.fusion-lint] table")
    bases.append(base)
    base_table = _extended(base_found[0], base_found[1], base, (*chain, path), bases)
    parse_settings(base_table, str(base), base_found[1])  # its own mistakes, named as its own
    parse_settings(own, str(path), table_name)
    merged = dict(base_table)
    for key, value in own.items():
        merged[key] = [*merged[key], *value] if key in EXTENDED_LISTS and key in merged else value
    return merged


def parse_override(text: str) -> dict[str, Any]:
    """An inline ``--config "KEY = VALUE"`` (TOML, any number of keys): the settings it sets, by
    field name; ``ConfigError`` naming the option and the key for a bad one."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"--config {text!r}: neither a config file nor a TOML 'KEY = VALUE' pair such as 'follow-calls = 2' ({exc})"
        ) from None
    if "extend" in table:
        raise ConfigError(f"--config {text!r}: key 'extend' belongs in a config file, not on the command line")
    if not table:
        return {}
    from fusion_lint.config.schema import validate

    try:
        return validate(table)
    except ValueError as exc:
        raise ConfigError(f"--config {text!r}: {exc}") from None


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
        loaded: dict[str, Any] = tomllib.loads(text)
        return loaded
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # the parser recurses once per nested array or inline table
        line = _deepest_line(text)
        raise ConfigError(
            f"{path}: {_line_and_key(text, line)}: invalid TOML: arrays or tables nested too deeply"
        ) from None


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


def config_in(directory: Path) -> LoadedConfig | None:
    """The config file of one folder, if it has one (``CONFIG_FILES`` says which wins)."""
    for name in CONFIG_FILES:
        path = directory / name
        try:
            is_file = path.is_file()
        except OSError:  # a path longer than the system allows: nothing can be read there
            is_file = False
        if is_file:
            settings, bases = read_config(path)
            if settings is not None:
                return LoadedConfig(settings=settings, path=path, extends=bases)
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
    settings, bases = read_config(path)
    if settings is None:
        raise ConfigError(f"{path}: no [tool.fusion-lint] table")
    return LoadedConfig(settings=settings, path=Path(os.path.abspath(path)), extends=bases)
