"""Configuration: ``[tool.fusion-lint]`` in ``pyproject.toml`` or ``fusion-lint.toml`` (DESIGN §6).

A config file is data, never code: parsed with tomllib/tomli, validated by a pydantic model; a bad
key or value is a ``ConfigError`` naming the file, the key and what was expected (exit 2).
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILES = ("fusion-lint.toml", "pyproject.toml")

#: Directories nobody wants linted (ruff's list); ``exclude`` replaces it, ``extend-exclude`` adds.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".mypy_cache", ".nox", ".pants.d",
    ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", "__pypackages__", "_build", "buck-out",
    "dist", "node_modules", "venv", ".fusion_lint_cache",
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
            if not all(part.isidentifier() for part in name.split(".")):
                raise ValueError(f"expected dotted module names such as 'vendored.fusion', not {name!r}")
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
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        table = tool.get("fusion-lint") if isinstance(tool, dict) else None
        if table is None:
            return None
        return parse_settings(table, str(path))
    # fusion-lint.toml holds the keys at the top level (a [tool.fusion-lint] table works too).
    nested = document.get("tool", {}).get("fusion-lint") if isinstance(document.get("tool"), dict) else None
    if nested is not None:
        return parse_settings(nested, str(path))
    return parse_settings(document, str(path), table_name="")


def find_config(start: Path) -> LoadedConfig:
    """The nearest config at or above ``start`` (a file or directory)."""
    directory = start if start.is_dir() else start.parent
    directory = Path(os.path.abspath(directory))
    for candidate in (directory, *directory.parents):
        for name in CONFIG_FILES:
            path = candidate / name
            if path.is_file():
                settings = read_config_file(path)
                if settings is not None:
                    return LoadedConfig(settings=settings, path=path)
    return LoadedConfig(settings=Settings(), path=None)


def load_explicit(path: Path) -> LoadedConfig:
    settings = read_config_file(path)
    if settings is None:
        raise ConfigError(f"{path}: no [tool.fusion-lint] table")
    return LoadedConfig(settings=settings, path=Path(os.path.abspath(path)))
