"""One run, as it goes (DESIGN §13.1): what kind of run it is and what it counted. The engine makes
one per run and hands it to the stages that count; the report carries its stats back, so nothing of
a run is left in a module for the next run (or another editor lint running meanwhile) to read."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from fusion_lint.base.stats import RunStats
from fusion_lint.discovery.kept_walk import WalkLease
from fusion_lint.project.kept_resolution import KeptResolution
from fusion_lint.source.runner import FactsLease


class Mode(enum.Enum):
    """What the run reports on."""

    PROJECT = "project"  # the whole project: its root named, or a folder holding all of it
    PART = "part"  # some of the project's files or folders (pre-commit names the staged files)
    BUFFER = "buffer"  # one buffer not read from disk (``--stdin-filename``, the editor)


@dataclass
class Lent:
    """What the language server lends a run (the CLI lends nothing): handed down by the engine to
    the stage that uses each, never left where another run could find it."""

    facts: FactsLease | None = None  # files' facts kept between its lints (``runner.facts_kept_in``)
    walks: WalkLease | None = None  # folder listings kept between its lints (``kept_walk.walks_kept_in``)
    # The files resolved for vocabulary only at its last lint (``facts_partial``, ``kept_resolution``).
    resolution: KeptResolution | None = None
    # Every file parsed in a worker process, each within this many seconds: a buffer that hangs the
    # parser costs a worker and an FL000, never the server.
    deadline_s: float | None = None
    # Asked between the run's stages: True (the buffer changed again) and the run raises ``Superseded``.
    superseded: Callable[[], bool] | None = None
    # Where the run leaves its resolved project to be freed once the diagnostics are published
    # (``abandon.free``); None: freed as the run ends.
    freed: list[Any] | None = None

    def kept_nothing(self) -> Lent:
        """The same, without what was kept between lints: what a run computed afresh is lent."""
        return replace(self, facts=None, walks=None, resolution=None)


@dataclass
class Session:
    mode: Mode = Mode.PROJECT  # decided by discovery (``engine.analyse``), once the root is known
    stats: RunStats = field(default_factory=RunStats)
    lent: Lent = field(default_factory=Lent)  # ``Options.lent``
