"""Which files a partial run (a few files named in a large project) must resolve in full.

A definition lands a diagnostic in a reported file only through its own file, the entries of its
contract written there, or a function of its reach there (``checking._touches``). Every one of
those is found by the project index from a qualified name the definition's file spells: an import
of the reported module (or of a module re-exporting from it, which then spells it in turn), a call
through one, a base class, a contract constant. So the files that can report into the named ones
are among those whose text names a reported module, and those naming one of them, and so on:

* by the last part of its dotted name, as a word (``import a.b.m``, ``from a.b import m``, ``from
  .m import x``, ``from . import m`` all spell ``m``; a package is spelled by its own name);
* or, for a package's ``__init__``, by any relative import of a file inside the package (``from .
  import name`` spells neither the package nor its ``__init__``);
* a file that is not plain ASCII may spell a name another way (NFKC, another encoding): it counts.

That is an over-approximation (a word in a comment counts), which is what soundness needs. Past
``limit`` files it stops: the run then resolves everything, as a whole-tree run does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

# ``from .x import``, ``from . import``, ``from ..pkg import``: a relative import, wherever it stands.
_RELATIVE_IMPORT = re.compile(rb"\bfrom[ \t\\\n]*\.")


def reaching_files(texts: Mapping[str, bytes], report_set: Iterable[str], limit: int | None = None) -> set[str] | None:
    """The files of ``texts`` that may report into ``report_set`` (the reported ones included), or
    None when they are more than ``limit`` (default: a quarter of the files) or cannot be told."""
    limit = max(16, len(texts) // 4) if limit is None else limit
    reached = set(report_set)
    frontier = set(reached)
    while frontier:
        needles: set[bytes] = set()
        packages: list[str] = []
        for path in frontier:
            # What any import that finds this file spells, whichever import root it is found from.
            folder, base = os.path.split(path)
            is_package = base == "__init__.py"
            name = os.path.basename(folder) if is_package else os.path.splitext(base)[0]
            if not name.isidentifier() or not name.isascii():
                return None  # a file no import can name, or one named differently in other spellings
            needles.add(name.encode())
            if is_package:
                packages.append(os.path.dirname(path) + os.sep)
        spelled = re.compile(rb"(?<!\w)(?:" + b"|".join(re.escape(n) for n in sorted(needles)) + rb")(?!\w)")
        frontier = set()
        for path, data in texts.items():
            if path in reached:
                continue
            if not data.isascii() or b"\0" in data:
                frontier.add(path)
            elif any(needle in data for needle in needles) and spelled.search(data) is not None:
                frontier.add(path)
            elif any(path.startswith(folder) for folder in packages) and _RELATIVE_IMPORT.search(data) is not None:
                frontier.add(path)
        reached |= frontier
        if len(reached) > limit:
            return None
    return reached
