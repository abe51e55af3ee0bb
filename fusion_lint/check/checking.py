"""The rule phase (DESIGN §2.1): the rules, pure functions of the resolved project, run over what
can report into the reported files; identical findings merged into one diagnostic naming every
definition they concern; a rule that raises reported as FL999. With the rules' cache
(``rule_cache``), an item whose inputs did not change replays its findings instead of running.
"""

from __future__ import annotations

import itertools
import os
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from fusion_lint.base.diagnostics import Diagnostic, Span
from fusion_lint.base.stats import CheckCounts
from fusion_lint.check.reads import SHARED_SCOPES, Item, Reads, neighbour_files
from fusion_lint.check.rule_cache import RuleMemo
from fusion_lint.check.suppression import Reported
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Finding, Rule, all_rules


def _touches(definition: ResolvedDefinition, report_set: set[str]) -> bool:
    """Whether a definition's diagnostics could land in a reported file: its own file, a file its
    contract was written in, or a file its handler reaches."""
    if definition.path in report_set:
        return True
    return not definition.contract.files.isdisjoint(report_set) or any(r.path in report_set for r in definition.reach)


#: Sees each checked item's findings, by rule (ran or replayed): (code, scope, item, findings).
Observer = Callable[[str, str, object, list[Finding]], None]


def check(
    project: ProjectView,
    rules: Sequence[type[Rule]],
    report_set: set[str],
    views: Callable[[str], ProjectView] | None = None,
    memo: RuleMemo | None = None,
    observe: Observer | None = None,
    reads: Reads | None = None,
    counts: CheckCounts | None = None,
) -> list[Reported]:
    """Run ``rules`` over the resolved project: definition rules once per definition, entry rules
    once per contract entry, function rules once per function. Only what can report into a
    reported file is checked (pre-commit and the editor report one file of a large project). A
    finding made for several definitions (a shared entry, a shared handler) is one diagnostic
    naming every one of them. A rule that raises is FL999 for what it was checking. ``views``: the
    project as the rule sees it from the file of what it checks (that file's settings). ``memo``:
    the findings of earlier runs for items whose inputs did not change, replayed in place of
    running the rule (``rule_cache``), in the same order. ``observe``: sees every item's findings
    (the run's snapshot records them, ``snapshot``). ``reads``: records what the rules of each
    shared item read (``reads``); those items run, never replayed, so that every one is recorded.
    ``counts``: the run's counters (``Session.stats.check``), set to what this check did."""
    view = views or (lambda path: project)
    order = dict(zip(map(id, project.definitions), itertools.count()))
    candidates = project.definitions if project.touch_candidates is None else project.touch_candidates
    touching = [d for d in candidates if _touches(d, report_set)]
    if project.touch_candidates is None:
        entries = [e for e in project.entries if e.path in report_set]
    else:  # (every holder of an entry written in a reported file is a candidate: their first use is among them)
        entries = list({id(e): e for d in candidates for e in d.contract.entries if e.path in report_set}.values())
    functions = [f for f in project.functions if f.path in report_set]
    found: list[tuple[type[Rule], Finding, Sequence[ResolvedDefinition]]] = []
    internal: list[Reported] = []
    counts = counts if counts is not None else CheckCounts()
    counts.ran = counts.replayed = 0  # (the last check counts: a snapshot that fell back checked before)
    counts.paths.clear()
    items: dict[str, list[tuple[object, list[ResolvedDefinition], Span, str, ProjectView]]] = {
        "definition": [(d, [d], d.definition.span, d.path, view(d.path)) for d in touching],
        "entry": [(e, e.holders, e.entry.span, e.path, view(e.path)) for e in entries],
        "function": [(f, f.handler_of, f.function.span, f.path, view(f.path)) for f in functions],
    }
    shared: dict[str, set[int]] = {scope: set() for scope in items}
    if reads is not None:
        for scope in SHARED_SCOPES:
            shared[scope] = {
                index for index, scoped in enumerate(items[scope]) if neighbour_files(cast(Item, scoped[0]))
            }
    for rule_class in rules:
        rule, code = rule_class(), rule_class.code
        for scope in rule_class.checks():
            check_one, scoped, recorded = getattr(rule, f"check_{scope}"), items[scope], shared[scope]
            plan = memo.plan(rule_class, scope, scoped) if memo is not None else None
            visit: Sequence[int] = range(len(scoped)) if plan is None else plan.visit(code)
            ran = len(scoped)
            if plan is not None:
                ran = len(plan.misses) + len(recorded.difference(plan.misses))
                visit = sorted(set(visit) | recorded) if recorded else visit
            counts.replayed += len(scoped) - ran
            for index in visit:
                item, subjects, span, path, item_view = scoped[index]
                record = plan.found[index] if plan is not None and index not in recorded else None
                findings: list[Finding] | None = None
                if record is not None:
                    findings = record.get(code, [])
                else:
                    counts.ran += 1
                    counts.paths.add(path)
                    try:
                        if index in recorded:
                            with reads.recording(scope, cast(Item, item), item_view):  # type: ignore[union-attr]  # (``recorded`` is empty without ``reads``)
                                findings = list(check_one(item, item_view))
                        else:
                            findings = list(check_one(item, item_view))
                    except Exception as exc:  # a bug in a rule must not hide the others (FL999)
                        internal.append(Reported(_internal_error(rule_class, _labels(subjects), exc, path, span)))
                    if plan is not None:
                        memo.record(plan.tokens[index], code, findings)  # type: ignore[union-attr]  # memo is not None: plan came from it
                    if findings is None:
                        continue
                if observe is not None:
                    observe(code, scope, item, findings)
                found.extend((rule_class, finding, subjects) for finding in findings)
    return merged(found, lambda s: order.get(id(s), len(order))) + internal


