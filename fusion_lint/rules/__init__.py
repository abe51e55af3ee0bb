"""The rule framework (DESIGN §2.1, §5): each rule is a small class in a module of its own, named
after it (``fl302_preserve_cause_on_rethrow.py``), with its code, name, severity, documentation in
ruff's layout and VALID/INVALID examples that the test suite runs.

Rules are pure functions of the resolved project (``project.view``): a rule checks one definition,
one contract entry or one function, and yields ``Finding``s — where, what to do, maybe a fix —
whose message the engine prefixes with the definitions they concern (``tool 'a'``, or ``tool 'a',
tool 'b'`` when a shared contract entry or a shared handler serves both). They never read, parse,
print or touch the filesystem: everything they may ask is resolved before they run.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

from fusion_lint.base.diagnostics import Applicability, Fix, Severity, Span
from fusion_lint.project.view import FunctionView, ProjectView, ResolvedDefinition, ResolvedEntry

DOCS_URL = "https://github.com/fusion-lint/fusion-lint/blob/main/docs/rules.md#{anchor}"


# A fix, built from the text of the file the finding lands in (the text the spans point into).
# The engine builds it only for a finding it reports; a builder reads nothing but that text.
FixBuilder = Callable[[str], Fix | None]


@dataclass(slots=True)
class Finding:
    """What a rule reports. ``message`` says what is wrong and what to do, without the label of
    the definitions it concerns: those are ``subjects`` (by default the definition, the entry's
    holders, or the definitions the function is the handler of)."""

    span: Span
    message: str
    path: str  # the file it lands in
    fix: FixBuilder | None = None
    subjects: list[ResolvedDefinition] | None = None


# ----- examples -----------------------------------------------------------------------------------

# ``# error: FL302`` marks the line a finding of FL302 starts on; ``# error: FL302 "from e"`` also
# asks that its message contain ``from e``. The docs show snippets without them.
EXPECTATION = re.compile(r'error: (FL\d{3})(?: "([^"]*)")?')
MARKER = re.compile(r'\s*# error: FL\d{3}(?: "[^"]*")?(?:,? ?# error: FL\d{3}(?: "[^"]*")?)*[ \t]*$', re.MULTILINE)


def without_markers(code: str) -> str:
    """A snippet as the docs show it: the expectation comments taken out."""
    return MARKER.sub("", code)


@dataclass(frozen=True)
class Example:
    """A snippet of a tool module, the rule's ``prelude`` added before it by the harness (and hidden
    in the docs). In an INVALID example, each expected finding is marked on its line
    (``# error: FL302``); ``fixed`` is the snippet after the rule's fixes; ``files`` are other files
    of the same project (``path``, source), for what crosses files."""

    code: str
    fixed: str | None = None
    files: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def tidy(code: str) -> str:
        """A snippet as written in a rule class (indented, after a newline) as it is linted and shown."""
        return textwrap.dedent(code).lstrip("\n")

    @property
    def snippet(self) -> str:
        return self.tidy(self.code)

    @property
    def fixed_snippet(self) -> str | None:
        return self.tidy(self.fixed) if self.fixed is not None else None

    def expectations(self) -> list[tuple[int, str, str]]:
        """(1-based line in the snippet, code, message fragment) of every marked finding."""
        found = []
        for number, line in enumerate(self.snippet.split("\n"), start=1):
            if "#" in line:
                for match in EXPECTATION.finditer(line[line.index("#") :]):
                    found.append((number, match.group(1), match.group(2) or ""))
        return found


ExampleLike = str | Example


def as_example(example: ExampleLike) -> Example:
    return example if isinstance(example, Example) else Example(example)


# ----- rules --------------------------------------------------------------------------------------


class Rule:
    """One rule. Documentation follows ruff's layout: ``summary`` (What it does), ``why`` (Why is
    this bad?), the first INVALID and VALID examples (Example / Use instead), ``fix`` and
    ``fix_safety`` (Fix safety), ``options`` (Options) and ``limits`` (Known limits)."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line: what it checks
    why: ClassVar[str]  # why it matters to the agent reading the failure
    fix: ClassVar[str | None] = None  # what the automatic fix does, if any
    fix_safety: ClassVar[Applicability | None] = None  # the applicability of every fix it offers
    options: ClassVar[str] = ""  # the settings that change what it reports
    limits: ClassVar[str] = ""  # what it cannot see
    default_enabled: ClassVar[bool] = True
    prelude: ClassVar[str] = ""  # what the harness puts before every example
    # A definition rule that follows the callers of the functions its handler reaches
    # (``project.function_view``): its cached findings are keyed by that call graph too (rule_cache).
    reads_callers: ClassVar[bool] = False
    VALID: ClassVar[tuple[ExampleLike, ...]] = ()
    INVALID: ClassVar[tuple[ExampleLike, ...]] = ()

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        return ()

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        return ()

    def check_function(self, function: FunctionView, project: ProjectView) -> Iterable[Finding]:
        return ()

    @classmethod
    def checks(cls) -> tuple[str, ...]:
        """Which of the three ``check_*`` methods this rule implements."""
        return tuple(
            scope
            for scope in ("definition", "entry", "function")
            if getattr(cls, f"check_{scope}") is not getattr(Rule, f"check_{scope}")
        )

    @classmethod
    def url(cls) -> str:
        return DOCS_URL.format(anchor=f"{cls.code.lower()}-{cls.name}")

    @classmethod
    def valid_examples(cls) -> list[Example]:
        return [as_example(example) for example in cls.VALID]

    @classmethod
    def invalid_examples(cls) -> list[Example]:
        return [as_example(example) for example in cls.INVALID]


REGISTRY: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    if cls.code in REGISTRY and REGISTRY[cls.code] is not cls:
        raise RuntimeError(f"duplicate rule code {cls.code}")
    REGISTRY[cls.code] = cls
    return cls


_LOADED = False


def all_rules() -> list[type[Rule]]:
    """Every rule, in code order: each module of this package but the private ones registers one."""
    global _LOADED
    if not _LOADED:
        for module in pkgutil.iter_modules(__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"{__name__}.{module.name}")
        _LOADED = True
    return [REGISTRY[code] for code in sorted(REGISTRY)]


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    for rule in all_rules():
        if key.upper() == rule.code or key == rule.name:
            return rule
    return None
