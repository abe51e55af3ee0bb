"""The shape of an error contract as plain tables (DESIGN §3.2), without pydantic.

The linter imports these (DESIGN §2.1: its tables come from the runtime) on every run, so they live
apart from ``ErrorContract``'s pydantic model; ``contract.py`` checks at import that the model's
fields are exactly these, so the two cannot drift.
"""

from __future__ import annotations

from typing import Literal, get_args

Severity = Literal["debug", "info", "notice", "warning"]
ThrownBy = Literal["service"]

#: Log levels a contract entry may lower its failure record to (default: error).
SEVERITIES: tuple[str, ...] = get_args(Severity)
#: Values of the lint-only ``thrown_by`` marker.
THROWN_BY_VALUES: tuple[str, ...] = get_args(ThrownBy)
#: Field names, in declaration order; the linter checks ``ErrorContract(...)``/dict keys against them.
CONTRACT_FIELDS: tuple[str, ...] = ("reason", "code", "when", "recovery", "retryable", "severity", "thrown_by")
#: Fields every entry must carry.
REQUIRED_FIELDS: tuple[str, ...] = ("reason", "code", "when", "recovery")
