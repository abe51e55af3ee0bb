"""``json-lines``: one JSON object per line, each the ``json`` format's object for one diagnostic
(JSON Lines: UTF-8, ``\\n``-terminated, no enclosing list), for tools that stream findings."""

from __future__ import annotations

import json

from fusion_lint.check.report import Report
from fusion_lint.output.json import diagnostic_json


def json_lines(report: Report, **_: object) -> str:
    texts = {d.path: report.texts.get(d.path) for d in report.diagnostics if d.fix is not None}
    return "".join(
        json.dumps(diagnostic_json(d, texts.get(d.path)), ensure_ascii=False, separators=(",", ":")) + "\n"
        for d in report.diagnostics
    )
