"""One run, as it goes (DESIGN §13.1): what kind of run it is and what it counted. The engine makes
one per run and hands it to the stages that count; the report carries its stats back, so nothing of
a run is left in a module for the next run (or another editor lint running meanwhile) to read."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from fusion_lint.base.stats import RunStats


class Mode(enum.Enum):
    """What the run reports on."""

    PROJECT = "project"  # the whole project: its root named, or a folder holding all of it
    PART = "part"  # some of the project's files or folders (pre-commit names the staged files)
    BUFFER = "buffer"  # one buffer not read from disk (``--stdin-filename``, the editor)


@dataclass
class Session:
    mode: Mode = Mode.PROJECT  # decided by discovery (``engine.analyse``), once the root is known
    stats: RunStats = field(default_factory=RunStats)
