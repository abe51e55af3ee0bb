"""What reached the failure boundary during a test session: one observation per declared outcome.

Contract coverage (issue 22) listens at the one place every failure passes: the boundary's
``failure_observers`` (:mod:`mcp_fusion.boundary`). Whatever drove the call — ``run_tool_contract``,
an in-memory client, a stdio or HTTP server running in the test's own process, any framework under
``@contract`` — the observation is the same: which definition, which reason, the code the model
read, and whether the recovery reached the wire.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .. import boundary
from ..envelope import ToolErrorEnvelope
from ..errors import UndeclaredReasonError, code_name


@dataclass(frozen=True)
class Observation:
    """One declared outcome (a failure or a warning) as the boundary built it for the model."""

    kind: str  # "tool" or "resource"
    name: str  # the tool's name, or the resource's URI template
    reason: str  # the reason the model read, or the undeclared one a ``fail()`` named
    code: str  # the code name the model read
    recovery_on_wire: bool
    #: The code the running contract declares for ``reason`` (``None``: the contract does not declare it).
    declared_code: str | None
    #: ``fail(reason)`` named a reason the contract does not declare: the model read a masked failure.
    undeclared_fail: bool = False
    is_error: bool = True


class CoverageRecorder:
    """Counts every declared outcome that reaches the boundary while installed (thread-safe)."""

    def __init__(self) -> None:
        self.observations: Counter[Observation] = Counter()
        #: ``(kind, name) -> {reason: code}``: the contract each observed definition runs with.
        self.running_contracts: dict[tuple[str, str], dict[str, str | None]] = {}
        self._lock = threading.Lock()

    def install(self) -> CoverageRecorder:
        if self._observe not in boundary.failure_observers:
            boundary.failure_observers.append(self._observe)
        return self

    def uninstall(self) -> None:
        while self._observe in boundary.failure_observers:
            boundary.failure_observers.remove(self._observe)

    def __enter__(self) -> CoverageRecorder:
        return self.install()

    def __exit__(self, *exc_info: Any) -> None:
        self.uninstall()

    def _observe(self, target: Any, envelope: ToolErrorEnvelope, raised: BaseException | None) -> None:
        observation = observation_of(target, envelope, raised)
        if observation is not None:
            with self._lock:
                self.observations[observation] += 1
                key = (observation.kind, observation.name)
                if key not in self.running_contracts:
                    self.running_contracts[key] = running_contract(target)


def observation_of(target: Any, envelope: ToolErrorEnvelope, raised: BaseException | None) -> Observation | None:
    """What one boundary outcome says about the target's contract; ``None`` when it names no reason."""
    kind, name = getattr(target, "kind", None), getattr(target, "name", None)
    if kind not in ("tool", "resource") or not isinstance(name, str):
        return None
    if isinstance(raised, UndeclaredReasonError):
        return Observation(
            kind,
            name,
            raised.undeclared_reason,
            envelope.code_name,
            bool(envelope.recovery),
            declared_code=None,
            undeclared_fail=True,
        )
    reason = envelope.reason
    if reason is None:
        return None
    entry = _declared_entry(target, reason)
    recovery_on_wire = bool(envelope.recovery) and not (kind == "resource" and _resource_data_dropped(target))
    return Observation(
        kind,
        name,
        reason,
        envelope.code_name,
        recovery_on_wire,
        declared_code=code_name(entry.code) if entry is not None else None,
        is_error=envelope.is_error,
    )


def running_contract(target: Any) -> dict[str, str | None]:
    """``{reason: code name}`` of the contract a boundary target runs with (first declaration wins)."""
    declared: dict[str, str | None] = {}
    for entry in getattr(target, "errors", ()) or ():
        declared.setdefault(entry.reason, code_name(entry.code))
    return declared


def _declared_entry(target: Any, reason: str) -> Any:
    entry = getattr(target, "entry", None)
    return entry(reason) if callable(entry) else None


def _resource_data_dropped(target: Any) -> bool:
    """mcp 1.x ``FastMCP`` and fastmcp 2.x keep only a resource failure's message: no recovery on the wire."""
    if not hasattr(target, "views"):  # a FusionServer resource: the envelope travels in the error's data
        return False
    from ..frameworks import current_framework, sdk_major

    key = current_framework().key
    if key == "mcp1":
        return True
    if key == "fastmcp" and sdk_major() == 1:
        from importlib.metadata import version

        return version("fastmcp").split(".")[0] == "2"
    return False
