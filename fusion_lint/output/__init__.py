"""Reporters (DESIGN §7), one module per format. Each is ``(report, *, show_source, quiet,
statistics) -> str``; none of them decides anything."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from importlib import import_module

#: Format name -> (module, function). A run imports only the module of the format it prints.
#: ``concise`` is the default; ``text`` is its older name, kept as an alias.
_REPORTERS = {
    "concise": ("text", "text"),
    "full": ("text", "full"),
    "text": ("text", "text"),
    "json": ("json", "json_report"),
    "json-lines": ("json_lines", "json_lines"),
    "sarif": ("sarif", "sarif"),
    "github": ("github", "github"),
    "gitlab": ("gitlab", "gitlab"),
    "rdjson": ("rdjson", "rdjson"),
    "azure": ("azure", "azure"),
    "pylint": ("pylint", "pylint"),
    "junit": ("junit", "junit"),
}
#: The formats drawn as text for a person (colour, ``--show-fixes``).
TEXT_FORMATS = frozenset({"concise", "full", "text"})
#: The formats that stay one document with ``--statistics`` (the counts go inside it).
DOCUMENT_FORMATS = frozenset({"sarif", "junit"})


class _Formatters(Mapping[str, Callable[..., str]]):
    def __getitem__(self, name: str) -> Callable[..., str]:
        module, function = _REPORTERS[name]
        formatter: Callable[..., str] = getattr(import_module(f".{module}", __name__), function)
        return formatter

    def __iter__(self) -> Iterator[str]:
        return iter(_REPORTERS)

    def __len__(self) -> int:
        return len(_REPORTERS)


FORMATTERS: Mapping[str, Callable[..., str]] = _Formatters()
