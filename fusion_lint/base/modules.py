"""Module names from file paths: what ``import`` would call a file, and the folder it is relative to."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1024)
def _packages_above(directory: str) -> tuple[tuple[str, ...], str]:
    """The package names a folder is inside (outermost first) and the folder they start from;
    asked once per folder, not once per file in it (3,000 files: 0.4 s of ``is_file`` calls)."""
    folder = Path(directory)
    # A folder whose name is no identifier (``Office-Word-MCP-Server/__init__.py``, a checkout's
    # root) cannot be imported as a package: the names inside it are relative to it.
    if not (folder / "__init__.py").is_file() or folder.parent == folder or not folder.name.isidentifier():
        return (), directory
    outer, base = _packages_above(str(folder.parent))
    return (*outer, folder.name), base


@lru_cache(maxsize=4096)
def module_of(path: str) -> tuple[str, bool, str]:
    """(dotted module name, is a package ``__init__``, the folder the name is relative to) of a path, memoised (every file asks once per run, some more);
    with string operations, not pathlib's (a warm run asks for every file of the project)."""
    path = os.path.abspath(path)
    directory, name = os.path.split(path)
    is_package = name == "__init__.py"
    packages, base = _packages_above(directory)
    parts = [*packages] if is_package else [*packages, os.path.splitext(name)[0]]
    if not parts:  # a top-level __init__.py outside any package
        return os.path.basename(directory), is_package, os.path.dirname(directory)
    return ".".join(parts), is_package, base


def forget_packages() -> None:
    """Forget the remembered package folders: a long-lived process (the language server) calls this
    when a folder's entries moved, since a ``__init__.py`` that came or went renames modules."""
    module_of.cache_clear()
    _packages_above.cache_clear()


def import_roots(files: Iterable[str], root: Path) -> list[Path]:
    """Where ``import a.b`` may find ``a/b.py``: the folder each file's module name is relative to,
    the project root, and every ``src/`` folder above a file (a ``src`` layout is an import root
    even when its packages have no ``__init__.py``, DESIGN §12.3)."""
    roots = {root, root / "src"}
    bases, folders = set(), set()
    for path in files:  # strings, and each folder once: a warm run asks for every file of the project
        bases.add(module_of(path)[2])
        folders.add(os.path.dirname(path))
    roots.update(map(Path, bases))
    for folder in folders:
        roots.update(_src_folders(folder))
    return sorted(roots)


def _src_folders(folder: str) -> list[Path]:
    """``folder`` and the folders above it that are named ``src``."""
    start = Path(folder)
    return [candidate for candidate in (start, *start.parents) if candidate.name == "src"]


def is_test_module(path: str, module: str | None) -> bool:
    """A test file (``conftest.py``, ``test_*.py``, ``*_test.py``, or a module of a ``tests``/``test``
    package): the tools it registers are a test's doubles of the project's, never the project's own
    (DESIGN §13.3). Judged by the module's dotted name, so where the project itself lives does not count."""
    name = os.path.basename(path)
    if name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))):
        return True
    return module is not None and any(part in ("tests", "test") for part in module.split(".")[:-1])
