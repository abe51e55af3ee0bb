"""Orchestration: discover → analyse files (parallel, cached) → project view → rules → suppress.

One direction of flow. The rules see the model only; this module owns every file read.
"""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from .config import ConfigError, LoadedConfig, Settings, find_config
from .diagnostics import Diagnostic
from .discovery import Discovery, Walker
from .model import FileFacts, Span
from .pipeline import FileResult, _module_of, analyze_file, imports_module, read_source
from .project import Contract, Project, Reached
from .rules import DefinitionContext, Rule, all_rules
from .cache import RunMemo, gc_paused
from .runner import run_files


class UsageError(Exception):
    """Bad paths or flags: exit 2 with this message."""


@dataclass
class Selection:
    """Which rules run: codes, code prefixes (``FL2``) or names, as in ruff."""

    select: Optional[list[str]] = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)

    def resolve(self, rules: Sequence[type[Rule]], source: Optional[str] = None) -> set[str]:
        """The enabled codes. ``source`` names where the lists come from in an error (a config
        file's table); None means the command-line flags."""
        if self.select is None:
            chosen = {r.code for r in rules if r.default_enabled}
        else:
            chosen = expand_rule_keys(self.select, rules, source, "select")
        chosen |= expand_rule_keys(self.extend_select, rules, source, "extend-select")
        chosen -= expand_rule_keys(self.ignore, rules, source, "ignore")
        return chosen


def expand_rule_keys(keys: Iterable[str], rules: Sequence[type[Rule]], source: Optional[str], option: str) -> set[str]:
    """Codes named by rule codes, code prefixes (``FL2``), rule names or ``ALL``; an unknown key
    is a ``ConfigError`` naming the flag, or the file and key, it came from."""
    codes: set[str] = set()
    for key in keys:
        key = key.strip()
        if not key:
            continue
        if key.upper() == "ALL":
            codes |= {r.code for r in rules}
            continue
        matched = {r.code for r in rules if r.code.startswith(key.upper()) or r.name == key}
        if not matched:
            where = f"--{option}" if source is None else f"{source} key '{option}'"
            raise ConfigError(
                f"{where}: unknown rule code, prefix or name '{key}' (expected e.g. FL202, FL2 or "
                "error-contract-unthrown; see fusion-lint rule --all)"
            )
        codes |= matched
    return codes


@dataclass
class Options:
    paths: list[str] = field(default_factory=lambda: ["."])
    settings: Optional[Settings] = None  # None: found from the paths
    config: Optional[LoadedConfig] = None
    selection: Selection = field(default_factory=Selection)
    jobs: Optional[int] = None
    use_cache: bool = True
    stdin: Optional[tuple[str, bytes]] = None  # (as-if filename, content)
    # absolute path -> content to lint instead of the file on disk (the rounds of --fix)
    overrides: dict[str, bytes] = field(default_factory=dict)
    report_unused_suppressions: bool = False


@dataclass
class Report:
    diagnostics: list[Diagnostic]
    files_checked: int
    rules: list[type[Rule]]
    config: LoadedConfig
    texts: dict[str, str] = field(default_factory=dict)  # decoded sources of reported files (fixes)
    checked: list[str] = field(default_factory=list)  # the reported files, sorted (JUnit: one case each)
    enabled: frozenset[str] = frozenset()  # codes of the rules that ran (SARIF lists them)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")


def _root_for(config: LoadedConfig, path: Path) -> Path:
    if config.root is not None:
        return config.root
    absolute = Path(os.path.abspath(path))
    if absolute.is_file() or not absolute.exists():
        _, _, base = _module_of(str(absolute)) if absolute.suffix == ".py" else ("", False, str(absolute.parent))
        return Path(base)
    return absolute


@dataclass
class Analysis:
    """The project as the rules see it, built once per run (``lint`` and ``lock`` share it)."""

    config: LoadedConfig
    settings: Settings
    root: Path
    report_set: set[str]  # absolute paths of the files the paths name: what is reported on
    walk_problems: list[tuple[str, str]]  # (path, why) of what the walk could not read (FL001)
    results: list[FileResult]  # one per analysed file, problems included
    files: dict[str, FileFacts]  # shared with ``project``, which adds the files it loads later
    project: Project
    source: Callable[[str], Optional[str]]  # decoded text of a file, memoised in ``texts``
    texts: dict[str, str]
    memo: Optional[RunMemo] = None  # the whole-run cache, when this run may use it


