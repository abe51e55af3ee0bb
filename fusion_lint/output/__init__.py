"""Reporters (DESIGN §7), one module per format. Each is ``(report, *, show_source, quiet,
statistics) -> str``; none of them decides anything."""
from __future__ import annotations

from typing import Callable

from .github import github
from .json import json_report
from .junit import junit
from .sarif import sarif
from .text import text

FORMATTERS: dict[str, Callable[..., str]] = {
    "text": text,
    "json": json_report,
    "sarif": sarif,
    "github": github,
    "junit": junit,
}
