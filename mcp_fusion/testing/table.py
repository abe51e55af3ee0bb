"""The contract coverage report as the terminal shows it: one row per definition, then what was not counted."""

from __future__ import annotations

from .report import FLAGGED, MISSING, CoverageReport, DefinitionCoverage

_HEADER = ("Name", "Reasons", "Exercised", "Cover", "Missing")


def render_table(report: CoverageReport) -> list[str]:
    """The report's lines (no trailing newlines)."""
    lines = [describe_universe(report)]
    lines += [f"  {problem}" for problem in report.problems]
    rows = [_row(definition) for definition in report.definitions if definition.reasons]
    total = (
        "TOTAL",
        str(report.declared),
        str(report.exercised),
        display_percent(report.percent, report.exercised, report.declared),
        "",
    )
    if not rows:
        lines.append("No declared reasons: nothing to measure.")
    else:
        widths = [max(len(row[i]) for row in [_HEADER, *rows, total]) for i in range(4)]
        lines.append("")
        lines.append(_line(_HEADER, widths))
        lines += [_line(row, widths) for row in rows]
        lines.append("-" * len(_line(_HEADER, widths)))
        lines.append(_line(total, widths))
    uncontracted = [definition.label for definition in report.definitions if not definition.reasons]
    if uncontracted:
        lines.append(f"No contract (not counted): {', '.join(uncontracted)}")
    undeclared = [
        (definition, item, count)
        for definition in [*report.definitions, *report.outside]
        for item, count in sorted(definition.undeclared.items())
    ]
    if undeclared:
        lines.append("Raised without being declared (not counted):")
        for definition, (reason, code, masked), count in undeclared:
            what = (
                f"fail({reason!r}): the contract does not declare it, the model read a masked {code}"
                if masked
                else f"{reason} as {code}"
            )
            lines.append(f"  {definition.label}: {what} ({count}x)")
    if report.outside:
        lines.append("Reached the boundary, not in the contracts above (not counted):")
        for definition in report.outside:
            lines.append(f"  {definition.label}: {_summary(definition)}")
    return lines


def describe_universe(report: CoverageReport) -> str:
    universe = report.universe
    tools = sum(1 for d in report.definitions if d.kind == "tool")
    resources = sum(1 for d in report.definitions if d.kind == "resource")
    counted = (
        f"{_plural(tools, 'tool')}, {_plural(resources, 'resource')}, {_plural(report.declared, 'declared reason')}"
    )
    if universe.get("source") == "lockfile":
        where = f"from the lockfile {universe.get('lockfile')}"
    else:
        where = f"read by fusion-lint from {', '.join(universe.get('paths', [])) or '.'}"
    lines = f"Contracts {where}: {counted}"
    if report.problems:
        lines += f"; {_plural(len(report.problems), 'place')} could not be read statically (left out):"
    return lines


def display_percent(percent: float, exercised: int, declared: int) -> str:
    """Rounded, but never to 100% while a reason is not covered, nor to 0% once one is."""
    shown = round(percent)
    if shown == 100 and exercised < declared:
        shown = 99
    elif shown == 0 and exercised > 0:
        shown = 1
    return f"{shown}%"


def _row(definition: DefinitionCoverage) -> tuple[str, str, str, str, str]:
    return (
        definition.label,
        str(len(definition.reasons)),
        str(definition.exercised),
        display_percent(definition.percent, definition.exercised, len(definition.reasons)),
        _missing(definition),
    )


def _missing(definition: DefinitionCoverage) -> str:
    parts = []
    for reason in definition.reasons:
        if reason.status == MISSING:
            parts.append(reason.reason)
        elif reason.status == FLAGGED:
            parts.append(f"{reason.reason} FLAGGED ({reason.why})")
    return ", ".join(parts)


def _summary(definition: DefinitionCoverage) -> str:
    declared = len(definition.reasons)
    if not declared:
        return "no contract"
    text = f"{definition.exercised} of {_plural(declared, 'reason')} exercised"
    missing = _missing(definition)
    return f"{text}; not covered: {missing}" if missing else text


def _line(row: tuple[str, ...], widths: list[int]) -> str:
    name, reasons, exercised, cover, missing = row
    text = f"{name:<{widths[0]}}  {reasons:>{widths[1]}}  {exercised:>{widths[2]}}  {cover:>{max(widths[3], 5)}}"
    return f"{text}  {missing}".rstrip()


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


__all__ = ["describe_universe", "display_percent", "render_table"]
