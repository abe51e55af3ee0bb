"""What one run found (DESIGN §7): the diagnostics and what the reporters, ``--fix`` and the editor
need around them."""

from __future__ import annotations

from dataclasses import dataclass, field

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.base.stats import RunStats
from fusion_lint.config.settings import LoadedConfig


@dataclass
class Report:
    """What one run found, as the reporters, ``--fix`` and the editor consume it."""

    diagnostics: list[Diagnostic]
    files_checked: int
    config: LoadedConfig
    texts: dict[str, str] = field(default_factory=dict)  # decoded sources of reported files (fixes)
    checked: list[str] = field(default_factory=list)  # the reported files, sorted (JUnit: one case each)
    enabled: frozenset[str] = frozenset()  # codes of the rules that ran (SARIF lists them)
    # What the reported files define, by kind (tool, resource, prompt, dispatcher): what was checked.
    definitions: dict[str, int] = field(default_factory=dict)
    fixed: int = 0  # findings --fix fixed (in the files written, or in the buffer it returns)
    # What --fix fixed, per file: (code, name) -> how many (``--show-fixes`` lists them).
    fixed_rules: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    stats: RunStats = field(default_factory=RunStats)  # what the run counted (``session.Session``)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")
