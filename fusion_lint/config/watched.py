"""Which files a run reads besides the Python it lints: what ``check --watch`` and the language
server's ``workspace/didChangeWatchedFiles`` re-lint for (DESIGN §13.5)."""

from __future__ import annotations

import os

from fusion_lint.config.settings import CONFIG_FILES
from mcp_fusion.lockfile import LOCKFILE_NAME

#: Config files, ``.gitignore`` (what discovery skips) and the contract lockfile.
READ_NAMES = frozenset({*CONFIG_FILES, ".gitignore", LOCKFILE_NAME})
PYTHON_SUFFIXES = (".py", ".pyi")


def relevant(path: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a change of ``path`` can change a run's answer (``extra``: config files named
    elsewhere, such as an ``extend`` base or ``--config FILE``)."""
    name = os.path.basename(path)
    return name.endswith(PYTHON_SUFFIXES) or name in READ_NAMES or path in extra
