"""``junit``: one testcase per checked file; a file with findings fails, listing each one."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.report import Report
from fusion_lint.output.common import display_path, source_excerpt
from fusion_lint.output.common import statistics as rule_statistics

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
    suites = ElementTree.Element(
        "testsuites", name="fusion-lint", tests=str(len(files)), failures=str(failed), errors="0"
    )
    suite = ElementTree.SubElement(
        suites, "testsuite", name="fusion-lint", tests=str(len(files)), failures=str(failed), errors="0", skipped="0"
    )
    if statistics:
        properties = ElementTree.SubElement(suite, "properties")
        for count, code, name, _ in rule_statistics(report):
            ElementTree.SubElement(properties, "property", name=f"{code} {name}", value=str(count))
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
            body.append(
                f"{shown}:{span.line}:{span.col + 1}: {diagnostic.code} [{diagnostic.name}] {diagnostic.message}"
            )
            if show_source:
                body.extend(source_excerpt(report, diagnostic))
        failure = ElementTree.SubElement(case, "failure", message=_xml_text(summary), type="fusion-lint")
        failure.text = _xml_text("\n".join(body))
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"