def configure(options: Options) -> tuple[LoadedConfig, Settings]:
    """Check the paths exist and find the configuration (``UsageError``/``ConfigError``: exit 2)."""
    paths = [Path(p) for p in options.paths]
    for path in paths:
        if not path.exists() and options.stdin is None:
            raise UsageError(f"{path}: no such file or directory")
    config = options.config or find_config(paths[0] if paths else Path("."))
    return config, options.settings or config.settings


def analyse(
    options: Options, config: LoadedConfig, settings: Settings, enabled: Optional[frozenset[str]] = None
) -> Analysis:
    """Discover, analyse every file (parallel, cached) and build the cross-file project view.

    With ``enabled`` (the rules that will run), a run whose every input is unchanged is found in
    the cache before any file's facts are loaded: ``memo.entry`` then holds its report."""
    paths = [Path(p) for p in options.paths]
    root = _root_for(config, paths[0] if paths else Path("."))
    excludes = [*settings.exclude, *settings.extend_exclude]
    walker = Walker(root, excludes, settings.respect_gitignore)

    reported = Discovery()
    if options.stdin is None:
        walker.walk(paths, reported)
    report_set = set(reported.files)
    stdin_path = None
    if options.stdin is not None:
        stdin_path = os.path.abspath(options.stdin[0])
        # Excludes apply to the name a buffer is linted as, as to any path given by name (§6).
        named = Discovery()
        walker.walk([Path(stdin_path)], named)
        report_set.update(named.files)

    # The project: every file under the root that passes the pre-scan, so cross-file facts (tool
    # names, services, shared contracts) are the same whether one file or the tree is reported.
    project_files = Discovery()
    walker.walk([root], project_files)
    all_paths = sorted(set(project_files.files) | report_set)
    overrides = dict(options.overrides)
    if options.stdin is not None and stdin_path:
        overrides[stdin_path] = options.stdin[1]
    memo: Optional[RunMemo] = None

    def remembered(partial: list[FileResult]) -> bool:
        nonlocal memo
        memo = RunMemo.open(options, settings, root, report_set, list(reported.problems), partial, enabled or ())
        return memo is not None and memo.lookup() is not None

    results = run_files(all_paths, settings, jobs=options.jobs, use_cache=options.use_cache,
                        cache_root=root, overrides=overrides, probe=remembered if enabled is not None else None)
    if memo is None or memo.entry is None:
        results = _admit_reexport_users(results, settings, options.use_cache, root, overrides)
    files: dict[str, FileFacts] = {result.path: result.facts for result in results if result.facts is not None}

    texts: dict[str, str] = {}

    def load(path: str) -> Optional[FileFacts]:
        result = run_files([path], settings, jobs=1, use_cache=options.use_cache, cache_root=root,
                           prescan=False, overrides=overrides)[0]
        return result.facts

    def source(path: str) -> Optional[str]:
        if path not in texts:
            from .source import Decoded, decode

            data = overrides.get(path)
            if data is None:
                data = read_source(path)
                if not isinstance(data, bytes):
                    return None
            decoded = decode(data)
            texts[path] = decoded.text if isinstance(decoded, Decoded) else ""
        return texts[path] or None

    search_roots = sorted({Path(_module_of(p)[2]) for p in files} | {root, root / "src"})
    project = Project(files, load, search_roots, settings.follow_calls)
    return Analysis(config, settings, root, report_set, list(reported.problems), results, files, project,
                    source, texts, memo)  # fmt: skip


def _touches(report_set: set[str], path: str, contract: Contract, reach: list[Reached]) -> bool:
    """Whether a definition's diagnostics could land in a reported file: its own file, a file its
    contract was written in, or a file its handler reaches."""
    if path in report_set:
        return True
    written = {where for _, where in contract.entries} | {where for _, where in contract.bad_items}
    written |= {where for _, _, where in contract.unresolved}
    if contract.wrong_type is not None:
        written.add(contract.wrong_type[1])
    return not written.isdisjoint(report_set) or any(r.path in report_set for r in reach)


