"""``fusion-lint check --watch`` (ruff's ``--watch``, DESIGN §13.5): lint, then lint again each
time a Python file or a config file changes, until interrupted.

Changes come from ``watchfiles`` (the ``watch`` extra: ``pip install "fusion-lint[watch]"``),
debounced: a burst of writes (an editor saving several files, a formatter rewriting a tree) is one
re-run, yielded once the tree has been quiet for ``STEP_MS`` (at most ``DEBOUNCE_MS`` after the
first change). What triggers a re-run: ``.py``/``.pyi`` files, the config files fusion-lint reads
(``pyproject.toml``, ``fusion-lint.toml``, ``.fusion-lint.toml``, the files an ``extend`` chain or
``--config FILE`` names), ``.gitignore`` files and the contract lockfile. The cache directory,
``.git``, virtual environments and ``__pycache__`` never do.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from fusion_lint.config.watched import relevant

#: How long a burst of changes may grow before it is linted, and the quiet time that ends it (ms).
DEBOUNCE_MS = 1600
STEP_MS = 100


def watched_places(paths: Iterable[str], root: Path, configs: Iterable[Path]) -> tuple[list[str], frozenset[str]]:
    """What to watch: the project root, each path outside it, and each config file outside them
    (a shared base under ``..``); and the config files, which trigger a re-run whatever their name."""
    places: list[Path] = [root.resolve()]
    for path in [Path(p).resolve() for p in paths] + [c.resolve() for c in configs]:
        if not any(path == place or place in path.parents for place in places):
            places.append(path)
    return [str(place) for place in places], frozenset(str(c.resolve()) for c in configs)


def watch(run: Callable[[], None], places: list[str], extra: frozenset[str], clear: bool) -> None:
    """Run ``run`` now and after each relevant burst of changes, until Ctrl-C (exit 0)."""
    try:
        import watchfiles
    except ImportError:
        raise click.UsageError("--watch needs the watchfiles package: pip install 'fusion-lint[watch]'") from None

    class Filter(watchfiles.DefaultFilter):
        def __call__(self, change: watchfiles.Change, path: str) -> bool:
            return super().__call__(change, path) and relevant(path, extra)

    def once(message: str) -> None:
        if clear:
            click.echo("\x1b[2J\x1b[1;1H", nl=False)
        _say(message)
        try:
            run()
        except click.exceptions.Exit:
            pass
        except click.ClickException as exc:
            exc.show()
        _say("Watching for file changes.")

    ignore: tuple[str, ...] = (
        "__pycache__",
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".ruff_cache",
    )
    ignore += (".fusion_lint_cache", "node_modules", ".pytest_cache")
    once("Starting the linter in watch mode...")
    try:
        for changes in watchfiles.watch(
            *places,
            watch_filter=Filter(ignore_dirs=ignore),
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            raise_interrupt=False,
        ):
            changed = sorted({os.path.relpath(path) for _, path in changes})
            shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
            once(f"File change detected ({shown}): linting again...")
    except KeyboardInterrupt:
        pass


def _say(message: str) -> None:
    stamp = time.strftime("%H:%M:%S")
    click.echo(f"[{stamp}] {message}", err=True)
    sys.stderr.flush()
