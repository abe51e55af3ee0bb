"""FL001 file-unreadable: the file cannot be read or decoded."""

from __future__ import annotations

from fusion_lint.rules import Rule, register


@register
class FileUnreadable(Rule):
    code, name, severity = "FL001", "file-unreadable", "error"
    summary = "The file cannot be read or decoded (permissions, invalid UTF-8, a wrong coding cookie)."
    why = "What cannot be read cannot be checked; it is said once, clearly, and the run goes on."
    limits = "Reported by the engine for the whole file: a line suppression cannot silence it."
