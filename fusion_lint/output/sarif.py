"""``sarif``: SARIF 2.1.0 with one run, for GitHub code scanning (DESIGN §7).

Statistics go into the run's own counting fields, never as stray text: the document stays one
well-formed SARIF log whatever the flags.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fusion_lint import __version__
from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.report import Report
from fusion_lint.output.common import INFORMATION_URI, fingerprints, repository_root, source_excerpt
from fusion_lint.output.docs import rule_markdown
from fusion_lint.rules import Rule, all_rules

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"


def _reported_rules(report: Report) -> list[type[Rule]]:
    """The rules that ran, plus any that reported anyway (FL999 always can), in code order."""
    codes = set(report.enabled) | {d.code for d in report.diagnostics}
    by_code = {rule.code: rule for rule in all_rules()}
    return [by_code[code] for code in sorted(codes) if code in by_code]


def _sarif_rule(rule: type[Rule]) -> dict[str, Any]:
    described = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "helpUri": rule.url(),
        "help": {
            "text": f"{rule.summary}\n\nWhy: {rule.why}" + (f"\n\nFix: {rule.fix}" if rule.fix else ""),
            "markdown": "\n".join(rule_markdown(rule)) + "\n",  # the rule's page, as docs/rules.md shows it
        },
        "defaultConfiguration": {"level": rule.severity, "enabled": rule.default_enabled},
    }
    return described


#: The key of our fingerprint in ``partialFingerprints`` (versioned: a new recipe is a new key).
FINGERPRINT = "fusionLint/v1"


def _source_root(report: Report) -> str:
    """What ``%SRCROOT%`` stands for: the repository holding the reported files (the folder with
    ``.git``), found from the files, not from the working directory; outside any repository, the
    working directory (as before repositories were looked for)."""
    for path in [*report.checked[:1], *(d.path for d in report.diagnostics[:1])]:
        root = repository_root(path)
        if root is not None:
            return root
    return repository_root(os.path.join(os.getcwd(), "x")) or os.getcwd()


def _artifact_location(path: str, source_root: str) -> dict[str, Any]:
    """A URI relative to the repository root (what code scanning resolves against the checkout,
    whatever folder the run started in); a file outside it keeps an absolute ``file:`` URI."""
    absolute = os.path.abspath(path)
    if absolute.startswith(source_root.rstrip(os.sep) + os.sep):
        relative = Path(os.path.relpath(absolute, source_root)).as_posix()
        # The file system's bytes, percent-encoded: a name that is not valid UTF-8 stays that name.
        return {"uri": quote(os.fsencode(relative)), "uriBaseId": SOURCE_ROOT}
    return {"uri": Path(absolute).as_uri()}


def _sarif_region(report: Report, diagnostic: Diagnostic, show_source: bool) -> dict[str, Any]:
    span = diagnostic.span
    line = max(span.line, 1)
    end_line = max(span.end_line, line)
    end_col = span.end_col if end_line > line or span.end_col >= span.col else span.col
    region: dict[str, Any] = {
        "startLine": line,
        "startColumn": span.col + 1,
        "endLine": end_line,
        "endColumn": end_col + 1,
    }
    if show_source:
        excerpt = source_excerpt(report, diagnostic)
        if excerpt:
            region["snippet"] = {"text": excerpt[0].split(" | ", 1)[1]}
    return region


def _sarif_fix(diagnostic: Diagnostic, location: dict[str, Any]) -> list[dict[str, Any]] | None:
    if diagnostic.fix is None:
        return None
    # Offsets are code points into the decoded text, which is what charOffset counts under
    # columnKind "unicodeCodePoints".
    replacements = [
        {
            "deletedRegion": {"charOffset": edit.start, "charLength": edit.end - edit.start},
            "insertedContent": {"text": edit.content},
        }
        for edit in diagnostic.fix.edits
    ]
    return [
        {
            "description": {"text": f"{diagnostic.fix.message} ({diagnostic.fix.applicability})"},
            "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
        }
    ]


def sarif(report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    rules = _reported_rules(report)
    index = {rule.code: position for position, rule in enumerate(rules)}
    results = []
    source_root = _source_root(report)
    for diagnostic, fingerprint in zip(report.diagnostics, fingerprints(report)):
        location = _artifact_location(diagnostic.path, source_root)
        result = {
            "ruleId": diagnostic.code,
            "ruleIndex": index[diagnostic.code],
            "level": diagnostic.severity,
            "message": {"text": diagnostic.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": location,
                        "region": _sarif_region(report, diagnostic, show_source),
                    }
                }
            ],
            "partialFingerprints": {FINGERPRINT: fingerprint},
        }
        fixes = _sarif_fix(diagnostic, location)
        if fixes:
            result["fixes"] = fixes
        results.append(result)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "fusion-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_sarif_rule(r) for r in rules],
            }
        },
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path(source_root).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": True}],
        "results": results,
    }
    if statistics:
        counts: dict[str, int] = {}
        for diagnostic in report.diagnostics:
            counts[diagnostic.code] = counts.get(diagnostic.code, 0) + 1
        run["properties"] = {
            "filesChecked": report.files_checked,
            "definitionsChecked": dict(sorted(report.definitions.items())),
            "resultCountsByRule": dict(sorted(counts.items())),
        }
    document = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    # Lone surrogates (a file or module name that is not UTF-8, in a message) cannot be written
    # as UTF-8: each becomes U+FFFD rather than the report failing.
    return _LONE_SURROGATE.sub("\ufffd", json.dumps(document, indent=2, ensure_ascii=False)) + "\n"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
