"""Module names from file paths: what ``import`` would call a file, and the folder it is relative to."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


def module_name_for(path: Path) -> tuple[str, bool, Path]:
    """(dotted module name, is a package ``__init__``, the directory the name is relative to)."""
    path = Path(os.path.abspath(path))
    is_package = path.name == "__init__.py"
    parts = [] if is_package else [path.stem]
    directory = path.parent
    # A folder whose name is no identifier (``Office-Word-MCP-Server/__init__.py``, a checkout's
    # root) cannot be imported as a package: the names inside it are relative to it.
    while (directory / "__init__.py").is_file() and directory.parent != directory and directory.name.isidentifier():
        parts.insert(0, directory.name)
        directory = directory.parent
    if not parts:  # a top-level __init__.py outside any package
        parts = [path.parent.name]
        directory = path.parent.parent
    return ".".join(parts), is_package, directory


@lru_cache(maxsize=4096)
def module_of(path: str) -> tuple[str, bool, str]:
    """``module_name_for`` of a path string, memoised (every file asks once per run, some more)."""
    name, is_package, base = module_name_for(Path(path))
    return name, is_package, str(base)
