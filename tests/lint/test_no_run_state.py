"""No run leaves state in a module for another run to read (issue 29, DESIGN §13.1): a run's mode and
counters live in its ``Session`` and come back on the report (``report.stats``); what the language
server lends a run (kept facts, walks and resolution, a deadline, a superseded flag, where to free)
is handed down in ``Options.lent``. Read from the code: no ``contextvars``, and no module-level name
that a function rebinds (``global``) or changes in place (an item or attribute set, a mutating
call) — but the process resources below, each with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "fusion_lint"

MUTATORS = frozenset(
    {"append", "extend", "add", "update", "clear", "pop", "popitem", "setdefault", "remove", "discard", "insert"}
)

#: (module, name) -> why that module-level state is no run's.
ALLOWED = {
    ("base/memory.py", "_active"): "cyclic collection is one per process: overlapping pauses are counted where it is",
    ("base/memory.py", "_resume_after"): "the same: whether collection ran when the first overlapping pause began",
    ("facts/syntax.py", "_FIELDS"): "a table of the ast module's node classes, filled as they are met",
    ("memo/store.py", "_OWNED"): "a cache folder (by device and inode) found to be this user's, checked once",
    ("rules/__init__.py", "REGISTRY"): "the rule classes, registered as their modules are imported",
    ("rules/__init__.py", "_LOADED"): "whether the rule modules were imported (the same registry)",
    ("source/runner.py", "_early"): "the one thread that begins buffers' analyses: a process resource",
    ("source/runner.py", "_kept"): "each lint thread's worker process: a process resource, ended at shutdown",
    ("source/runner.py", "_all_kept"): "every such worker, for the shutdown to end them",
}


def module_state(path: Path) -> list[tuple[str, int, str]]:
    """(name, line, how) of each use of module-level state in a function of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names |= {target.id for target in targets if isinstance(target, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
            if any(module.split(".")[0] == "contextvars" for module in modules):
                found.append(("contextvars", node.lineno, "imported"))
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                found += [(name, node.lineno, "rebound") for name in node.names]
            elif (
                isinstance(node, (ast.Subscript, ast.Attribute))
                and isinstance(node.ctx, (ast.Store, ast.Del))
                and isinstance(node.value, ast.Name)
                and node.value.id in names
            ):
                found.append((node.value.id, node.lineno, "changed in place"))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in names
            ):
                found.append((node.func.value.id, node.lineno, f"changed by .{node.func.attr}()"))
    return found


def test_no_module_holds_run_state() -> None:
    found = [
        f"fusion_lint/{relative}:{line}: {name} {how}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, line, how in module_state(path)
        if (relative := path.relative_to(PACKAGE).as_posix(), name) not in ALLOWED
    ]
    assert found == []


def test_the_reading_finds_what_it_looks_for(tmp_path: Path) -> None:
    """What the last round's code held (``LAST_CHECK``, a lease in a ContextVar) is found."""
    module = tmp_path / "module.py"
    module.write_text(
        "from contextvars import ContextVar\n"
        "LAST_CHECK = Counts()\n"
        "LAST = Counts()\n"
        "_KEPT = {}\n"
        "TABLE = {'a': 1}\n"
        "def run():\n"
        "    global LAST\n"
        "    LAST = Counts()\n"
        "    LAST_CHECK.ran += 1\n"
        "    _KEPT.setdefault(1, 2)\n"
        "    return TABLE['a']\n",
        encoding="utf-8",
    )
    assert [(name, how) for name, _, how in module_state(module)] == [
        ("contextvars", "imported"),
        ("LAST", "rebound"),
        ("LAST_CHECK", "changed in place"),
        ("_KEPT", "changed by .setdefault()"),
    ]


def test_every_allowance_is_still_needed() -> None:
    used = {
        (path.relative_to(PACKAGE).as_posix(), name)
        for path in PACKAGE.rglob("*.py")
        for name, _, _ in module_state(path)
    }
    assert set(ALLOWED) <= used
