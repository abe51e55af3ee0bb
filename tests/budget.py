"""The fixed budget of every property test: derandomized, no example database, no deadline, so a
run is the same run every time. ``FUSION_LINT_FUZZ_EXAMPLES=5000`` turns every one of them into a
longer, randomized search (see CONTRIBUTING.md)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ = int(os.environ.get("FUSION_LINT_FUZZ_EXAMPLES", "0"))


def budget(examples: int) -> settings:
    return settings(
        max_examples=FUZZ or examples,
        derandomize=not FUZZ,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
