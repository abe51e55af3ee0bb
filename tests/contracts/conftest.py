"""The example servers' own contract suites (issue 22): one test per declared reason, read off the wire.

Run them with contract coverage, one server's universe at a time (tool names are the key, as in the
lockfile): see the README's quickstart.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# The example servers are imported from the repository root, the framework fixtures from their folder,
# and which frameworks this environment has from the runtime suite's helpers.
for folder in (REPO_ROOT, REPO_ROOT / "fixtures" / "frameworks", REPO_ROOT / "tests" / "runtime"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
