"""The names of the report formats, shared by the settings and their schema."""

from __future__ import annotations

#: The report formats (``--output-format``, ``output-format``, ``FUSION_LINT_OUTPUT_FORMAT``);
#: ``output/`` has a reporter for each (a test holds them equal). ``text`` is ``concise``'s old name.
OUTPUT_FORMATS = (
    "concise",
    "full",
    "text",
    "json",
    "json-lines",
    "sarif",
    "github",
    "gitlab",
    "rdjson",
    "azure",
    "pylint",
    "junit",
)
