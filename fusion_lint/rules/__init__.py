"""The rule framework (DESIGN §5): each rule is a small class with its code, name, severity, its
documentation (what, why, fix) and VALID/INVALID examples that the test suite runs.

Rules are pure functions of the model: they get a ``DefinitionContext`` and yield ``Finding``s.
They never parse, print or touch the filesystem.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar, Iterable, Optional

from ..diagnostics import Finding, Severity
from ..model import Definition, FileFacts, FunctionFacts
from ..project import Contract, Project, Reached

DOCS_URL = "https://github.com/fusion-lint/fusion-lint/blob/main/docs/rules.md#{anchor}"


@dataclass(frozen=True)
class Example:
    """A snippet that must fire the rule ``count`` times, on ``lines`` (1-based) when given."""

    code: str
    count: int = 1
    lines: tuple[int, ...] = ()
    message: str = ""  # a fragment every message must contain
    fixed: Optional[str] = None  # what the fix produces (for fixable rules)


@dataclass
class DefinitionContext:
    """What a rule may look at for one definition."""

    definition: Definition
    path: str
    contract: Contract
    handler: Optional[FunctionFacts]
    handler_path: Optional[str]
    reach: list[Reached]
    project: Project
    recovery_min_words: int
    tool_names: set[str] = field(default_factory=set)
    source: Callable[[str], Optional[str]] = lambda path: None  # decoded text of a file, for fixes
    files: dict[str, FileFacts] = field(default_factory=dict)
    runtime_modules: tuple[str, ...] = ("mcp_fusion",)

    @property
    def label(self) -> str:
        return self.definition.label


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line: what it checks
    why: ClassVar[str]  # why it matters to the agent reading the failure
    fix: ClassVar[Optional[str]] = None  # what the automatic fix does, if any
    default_enabled: ClassVar[bool] = True
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        return ()

    @classmethod
    def url(cls) -> str:
        return DOCS_URL.format(anchor=f"{cls.code.lower()}-{cls.name}")


REGISTRY: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    if cls.code in REGISTRY:
        raise RuntimeError(f"duplicate rule code {cls.code}")
    REGISTRY[cls.code] = cls
    return cls


def all_rules() -> list[type[Rule]]:
    from . import contract_shape, handler, meta, recovery  # noqa: F401  (registration)

    return [REGISTRY[code] for code in sorted(REGISTRY)]


def rule_by_code_or_name(key: str) -> Optional[type[Rule]]:
    for rule in all_rules():
        if key.upper() == rule.code or key == rule.name:
            return rule
    return None
