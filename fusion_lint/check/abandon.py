"""Abandoning a run between its stages: whoever started it (the language server, when the buffer
changed again meanwhile) wants its result no more, and a stale lint gives the CPU back to the next."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Superseded(Exception):
    """The run was abandoned between two of its stages: whoever started it wants its result no more
    (the language server, when the buffer changed again meanwhile)."""


def stop_if_superseded(superseded: Callable[[], bool] | None, before_raising: Callable[[], None] | None = None) -> None:
    """Raise ``Superseded`` if the run's starter no longer wants it (``superseded``, which the
    language server lends the run, answers True; ``before_raising`` first: the run's own clean-up,
    such as ending the worker of on-demand loads)."""
    if superseded is not None and superseded():
        if before_raising is not None:
            before_raising()
        raise Superseded()


def free_later(keep: list[Any] | None, release: Callable[[], None], *objects: object) -> None:
    """``release`` (what breaks the objects' reference cycles) then drop them: now, or after the
    publish when the run was lent ``keep`` (the language server frees a lint's resolved project,
    millions of objects and ~60 ms of reference counting at 3,000 modules, once the diagnostics are
    published: ``free`` then)."""
    if keep is None:
        release()
    else:
        keep.append(_Release(release))
        keep.extend(objects)


class _Release:
    """What ``free`` calls first: marked, so that an object kept with it is never called."""

    def __init__(self, release: Callable[[], None]) -> None:
        self.release = release


class AfterFreed:
    """A hook ``free`` runs once everything else it was given is dropped."""

    def __init__(self, hook: Callable[[], object]) -> None:
        self.hook = hook


def free(garbage: list[Any]) -> None:
    """What ``free_later`` kept: each release called, everything dropped, then the ``AfterFreed`` hooks."""
    after = [item for item in garbage if isinstance(item, AfterFreed)]
    for item in garbage:
        if isinstance(item, _Release):
            item.release()
    garbage.clear()
    for item in after:
        item.hook()
