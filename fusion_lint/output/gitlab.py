"""``gitlab``: a GitLab Code Quality report (``artifacts:reports:codequality``), the subset of the
Code Climate issue format GitLab reads: a JSON array of issues, each with ``description``,
``check_name``, ``fingerprint`` (unique per issue: GitLab shows one issue per fingerprint),
``severity`` (``info``, ``minor``, ``major``, ``critical`` or ``blocker``) and ``location`` with
``path`` relative to the repository root and ``lines.begin``.

Paths are relative to the repository holding the file (the folder with ``.git``), whatever folder
the run started in: the merge request widget matches them against the diff. Fingerprints are
SARIF's (stable across unrelated edits above a finding).
"""

from __future__ import annotations

import json

from fusion_lint.check.report import Report
from fusion_lint.output.common import fingerprints, repository_path

#: Our severities on GitLab's scale: an error ranks above a warning in the widget.
SEVERITY = {"error": "major", "warning": "minor"}


def gitlab(report: Report, **_: object) -> str:
    issues = []
    for diagnostic, fingerprint in zip(report.diagnostics, fingerprints(report)):
        span = diagnostic.span
        begin = max(span.line, 1)
        issues.append(
            {
                "type": "issue",
                "check_name": diagnostic.code,
                "description": f"{diagnostic.code} [{diagnostic.name}] {diagnostic.message}",
                "categories": ["Bug Risk"],
                "severity": SEVERITY[diagnostic.severity],
                "fingerprint": fingerprint,
                "location": {
                    "path": repository_path(diagnostic.path)[0],
                    "lines": {"begin": begin, "end": max(span.end_line, begin)},
                },
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
