"""Lines as CPython counts them: ``\\n``, ``\\r\\n`` and a lone ``\\r`` each end one (a file saved
with classic Mac line endings has as many lines as its LF twin). Spans, suppressions, FL900 and
every excerpt a reporter prints split text here, so their line numbers agree with CPython's."""

from __future__ import annotations

import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """The offset where each line starts."""
    if "\r" not in text:  # the common case, without a regex
        starts = [0]
        find = text.find
        index = find("\n")
        while index != -1:
            starts.append(index + 1)
            index = find("\n", index + 1)
        return starts
    return [0, *(match.end() for match in LINE_BREAK.finditer(text))]


def split_lines(text: str) -> list[str]:
    """The lines without their endings (``str.split("\\n")``'s count: a text ending in a line
    break has an empty last line; unlike ``splitlines``, a form feed ends no line)."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)