def _admit_reexport_users(
    results: list[FileResult], settings: Settings, use_cache: bool, root: Path, overrides: dict[str, bytes]
) -> list[FileResult]:
    """The pre-scan's second look (DESIGN §10): a file that never names the runtime but imports a
    project module re-exporting it (``from myapp.api import tool``) is analysed after all.

    Re-export hubs are the modules that bind runtime names and define no tool themselves (tool
    modules import the runtime to use it, not to pass it on); keeping to them keeps this look to a
    few long needles, so a large tree that never mentions the runtime still costs one read."""
    hubs = [
        (r.facts.module, Path(_module_of(r.path)[2]).joinpath(*r.facts.module.split(".")[:-1]))
        for r in results
        if r.facts is not None and r.facts.runtime_names and not r.facts.definitions and r.facts.module
    ]
    skipped = [r.path for r in results if r.skipped]
    if not hubs or not skipped:
        return results
    admitted = []
    for path in skipped:
        data = overrides.get(path)
        if data is None:
            data = read_source(path)
            if not isinstance(data, bytes):
                continue
        if any(imports_module(data, module, package in Path(path).parents) for module, package in hubs):
            admitted.append(path)
    if not admitted:
        return results
    second = {r.path: r for r in run_files(admitted, settings, jobs=1, use_cache=use_cache, cache_root=root,
                                           prescan=False, overrides=overrides)}  # fmt: skip
    return [second.get(r.path, r) for r in results]


# Rules allocate plenty and free it all by reference counting, while collections would scan every
# file's facts again and again: measured ~20% of the rules' time on the dense benchmark corpus.
@gc_paused()
def lint(options: Options) -> Report:
    config, settings = configure(options)
    rules = all_rules()
    # Each list is checked where it was written, so an unknown code names its flag or its file.
    table = f"{config.path}: [tool.fusion-lint]" if config.path else "configuration"
    Selection(settings.select, settings.ignore, settings.extend_select).resolve(rules, table)
    for pattern, keys in settings.per_file_ignores.items():
        expand_rule_keys(keys, rules, table, f'per-file-ignores."{pattern}"')
    options.selection.resolve(rules)
    selection = Selection(
        select=options.selection.select if options.selection.select is not None else settings.select,
        ignore=[*settings.ignore, *options.selection.ignore],
        extend_select=[*settings.extend_select, *options.selection.extend_select],
    )
    enabled = selection.resolve(rules)
    analysis = analyse(options, config, settings, frozenset(enabled))
    root, report_set, files, project = analysis.root, analysis.report_set, analysis.files, analysis.project
    source, texts = analysis.source, analysis.texts
    memo = analysis.memo
    if memo is not None and memo.entry is not None:  # nothing the run depends on changed: no rule runs
        for path in memo.entry.texts:  # what the fixes' offsets point into, for the reporters
            source(path)
        return Report(memo.entry.diagnostics, len(report_set), rules, config, texts, sorted(report_set),
                      frozenset(enabled))  # fmt: skip

    diagnostics: list[Diagnostic] = []
    by_code = {r.code: r for r in rules}
    for result in analysis.results:
        if result.facts is None and result.problem is not None and result.path in report_set:
            problem = result.problem
            rule = by_code[problem.code]
            span = Span(problem.line, problem.col, problem.line, problem.col, 0, 0, problem.line)
            diagnostics.append(Diagnostic(rule.code, rule.name, rule.severity, problem.message, result.path, span))
    for path, why in analysis.walk_problems:
        rule = by_code["FL001"]
        diagnostics.append(Diagnostic(rule.code, rule.name, rule.severity, why, path, Span(1, 0, 1, 0, 0, 0, 1)))
    active = [rule() for rule in rules if rule.code in enabled and rule.code not in ("FL000", "FL001", "FL900", "FL999")]
    tool_names = project.tool_names()
    for definition, path in list(project.all_definitions()):
        handler = project.handler(definition, path)
        contract = project.contract(definition, path)
        reach = project.reach(*handler) if handler else []
        # Only definitions that can report into a reported file are checked: pre-commit and the
        # editor report one file of a large project, whose other definitions cannot matter there.
        if not _touches(report_set, path, contract, reach):
            continue
        ctx = DefinitionContext(
            definition=definition,
            path=path,
            contract=contract,
            handler=handler[0] if handler else None,
            handler_path=handler[1] if handler else None,
            reach=reach,
            project=project,
            recovery_min_words=settings.recovery_min_words,
            tool_names=tool_names,
            source=source,
            files=files,
            runtime_modules=tuple(settings.runtime_modules),
        )
        for rule in active:
            try:
                findings = list(rule.check(ctx))
            except Exception as exc:  # a bug in a rule must not hide the others (FL999)
                internal = by_code["FL999"]
                where = traceback.extract_tb(exc.__traceback__)[-1]
                diagnostics.append(
                    Diagnostic(
                        internal.code, internal.name, internal.severity,
                        f"rule {rule.code} ({rule.name}) failed on {ctx.label}: {type(exc).__name__}: {exc} "
                        f"[{os.path.basename(where.filename)}:{where.lineno}]",
                        path, definition.span,
                    )
                )  # fmt: skip
                continue
            for finding in findings:
                diagnostics.append(
                    Diagnostic(rule.code, rule.name, rule.severity, finding.message, finding.path or path,
                               finding.span, finding.fix)
                )  # fmt: skip

    # A directory the walk could not read is reported at the directory, which no file set holds.
    reportable = report_set | {path for path, _ in analysis.walk_problems}
    diagnostics = [d for d in diagnostics if d.path in reportable and d.code in enabled | {"FL999", "FL900"}]
    diagnostics = _apply_per_file_ignores(diagnostics, settings, root, by_code)
    kept = [d for d in diagnostics if not _suppressed(d, files.get(d.path), by_code)]
    if options.report_unused_suppressions:
        kept += _unused_suppressions(diagnostics, files, report_set, by_code["FL900"])
    diagnostics = kept
    unique: dict[tuple, Diagnostic] = {}
    for diagnostic in diagnostics:
        key = (diagnostic.code, diagnostic.path, diagnostic.span.line, diagnostic.span.col,
               diagnostic.span.end_line, diagnostic.span.end_col)  # fmt: skip
        unique.setdefault(key, diagnostic)
    ordered = sorted(unique.values(), key=Diagnostic.sort_key)
    if memo is not None:
        memo.store(ordered, analysis.results, files, texts)
    return Report(ordered, len(report_set), rules, config, texts, sorted(report_set), frozenset(enabled))


