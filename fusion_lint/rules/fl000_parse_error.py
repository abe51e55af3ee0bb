"""FL000 parse-error: the file cannot be parsed."""

from __future__ import annotations

from fusion_lint.rules import Example, Rule, register


@register
class ParseError(Rule):
    code, name, severity = "FL000", "parse-error", "error"
    summary = "The file cannot be parsed (CPython's message)."
    why = (
        "A file that does not parse cannot be checked; it is reported once and every other file is still "
        "linted. The file is parsed once, by CPython's own parser, so hostile inputs are rejected in milliseconds."
    )
    limits = (
        "Reported by the engine for the whole file: a line suppression cannot silence it. A file the pre-scan "
        "skips (it neither imports the runtime nor registers on or builds a framework server) is not parsed "
        "at all, so its syntax errors are not reported."
    )
    prelude = "from mcp_fusion import tool\n"
    INVALID = (Example('def broken(:  # error: FL000 "syntax error"\n    pass\n'),)
