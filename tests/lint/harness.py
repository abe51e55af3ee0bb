"""The in-memory rule harness: lint a project given as ``{path: source}`` without touching the disk.

Every rule's examples run through it (``test_rule_examples``): the rule's prelude is put before the
snippet, the snippet's ``# error: FLxxx`` comments say where its findings must be, and an example's
``fixed`` form is what the rule's fixes make of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fusion_lint.base.diagnostics import Diagnostic
from fusion_lint.check.engine import Options, Selection, lint
from fusion_lint.check.report import Report
from fusion_lint.config.settings import Settings
from fusion_lint.fix.codemod import rewrite
from fusion_lint.rules import Example, Rule

ROOT = "/memory/project"


def lint_sources(
    sources: dict[str, str],
    *,
    select: Iterable[str] | None = None,
    extend_select: Iterable[str] = (),
    settings: Settings | None = None,
) -> Report:
    """The report on an in-memory project: ``sources`` maps relative paths to their text
    (``settings``: a configuration, as a config file would give it)."""
    options = Options(
        settings=settings,
        paths=[f"{ROOT}/{path}" for path in sources],
        sources={f"{ROOT}/{path}": text.encode("utf-8") for path, text in sources.items()},
        selection=Selection(select=list(select) if select is not None else None, extend_select=list(extend_select)),
        use_cache=False,
        jobs=1,
    )
    return lint(options)


@dataclass
class Linted:
    rule: type[Rule]
    example: Example
    source: str  # prelude + snippet: the text of ``app.py``
    report: Report
    offset: int  # lines of the prelude: a snippet's line N is line N + offset of the file

    def of(self, code: str) -> list[Diagnostic]:
        return [d for d in self.report.diagnostics if d.code == code and d.path == f"{ROOT}/app.py"]

    def lines(self, code: str) -> list[int]:
        """Where ``code`` fired, as lines of the snippet."""
        return sorted(d.span.line - self.offset for d in self.of(code))

    def fixed(self) -> str:
        """The snippet after applying every fix of the rule (safe and unsafe), one pass, as ``--fix``
        applies them: a libcst codemod."""
        edits = [edit for d in self.of(self.rule.code) if d.fix is not None for edit in d.fix.edits]
        return rewrite(self.source, edits)[len(self.rule.prelude) :]


def lint_example(rule: type[Rule], example: Example) -> Linted:
    """The example linted with the default rules plus the rule itself (opt-in rules are asked for)."""
    source = rule.prelude + example.snippet
    sources = {"app.py": source, **{path: Example.tidy(text) for path, text in example.files}}
    report = lint_sources(sources, extend_select=[rule.code])
    return Linted(rule, example, source, report, rule.prelude.count("\n"))