def _apply_per_file_ignores(
    diagnostics: list[Diagnostic], settings: Settings, root: Path, by_code: dict[str, type[Rule]]
) -> list[Diagnostic]:
    if not settings.per_file_ignores:
        return diagnostics
    kept = []
    for diagnostic in diagnostics:
        try:
            relative = Path(diagnostic.path).relative_to(root).as_posix()
        except ValueError:
            relative = diagnostic.path
        ignored = False
        for pattern, keys in settings.per_file_ignores.items():
            # A glob over the path from the root or over the file name; ``legacy/`` is a directory.
            in_directory = pattern.endswith("/") and relative.startswith(pattern)
            if in_directory or fnmatch(relative, pattern) or fnmatch(os.path.basename(relative), pattern):
                rule = by_code[diagnostic.code]
                if any(rule.code.startswith(k.upper()) or k == rule.name or k.upper() == "ALL" for k in keys):
                    ignored = True
        if not ignored:
            kept.append(diagnostic)
    return kept


def _unused_suppressions(
    diagnostics: list[Diagnostic], files: dict[str, FileFacts], report_set: set[str], rule: type[Rule]
) -> list[Diagnostic]:
    """A ``# noqa`` (or one of its codes) that suppressed nothing in this run."""
    used: dict[tuple[str, int], set[str]] = {}
    for diagnostic in diagnostics:
        if diagnostic.suppressed_by is not None:
            used.setdefault((diagnostic.path, diagnostic.suppressed_by), set()).update({diagnostic.code, diagnostic.name})
    unused = []
    for path in sorted(report_set):
        facts = files.get(path)
        for line, tokens in sorted(facts.suppressions.items()) if facts else ():
            hits = used.get((path, line), set())
            stale = sorted(t for t in tokens if t != "*" and t not in hits)
            if ("*" in tokens and not hits) or stale:
                what = "'# noqa'" if "*" in tokens and not hits else ", ".join(stale)
                span = Span(line, 0, line, 0, 0, 0, line)
                unused.append(Diagnostic(rule.code, rule.name, rule.severity,
                                         f"unused suppression: {what} suppresses nothing here; remove it", path, span))
    return unused


def _suppressed(diagnostic: Diagnostic, facts: Optional[FileFacts], by_code: dict[str, type[Rule]]) -> bool:
    if facts is None or not facts.suppressions:
        return False
    for line in {diagnostic.span.line, diagnostic.span.stmt_line}:
        tokens = facts.suppressions.get(line)
        if tokens and ("*" in tokens or diagnostic.code in tokens or diagnostic.name in tokens):
            diagnostic.suppressed_by = line
            return True
    return False
