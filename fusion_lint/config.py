"""Configuration: ``[tool.fusion-lint]`` in ``pyproject.toml`` or ``fusion-lint.toml`` (DESIGN §6).

A config file is data, never code: parsed with tomllib/tomli, validated by a pydantic model; a bad
key or value is a ``ConfigError`` naming the file, the key and what was expected (exit 2).
"""
from __future__ import annotations

import os
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

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

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
                raise ValueError(f"dotted module names, got {name!r}")
        return value


class LoadedConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    settings: Settings
    path: Optional[Path]  # the file it came from; None: defaults

    @property
    def root(self) -> Optional[Path]:
        return self.path.parent if self.path is not None else None


def _describe_error(error: dict[str, Any]) -> tuple[str, str]:
    key = ".".join(str(part) for part in error["loc"]) or "(table)"
    kind = error["type"]
    if kind == "extra_forbidden":
        expected = "a known key: " + ", ".join(
            sorted(f.alias or name for name, f in Settings.model_fields.items())
        )
        return key, f"unknown key (expected {expected})"
    return key, f"{error['msg']} (got {error.get('input')!r})"


def parse_settings(table: Any, source: str) -> Settings:
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.fusion-lint] must be a table")
    try:
        return Settings.model_validate(table)
    except ValidationError as exc:
        key, what = _describe_error(exc.errors()[0])
        raise ConfigError(f"{source}: [tool.fusion-lint] key '{key}': {what}") from None


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
        table = document.get("tool", {}).get("fusion-lint")
        if table is None:
            return None
        return parse_settings(table, str(path))
    return parse_settings(document.get("tool", {}).get("fusion-lint", document), str(path))


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
