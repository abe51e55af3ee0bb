"""CI reporters (DESIGN §7): SARIF for code scanning, GitHub workflow annotations, JUnit XML.

Each is a function ``(report, *, show_source, quiet, statistics) -> str`` like the reporters in
``output.py``; the CLI looks a format up here when ``output.py`` does not have it. The flags apply
where the format can carry them without breaking its consumers: a SARIF or JUnit document stays a
single well-formed document (statistics go into its own counting fields, never as stray text), and
the GitHub runner turns only ``::`` lines into annotations, so plain summary lines are safe there.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import quote
from xml.etree import ElementTree

from . import __version__
from .diagnostics import Diagnostic
from .engine import Report
from .output import display_path, source_excerpt, statistics_lines, summary_lines
from .rules import Rule, rule_by_code_or_name

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/fusion-lint/fusion-lint"
SOURCE_ROOT = "%SRCROOT%"


# ----- SARIF 2.1.0 -----------------------------------------------------------------------------


def _reported_rules(report: Report) -> list[type[Rule]]:
    """The rules that ran, plus any that reported anyway (FL999 always can), in code order."""
    codes = set(report.enabled) | {d.code for d in report.diagnostics}
    by_code = {rule.code: rule for rule in report.rules}
    for code in codes - by_code.keys():  # a rule the report's list does not name: look it up
        found = rule_by_code_or_name(code)
        if found is not None:
            by_code[code] = found
    return [by_code[code] for code in sorted(codes) if code in by_code]


def _sarif_rule(rule: type[Rule]) -> dict:
    described = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "helpUri": rule.url(),
        "help": {"text": f"{rule.summary}\n\nWhy: {rule.why}" + (f"\n\nFix: {rule.fix}" if rule.fix else "")},
        "defaultConfiguration": {"level": rule.severity, "enabled": rule.default_enabled},
    }
    return described


def _artifact_location(path: str) -> dict:
    """A URI relative to the working directory (the checkout root in CI), as code scanning expects;
    a file outside it keeps an absolute ``file:`` URI."""
    relative = display_path(path)
    if os.path.isabs(relative):
        return {"uri": Path(relative).as_uri()}
    # The file system's bytes, percent-encoded: a name that is not valid UTF-8 stays that name.
    return {"uri": quote(os.fsencode(Path(relative).as_posix())), "uriBaseId": SOURCE_ROOT}


def _sarif_region(report: Report, diagnostic: Diagnostic, show_source: bool) -> dict:
    span = diagnostic.span
    line = max(span.line, 1)
    end_line = max(span.end_line, line)
    end_col = span.end_col if end_line > line or span.end_col >= span.col else span.col
    region = {"startLine": line, "startColumn": span.col + 1, "endLine": end_line, "endColumn": end_col + 1}
    if show_source:
        excerpt = source_excerpt(report, diagnostic)
        if excerpt:
            region["snippet"] = {"text": excerpt[0].split(" | ", 1)[1]}
    return region


def _sarif_fix(diagnostic: Diagnostic, location: dict) -> Optional[list[dict]]:
    if diagnostic.fix is None:
        return None
    # Offsets are code points into the decoded text, which is what charOffset counts under
    # columnKind "unicodeCodePoints".
    replacements = [
        {"deletedRegion": {"charOffset": edit.start, "charLength": edit.end - edit.start},
         "insertedContent": {"text": edit.content}}
        for edit in diagnostic.fix.edits
    ]  # fmt: skip
    return [{
        "description": {"text": f"{diagnostic.fix.message} ({diagnostic.fix.applicability})"},
        "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
    }]  # fmt: skip


def sarif(report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    rules = _reported_rules(report)
    index = {rule.code: position for position, rule in enumerate(rules)}
    results = []
    for diagnostic in report.diagnostics:
        location = _artifact_location(diagnostic.path)
        result = {
            "ruleId": diagnostic.code,
            "ruleIndex": index[diagnostic.code],
            "level": diagnostic.severity,
            "message": {"text": diagnostic.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": location,
                "region": _sarif_region(report, diagnostic, show_source),
            }}],
        }  # fmt: skip
        fixes = _sarif_fix(diagnostic, location)
        if fixes:
            result["fixes"] = fixes
        results.append(result)
    run: dict = {
        "tool": {"driver": {"name": "fusion-lint", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI, "rules": [_sarif_rule(r) for r in rules]}},
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path(os.getcwd()).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": True}],
        "results": results,
    }  # fmt: skip
    if statistics:
        counts: dict[str, int] = {}
        for diagnostic in report.diagnostics:
            counts[diagnostic.code] = counts.get(diagnostic.code, 0) + 1
        run["properties"] = {"filesChecked": report.files_checked, "resultCountsByRule": dict(sorted(counts.items()))}
    document = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    # Lone surrogates (a file or module name that is not UTF-8, in a message) cannot be written
    # as UTF-8: each becomes U+FFFD rather than the report failing.
    return _LONE_SURROGATE.sub("\ufffd", json.dumps(document, indent=2, ensure_ascii=False)) + "\n"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# ----- GitHub workflow commands ------------------------------------------------------------------


def escape_data(value: str) -> str:
    """The message part of a workflow command: ``%``, CR and LF are the command's own syntax."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A property value: also ``:`` (ends the properties) and ``,`` (separates them)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github_annotation(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    command = "error" if diagnostic.severity == "error" else "warning"
    properties = {
        "file": Path(display_path(diagnostic.path)).as_posix(),
        "line": str(span.line),
        "col": str(span.col + 1),
        "endLine": str(max(span.end_line, span.line)),
        "endColumn": str(span.end_col + 1),
        "title": f"{diagnostic.code} {diagnostic.name}",
    }
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{command} {rendered}::{escape_data(diagnostic.message)}"


