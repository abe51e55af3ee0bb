"""Diagnostics and fixes as data (DESIGN §5, §7): rules return them, reporters print them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from .model import Span

Severity = Literal["error", "warning"]
Applicability = Literal["safe", "unsafe"]


@dataclass(slots=True)
class Edit:
    """Replace ``text[start:end]`` with ``content`` (offsets into the decoded file text)."""

    start: int
    end: int
    content: str


@dataclass(slots=True)
class Fix:
    message: str
    edits: list[Edit]
    applicability: Applicability = "safe"


@dataclass(slots=True)
class Finding:
    """What a rule reports: where, what to do, and maybe how to fix it."""

    span: Span
    message: str
    fix: Optional[Fix] = None
    path: Optional[str] = None  # None: the file of the definition being checked


@dataclass(slots=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    message: str
    path: str
    span: Span
    fix: Optional[Fix] = None
    suppressed_by: Optional[int] = field(default=None, compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.span.line, self.span.col, self.code, self.message)
