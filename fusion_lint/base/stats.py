"""What one run did, counted as it runs (DESIGN §13.1): each stage adds to the counters of the run
it serves, handed to it by the run's ``Session``, and the report carries them back. The tests read
these, never a module's state; nothing here is timed.

Every stage may count here (this is ``base``): the counters are plain data, with no behaviour."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CheckCounts:
    """What the rules did."""

    ran: int = 0  # rule invocations: one rule's ``check_*`` on one item
    replayed: int = 0  # (rule, item) pairs answered from the rules' cache or the snapshot instead
    paths: set[str] = field(default_factory=set)  # the files of the items some rule ran on


@dataclass
class SnapshotCounts:
    """What the run took from the snapshot."""

    used: bool = False  # the run was answered from the snapshot
    reached: set[str] = field(default_factory=set)  # the analysed files it re-checked
    loaded: set[str] = field(default_factory=set)  # every file whose facts it loaded
    resolved: int = 0  # definitions it resolved
    why_not: str = "not asked"  # why it fell back to the ordinary path (empty: it did not)


@dataclass
class ResolveCounts:
    """What the resolution did (the last one, when a run resolves twice)."""

    full: int = 0  # definitions resolved in full (reach, wrappers)
    vocabulary_only: int = 0  # definitions given only their contract and handler's signature


@dataclass
class KeptCounts:
    """What a language server's lint did with the kept resolution (all zero elsewhere)."""

    replayed: int = 0  # files whose kept vocabulary-only resolution served
    resolved: int = 0  # files resolved for vocabulary (and kept)
    dropped: int = 0  # kept files dropped because a file they reach changed
    cleared: bool = False  # everything dropped: the files, settings or import roots moved


@dataclass
class PartialCounts:
    """What a run that reports part of the project read lightly and resolved in full."""

    light: set[str] = field(default_factory=set)  # the files first read with light facts
    upgraded: list[str] = field(default_factory=list)  # light files whose full facts were loaded later
    # The files whose definitions were resolved in full (None: all of them, or no partial run).
    full_paths: set[str] | None = None
    # The files outside the analysed ones whose facts a buffer's import graph loaded.
    looked_at: list[str] = field(default_factory=list)


@dataclass
class RunStats:
    """Everything one run counted."""

    check: CheckCounts = field(default_factory=CheckCounts)
    snapshot: SnapshotCounts = field(default_factory=SnapshotCounts)
    resolve: ResolveCounts = field(default_factory=ResolveCounts)
    kept: KeptCounts = field(default_factory=KeptCounts)
    partial: PartialCounts = field(default_factory=PartialCounts)
