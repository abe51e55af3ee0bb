"""The ``[tool.fusion-lint]`` table's schema: pydantic, strict, imported only when a config table
is read (``config.parse_settings``), so a run without one never pays for pydantic's import."""

from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fusion_lint.config.formats import OUTPUT_FORMATS
from fusion_lint.discovery.walk import glob_problem, pattern_problem

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

OutputFormat = Literal[OUTPUT_FORMATS]  # type: ignore[valid-type]  # the tuple is the one list of names


class SettingsSchema(BaseModel):
    """What ``config.Settings`` holds, with its types and bounds (the defaults are ``Settings``'s:
    ``validate`` returns only the keys the table sets)."""

    # strict: TOML has real types, so ``follow-calls = "3"`` or ``respect-gitignore = 1`` is a mistake.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, strict=True)

    select: list[str] | None = None
    ignore: list[str] = Field(default_factory=list)
    extend_select: list[str] = Field(default_factory=list, alias="extend-select")
    per_file_ignores: dict[str, list[str]] = Field(default_factory=dict, alias="per-file-ignores")
    exclude: list[str] = Field(default_factory=list)
    extend_exclude: list[str] = Field(default_factory=list, alias="extend-exclude")
    respect_gitignore: bool = Field(True, alias="respect-gitignore")
    runtime_modules: list[str] = Field(default_factory=lambda: ["mcp_fusion"], alias="runtime-modules")
    recovery_min_words: int = Field(5, alias="recovery-min-words", ge=1, le=100)
    follow_calls: int = Field(3, alias="follow-calls", ge=0, le=20)
    cache_dir: str = Field(".fusion_lint_cache", alias="cache-dir")
    output_format: OutputFormat | None = Field(None, alias="output-format")

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


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key_path(location: tuple[Any, ...]) -> str:
    """A TOML dotted key: ``per-file-ignores."tests/*.py"`` (parts that are not bare keys quoted)."""
    parts = [str(part) for part in location if not isinstance(part, int)]
    return ".".join(part if _BARE_KEY.match(part) else f'"{part}"' for part in parts) or "(table)"


def _describe_error(error: ErrorDetails) -> tuple[str, str]:
    key = _key_path(tuple(error["loc"]))
    kind = error["type"]
    if kind == "extra_forbidden":
        expected = "a known key: " + ", ".join(
            sorted(f.alias or name for name, f in SettingsSchema.model_fields.items())
        )
        return key, f"unknown key (expected {expected})"
    message = str(error["msg"])
    # pydantic says "Input should be a valid list"; the user reads "expected a list".
    message = re.sub(r"^Input should be ", "expected ", message)
    message = re.sub(r"^Value error, ", "", message)
    return key, f"{message} (got {error.get('input')!r})"


def validate(table: dict[str, Any]) -> dict[str, Any]:
    """The settings the table sets, by field name; ``ValueError("key 'K': what")`` for its first problem."""
    try:
        validated = SettingsSchema.model_validate(table)
    except ValidationError as exc:
        key, what = _describe_error(exc.errors()[0])
        raise ValueError(f"key '{key}': {what}") from None
    return validated.model_dump(exclude_unset=True)
