"""What every reporter shares: paths as the user sees them, the summary lines, source excerpts."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from fusion_lint.base.diagnostics import Diagnostic, display_path
from fusion_lint.base.lines import split_lines
from fusion_lint.check.report import Report
from fusion_lint.check.snapshot import UNRESOLVED

__all__ = [
    "display_path",
    "fingerprints",
    "plural",
    "repository_path",
    "repository_root",
    "source_excerpt",
    "statistics",
    "statistics_lines",
    "summary",
    "summary_lines",
]


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


#: Where fusion-lint is described (SARIF's ``informationUri``, rdjson's ``source.url``).
INFORMATION_URI = "https://github.com/fusion-lint/fusion-lint"

#: What the linter recognises, named when it finds none of it.
RECOGNISED = "mcp_fusion, mcp 1.x FastMCP, mcp 2.x MCPServer, fastmcp 2-4 and the low-level server"
KIND_WORDS = (("tool", "tool"), ("resource", "resource"), ("prompt", "prompt"), ("dispatcher", "low-level dispatcher"))


def checked_phrase(report: Report, unresolved: bool = True) -> str:
    """``12 tools, 2 resources; 40 files checked``: what the reported files define, and how many;
    ``12 tools; 2 registrations not resolved: see FL190; ...`` when some handlers could not be
    checked (``unresolved``: say so)."""
    files = f"{plural(report.files_checked, 'file')} checked"
    found = [plural(report.definitions[kind], word) for kind, word in KIND_WORDS if report.definitions.get(kind)]
    count = report.definitions.get(UNRESOLVED, 0)
    if found and count and unresolved:
        found[-1] += f"; {plural(count, 'registration')} not resolved: see FL190"
    return f"{', '.join(found)}; {files}" if found else files


def summary(report: Report) -> str:
    files = len({d.path for d in report.diagnostics})
    nothing = not any(report.definitions.values())
    if not report.diagnostics:
        if report.files_checked == 0:
            return "No files checked (0 files checked): every path given is excluded or not Python."
        if nothing:
            return (
                f"No MCP tools, resources or prompts found in {plural(report.files_checked, 'file')}: nothing was "
                f"checked (fusion-lint recognises {RECOGNISED})."
            )
        unresolved = report.definitions.get(UNRESOLVED, 0)
        if unresolved:  # never "All checks passed" over a handler nothing checked (DESIGN §13.3)
            return (
                f"No findings ({checked_phrase(report, unresolved=False)}), but {plural(unresolved, 'registration')} "
                "could not be resolved to a handler and went unchecked: see FL190."
            )
        return f"All checks passed ({checked_phrase(report)})."
    where = (
        f"no MCP tools, resources or prompts found; {plural(report.files_checked, 'file')} checked"
        if nothing
        else checked_phrase(report)
    )
    return f"Found {plural(report.errors, 'error')}, {plural(report.warnings, 'warning')} in {plural(files, 'file')} ({where})."


def source_excerpt(report: Report, diagnostic: Diagnostic) -> list[str]:
    text = report.texts.get(diagnostic.path)
    if text is None:
        try:
            with open(diagnostic.path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return []
    lines = split_lines(text)
    if not 1 <= diagnostic.span.line <= len(lines):
        return []
    line = lines[diagnostic.span.line - 1]
    number = str(diagnostic.span.line)
    end = diagnostic.span.end_col if diagnostic.span.end_line == diagnostic.span.line else len(line)
    width = max(1, end - diagnostic.span.col)
    return [
        f"  {number} | {line}",
        f"  {' ' * len(number)} | {' ' * diagnostic.span.col}{'^' * width}",
    ]


def summary_lines(report: Report) -> list[str]:
    """The closing lines: the counts, then how many findings ``--fix`` can fix."""
    lines = [summary(report)]
    fixable = sum(1 for d in report.diagnostics if d.fix is not None and d.fix.applicability == "safe")
    unsafe = sum(1 for d in report.diagnostics if d.fix is not None and d.fix.applicability == "unsafe")
    if fixable:
        extra = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
        lines.append(f"{fixable} fixable with --fix{extra}.")
    elif unsafe:
        lines.append(f"{unsafe} fixable with --fix --unsafe-fixes.")
    return lines


def statistics(report: Report) -> list[tuple[int, str, str, bool]]:
    """(count, code, name, fixable) per rule, most frequent first; fixable: ``--fix`` can fix some."""
    counts: dict[tuple[str, str], list[int]] = {}
    for diagnostic in report.diagnostics:
        entry = counts.setdefault((diagnostic.code, diagnostic.name), [0, 0])
        entry[0] += 1
        entry[1] |= diagnostic.fix is not None and diagnostic.fix.applicability == "safe"
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return [(count, code, name, bool(fixable)) for (code, name), (count, fixable) in ordered]


def statistics_lines(report: Report) -> list[str]:
    """``count  code  [*] name``, ruff's marks: ``[*]`` where ``--fix`` can fix some (the column
    only when some can)."""
    counted = statistics(report)
    marks = any(fixable for *_, fixable in counted)
    return [
        f"{count:>5}  {code}  {('[*] ' if fixable else '[ ] ') if marks else ''}{name}"
        for count, code, name, fixable in counted
    ]


@lru_cache(maxsize=1024)
def _repository_of(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding ``.git`` (a folder, or the file of a
    worktree or submodule); None outside any repository."""
    current = folder
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def repository_root(path: str) -> str | None:
    """The repository root of a file: the folder holding ``.git`` nearest above it."""
    return _repository_of(os.path.dirname(os.path.abspath(path)))


def repository_path(path: str) -> tuple[str, bool]:
    """``(path, in_repository)``: the file relative to its repository root with ``/`` separators
    (what GitHub code scanning and GitLab resolve against the checkout, whatever folder the run
    started in); outside a repository, the path as the user sees it."""
    absolute = os.path.abspath(path)
    root = repository_root(absolute)
    if root is not None:
        return Path(os.path.relpath(absolute, root)).as_posix(), True
    return Path(display_path(path)).as_posix(), False


def file_lines(report: Report, path: str, cache: dict[str, list[str]]) -> list[str]:
    """The lines of a reported file as the run saw it (its text in the report, else the file)."""
    if path not in cache:
        text = report.texts.get(path)
        if text is None:
            try:
                with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                    text = handle.read()
            except OSError:
                text = ""
        cache[path] = split_lines(text)
    return cache[path]


def fingerprints(report: Report) -> list[str]:
    """One per diagnostic, stable across unrelated edits and across working directories: a digest of
    the rule, the file (relative to its repository root) and the text of the finding's line without
    its indentation, with the finding's rank among those that share all three — never its line
    number, so adding a line above keeps it (SARIF's ``partialFingerprints``, GitLab's
    ``fingerprint``)."""
    lines_of: dict[str, list[str]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    prints = []
    for diagnostic in report.diagnostics:
        lines = file_lines(report, diagnostic.path, lines_of)
        line = lines[diagnostic.span.line - 1].strip() if 1 <= diagnostic.span.line <= len(lines) else ""
        key = (diagnostic.code, repository_path(diagnostic.path)[0], line)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        digest = hashlib.sha256("\0".join([*key, str(rank)]).encode("utf-8", "surrogateescape"))
        prints.append(digest.hexdigest()[:32])
    return prints
