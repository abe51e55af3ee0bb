"""The contract coverage report: the declared reasons (the universe) against what reached the boundary.

The universe is a lock document (``mcp_fusion.lockfile``'s shape): what ``fusion-lint`` reads
statically from the project, or a committed ``fusion-contracts.lock``. Each declared reason is

* **exercised** — it reached the boundary with the declared code, its recovery on the wire;
* **flagged** — it reached the boundary with another code (a service raising it as ``CONFLICT``
  when the contract says ``FORBIDDEN``), or never with its recovery on the wire: not covered;
* **missing** — no test made it happen.

What reached the boundary outside the universe is listed, never counted: a reason a tool raised
without declaring it, a ``fail()`` of an undeclared reason, a tool the universe does not know.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..definitions import _template_regex
from ..lockfile import SECTIONS
from .recording import Observation

REPORT_FORMAT = "fusion-contract-coverage"
REPORT_VERSION = 1
EXERCISED, FLAGGED, MISSING = "exercised", "flagged", "missing"


@dataclass
class ReasonCoverage:
    reason: str
    declared_code: str | None
    #: ``(code, recovery on the wire) -> count`` of every time it reached the boundary.
    seen: Counter[tuple[str, bool]] = field(default_factory=Counter)

    @property
    def status(self) -> str:
        if not self.seen:
            return MISSING
        if self.wrong_codes or not any(on_wire for (_, on_wire) in self.seen):
            return FLAGGED
        return EXERCISED

    @property
    def wrong_codes(self) -> list[str]:
        return sorted({code for code, _ in self.seen if code != self.declared_code})

    @property
    def why(self) -> str:
        """Why a flagged reason is not covered."""
        if self.wrong_codes:
            return f"raised as {', '.join(self.wrong_codes)}, declared {self.declared_code}"
        return "its recovery never reached the wire"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "reason": self.reason,
            "declared_code": self.declared_code,
            "status": self.status,
            "seen": [
                {"code": code, "recovery_on_wire": on_wire, "count": count}
                for (code, on_wire), count in sorted(self.seen.items())
            ],
        }
        if self.status == FLAGGED:
            data["why"] = self.why
        return data


@dataclass
class DefinitionCoverage:
    kind: str
    name: str
    reasons: list[ReasonCoverage]
    #: ``(reason, code, a fail() of an undeclared reason) -> count``: what it raised without declaring it.
    undeclared: Counter[tuple[str, str, bool]] = field(default_factory=Counter)

    @property
    def exercised(self) -> int:
        return sum(1 for reason in self.reasons if reason.status == EXERCISED)

    @property
    def percent(self) -> float:
        return 100.0 * self.exercised / len(self.reasons) if self.reasons else 100.0

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name}"

    def reason(self, name: str) -> ReasonCoverage | None:
        return next((reason for reason in self.reasons if reason.reason == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "declared": len(self.reasons),
            "exercised": self.exercised,
            "percent": round(self.percent, 2),
            "reasons": [reason.to_json() for reason in self.reasons],
            "undeclared": [
                {"reason": reason, "code": code, "undeclared_fail": masked, "count": count}
                for (reason, code, masked), count in sorted(self.undeclared.items())
            ],
        }


@dataclass
class CoverageReport:
    """Per definition of the universe, and what reached the boundary beyond it."""

    definitions: list[DefinitionCoverage]
    #: Definitions that reached the boundary but are not in the universe (with their running contract).
    outside: list[DefinitionCoverage]
    #: Where the universe came from, e.g. ``{"source": "linter", "paths": [...]}``.
    universe: dict[str, Any]
    #: Places of the project whose contracts could not be read statically (left out of the universe).
    problems: list[str] = field(default_factory=list)

    @property
    def declared(self) -> int:
        return sum(len(definition.reasons) for definition in self.definitions)

    @property
    def exercised(self) -> int:
        return sum(definition.exercised for definition in self.definitions)

    def count(self, status: str) -> int:
        return sum(1 for definition in self.definitions for reason in definition.reasons if reason.status == status)

    @property
    def percent(self) -> float:
        """Exercised reasons over declared ones; 0 when nothing is declared (there is nothing to prove)."""
        return 100.0 * self.exercised / self.declared if self.declared else 0.0

    def definition(self, kind: str, name: str) -> DefinitionCoverage | None:
        return next((d for d in [*self.definitions, *self.outside] if (d.kind, d.name) == (kind, name)), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "universe": {**self.universe, "problems": self.problems},
            "totals": {
                "declared": self.declared,
                "exercised": self.exercised,
                "flagged": self.count(FLAGGED),
                "missing": self.count(MISSING),
                "percent": round(self.percent, 2),
            },
            "definitions": [definition.to_json() for definition in self.definitions],
            "outside_universe": [definition.to_json() for definition in self.outside],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def build_report(
    universe: Mapping[str, Any],
    observations: Mapping[Observation, int],
    *,
    source: Mapping[str, Any],
    running_contracts: Mapping[tuple[str, str], Mapping[str, str | None]] = {},
    problems: Sequence[str] = (),
) -> CoverageReport:
    """The report of ``observations`` against ``universe`` (a lock document).

    ``running_contracts`` (``(kind, name) -> {reason: code}``, what the recorder saw the running
    definitions declare) fills in the contract of a definition that is not in the universe.
    """
    known: dict[tuple[str, str], DefinitionCoverage] = {}
    for kind, section in SECTIONS.items():
        for name, body in sorted(universe.get(section, {}).items()):
            reasons = [ReasonCoverage(reason, entry.get("code")) for reason, entry in body.get("errors", {}).items()]
            known[(kind, name)] = DefinitionCoverage(kind, name, reasons)
    templates = [(re.compile(_template_regex(name)), (kind, name)) for kind, name in known if kind == "resource"]
    outside: dict[tuple[str, str], DefinitionCoverage] = {}
    for observation, count in observations.items():
        key = (observation.kind, observation.name)
        if key not in known and observation.kind == "resource":
            # A framework may name a resource by the URI it read: it counts for the template it matches.
            key = next((template for pattern, template in templates if pattern.fullmatch(observation.name)), key)
        definition = known.get(key)
        if definition is None:
            definition = outside.get(key)
            if definition is None:
                declared = running_contracts.get(key, {})
                definition = outside[key] = DefinitionCoverage(
                    *key, [ReasonCoverage(r, c) for r, c in declared.items()]
                )
            if observation.declared_code is not None and definition.reason(observation.reason) is None:
                definition.reasons.append(ReasonCoverage(observation.reason, observation.declared_code))
        reason = definition.reason(observation.reason) if not observation.undeclared_fail else None
        if reason is None:
            definition.undeclared[(observation.reason, observation.code, observation.undeclared_fail)] += count
        else:
            reason.seen[(observation.code, observation.recovery_on_wire)] += count
    return CoverageReport(
        definitions=list(known.values()),
        outside=[outside[key] for key in sorted(outside)],
        universe=dict(source),
        problems=list(problems),
    )