def merged(found: Iterable[tuple[type[Rule], Finding, Sequence[Any]]], order: Callable[[Any], Any]) -> list[Reported]:
    """Identical findings (a shared entry, a shared handler) as one diagnostic naming every
    definition they concern, once each, in the project's order (``order``: a subject's place).
    ``found``: (rule, finding, the item's default subjects), in the order the rules ran."""
    grouped: dict[tuple[Any, ...], tuple[type[Rule], Finding, list[Any]]] = {}
    for rule_class, finding, subjects in found:
        concerned = finding.subjects if finding.subjects is not None else subjects
        if not concerned:
            continue
        s = finding.span
        same = (rule_class.code, finding.path, s.line, s.col, s.end_line, s.end_col, finding.message)
        if same in grouped:
            grouped[same][2].extend(concerned)
        else:
            grouped[same] = (rule_class, finding, list(concerned))
    # One diagnostic per location and code: findings there whose messages differ (what a raise
    # becomes for the tools and for the resources reaching it) are one, each message after its labels.
    located: dict[tuple[Any, ...], list[tuple[type[Rule], Finding, list[Any]]]] = {}
    for rule_class, finding, subjects in grouped.values():
        at = finding.span
        located.setdefault((rule_class.code, finding.path, at.line, at.col, at.end_line, at.end_col), []).append(
            (rule_class, finding, sorted({id(s): s for s in subjects}.values(), key=order))
        )
    reported = []
    for parts in located.values():
        parts.sort(key=lambda part: order(part[2][0]))
        rule_class, finding, _ = parts[0]
        message = "; and for ".join(f"{_labels(subjects)}: {found.message}" for _, found, subjects in parts)
        diagnostic = Diagnostic(
            rule_class.code, rule_class.name, rule_class.severity, message, finding.path, finding.span
        )
        fix = next((found.fix for _, found, _ in parts if found.fix is not None), None)
        reported.append(Reported(diagnostic, fix))
    return reported


#: A finding shared by more definitions than this names the first ones and counts the rest.
MAX_LABELS = 10


def _labels(subjects: Sequence[Any]) -> str:
    """``tool 'a'``, ``tool 'a', tool 'b'``, ... ``and 12 more`` (each definition once, in order)."""
    labels = list(dict.fromkeys(subject.label for subject in subjects))
    if len(labels) > MAX_LABELS:
        return ", ".join(labels[:MAX_LABELS]) + f" and {len(labels) - MAX_LABELS} more"
    return ", ".join(labels)


def _internal_error(rule: type[Rule], label: str, exc: Exception, path: str, span: Span) -> Diagnostic:
    # Where it failed, without reading the source lines (nothing is read while rules run).
    where = traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__), lookup_lines=False)[-1]
    internal = all_rules_by_code()["FL999"]
    message = (
        f"rule {rule.code} ({rule.name}) failed on {label}: {type(exc).__name__}: {exc} "
        f"[{os.path.basename(where.filename)}:{where.lineno}]"
    )
    return Diagnostic(internal.code, internal.name, internal.severity, message, path, span)


def all_rules_by_code() -> dict[str, type[Rule]]:
    return {rule.code: rule for rule in all_rules()}
