"""The shape of the linter (DESIGN §2.1, §13.1), read from its own imports: one package per stage,
each saying what it owns; one direction of flow; no import cycle (module-level, lazy and
``TYPE_CHECKING`` imports all counted); the editor's code only in ``lsp/``; every rule in a module of
its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fusion_lint.rules import all_rules

PACKAGE = Path(__file__).resolve().parents[2] / "fusion_lint"

# The stages, one package each (DESIGN §13.1), in the order of the flow: a module may import its own
# stage and earlier ones only. The package root is the public surface: its ``__init__`` comes first
# (the version), its entry points (``python -m``, the pytest plugin) last.
STAGES = [
    ("root", {"fusion_lint"}),
    ("base", {"fusion_lint.base"}),
    ("discovery", {"fusion_lint.discovery"}),
    ("config", {"fusion_lint.config"}),
    ("memo", {"fusion_lint.memo"}),
    ("facts", {"fusion_lint.facts"}),
    ("source", {"fusion_lint.source"}),
    ("project", {"fusion_lint.project"}),
    ("rules", {"fusion_lint.rules"}),
    ("check", {"fusion_lint.check"}),
    ("fix", {"fusion_lint.fix"}),
    ("output", {"fusion_lint.output"}),
    ("lock", {"fusion_lint.lock"}),
    ("lsp", {"fusion_lint.lsp"}),
    ("cli", {"fusion_lint.cli"}),
    ("entry points", {"fusion_lint.__main__", "fusion_lint.pytest_plugin"}),
]
STAGE_PACKAGES = [name for name, _ in STAGES[1:-1]]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """Every module of the package ``name`` imports, wherever the import statement is."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            # ``from . import source`` names a module; ``from .rules import Finding`` a name in one.
            targets = [
                f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in MODULES else prefix for alias in node.names
            ]
        else:
            continue
        found |= {target for target in targets if target in MODULES and target != name}
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def stage_of(name: str) -> int:
    best = None
    for index, (_, members) in enumerate(STAGES):
        for member in members:
            if name == member or (member != "fusion_lint" and name.startswith(member + ".")):
                if best is None or len(member) > best[1]:
                    best = (index, len(member))
    if best is None and name == "fusion_lint":
        return 0
    assert best is not None, f"{name} belongs to no stage: add it to STAGES"
    return best[0]


def test_every_module_belongs_to_a_stage() -> None:
    for name in MODULES:
        stage_of(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_later_stage(name: str) -> None:
    later = {target for target in GRAPH[name] if stage_of(target) > stage_of(name)}
    assert not later, f"{name} ({STAGES[stage_of(name)][0]}) imports later stages: {sorted(later)}"


def test_there_is_no_import_cycle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in GRAPH:
        if name not in index:
            visit(name)
    assert not cycles, cycles


def test_the_checks_detect_a_back_edge() -> None:
    """The stage check would fail on an import against the flow (the checks can fail)."""
    assert stage_of("fusion_lint.rules.fl302_preserve_cause_on_rethrow") > stage_of("fusion_lint.project.view")
    assert stage_of("fusion_lint.check.engine") > stage_of("fusion_lint.rules")
    assert "fusion_lint.project.view" in GRAPH["fusion_lint.rules"]


def test_every_rule_lives_in_a_module_named_after_it() -> None:
    for rule in all_rules():
        expected = f"fusion_lint.rules.{rule.code.lower()}_{rule.name.replace('-', '_')}"
        assert rule.__module__ == expected, (rule.code, rule.__module__)
    modules = [
        name
        for name in MODULES
        if name.startswith("fusion_lint.rules.") and not name.rpartition(".")[2].startswith("_")
    ]
    assert len(modules) == len(all_rules()), "a rule module holds more than one rule, or none"