def github(report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    # --show-source has no place here: the annotation is drawn on the line itself in the diff view.
    out = [github_annotation(diagnostic) for diagnostic in report.diagnostics]
    if statistics:
        out.extend(statistics_lines(report))
    if not quiet:
        out.extend(summary_lines(report))
    return "\n".join(out) + ("\n" if out else "")


# ----- JUnit XML -----------------------------------------------------------------------------------

#: Characters XML 1.0 cannot hold even escaped (a NUL in a linted line must not break the report).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: str) -> str:
    return _XML_ILLEGAL.sub("\ufffd", value)


def _checked_files(report: Report) -> list[str]:
    return sorted(set(report.checked) | {d.path for d in report.diagnostics})


def junit(report: Report, *, show_source: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    """One testcase per checked file; a file with findings fails, its failure listing each one."""
    by_path: dict[str, list[Diagnostic]] = {}
    for diagnostic in report.diagnostics:
        by_path.setdefault(diagnostic.path, []).append(diagnostic)
    files = _checked_files(report)
    failed = sum(1 for path in files if path in by_path)
    suites = ElementTree.Element("testsuites", name="fusion-lint", tests=str(len(files)), failures=str(failed),
                                 errors="0")  # fmt: skip
    suite = ElementTree.SubElement(suites, "testsuite", name="fusion-lint", tests=str(len(files)),
                                   failures=str(failed), errors="0", skipped="0")  # fmt: skip
    if statistics:
        properties = ElementTree.SubElement(suite, "properties")
        for line in statistics_lines(report):
            count, code, name = line.split()
            ElementTree.SubElement(properties, "property", name=f"{code} {name}", value=count)
    for path in files:
        shown = Path(display_path(path)).as_posix()
        classname = shown[:-3].replace("/", ".") if shown.endswith(".py") else shown
        case = ElementTree.SubElement(suite, "testcase", name=shown, classname=_xml_text(classname), file=shown)
        found = by_path.get(path)
        if not found:
            continue
        errors = sum(1 for d in found if d.severity == "error")
        summary = f"{len(found)} finding{'s' if len(found) != 1 else ''} ({errors} error{'s' if errors != 1 else ''})"
        body: list[str] = []
        for diagnostic in found:
            span = diagnostic.span
            body.append(f"{shown}:{span.line}:{span.col + 1}: {diagnostic.code} [{diagnostic.name}] {diagnostic.message}")
            if show_source:
                body.extend(source_excerpt(report, diagnostic))
        failure = ElementTree.SubElement(case, "failure", message=_xml_text(summary), type="fusion-lint")
        failure.text = _xml_text("\n".join(body))
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


FORMATTERS: dict[str, Callable[..., str]] = {"sarif": sarif, "github": github, "junit": junit}
