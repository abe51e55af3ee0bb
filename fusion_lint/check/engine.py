"""The run, in named steps (DESIGN §2.1): select the rules → analyse the files → resolve the project
→ check (the rules, pure) → per-file ignores → suppress → fixes → report.

This module owns every file read of a lint; the rules see the resolved project only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

# Submodules bound by ``import pkg.mod as mod``, not ``from . import mod``: the latter takes the
# package's attribute when it has one, which is stale once the module was dropped from sys.modules
# (pytester's in-process runs do: the contract-coverage tests then saw two copies of the linter).
import fusion_lint.check.facts_partial as facts_partial
import fusion_lint.check.partial_run as partial_run
import fusion_lint.check.snapshot_run as snapshot_run
import fusion_lint.source.second_look as second_look
from fusion_lint.base.diagnostics import Diagnostic, Span
from fusion_lint.base.memory import gc_paused
from fusion_lint.base.modules import import_roots, module_of
from fusion_lint.base.stats import RunStats
from fusion_lint.check.abandon import Superseded, free_later, stop_if_superseded
from fusion_lint.check.checking import all_rules_by_code, check  # noqa: F401 (the engine's API)
from fusion_lint.check.reads import Reads
from fusion_lint.check.report import Report
from fusion_lint.check.rule_cache import RuleMemo
from fusion_lint.check.scopes import FileScopes
from fusion_lint.check.selection import RuleSelector, Selection
from fusion_lint.check.session import Lent, Mode, Session
from fusion_lint.check.snapshot import Recorder, counted_as, places
from fusion_lint.check.snapshot_run import Plan as SnapshotPlan
from fusion_lint.check.snapshot_run import snapshot_allowed
from fusion_lint.check.suppression import Reported, suppress, unknown_directives, unused_suppressions
from fusion_lint.config.settings import DEFAULTS, ConfigError, LoadedConfig, Settings
from fusion_lint.config.tree import ConfigTree, FlagSettings, common_folder
from fusion_lint.discovery.walk import Discovery, Walker
from fusion_lint.facts.model import FileFacts
from fusion_lint.memo.cache import RunMemo
from fusion_lint.project.index import ProjectIndex
from fusion_lint.project.view import ProjectView
from fusion_lint.rules import Rule, all_rules
from fusion_lint.source.gate import Decoded, decode
from fusion_lint.source.pipeline import FileResult, read_source
from fusion_lint.source.runner import KeptWorker, run_files

#: Rules the engine reports itself, for a whole file or a comment: no definition to check.
ENGINE_RULES = frozenset({"FL000", "FL001", "FL900", "FL999"})


class UsageError(Exception):
    """Bad paths or flags: exit 2 with this message."""


@dataclass
class Options:
    paths: list[str] = field(default_factory=lambda: ["."])
    settings: Settings | None = None  # None: found from the paths
    config: LoadedConfig | None = None  # --config: this one governs every file
    isolated: bool = False  # --isolated: no config file; the defaults govern every file
    flags: FlagSettings = field(default_factory=FlagSettings)  # --exclude, --per-file-ignores, ...
    selection: Selection = field(default_factory=Selection)
    jobs: int | None = None
    use_cache: bool = True
    stdin: tuple[str, bytes] | None = None  # (as-if filename, content)
    # absolute path -> content to lint instead of the file on disk (the rounds of --fix)
    overrides: dict[str, bytes] = field(default_factory=dict)
    report_unused_suppressions: bool = False
    # Inline ``--config "KEY = VALUE"``: settings by field name replacing every config's.
    setting_overrides: dict[str, Any] = field(default_factory=dict)
    # An in-memory project (absolute path -> content): the files are these and nothing else, no
    # file is read from disk and none is written, and they are parsed in this process (the rule
    # examples' harness: snippets we wrote, not hostile input).
    sources: dict[str, bytes] | None = None
    lent: Lent = field(default_factory=Lent)  # what the language server lends the run


# ----- analysis: the files and the project --------------------------------------------------------


@dataclass
class Analysis:
    """The project's files analysed and indexed, built once per run (``lint`` and ``lock`` share it)."""

    config: LoadedConfig
    settings: Settings
    root: Path
    report_set: set[str]  # absolute paths of the files the paths name: what is reported on
    walk_problems: list[tuple[str, str]]  # (path, why) of what the walk could not read (FL001)
    results: list[FileResult]  # one per analysed file, problems included
    files: dict[str, FileFacts]  # shared with ``index``, which adds the files it loads later
    index: ProjectIndex
    read: Callable[[str], bytes | None]  # a file's bytes as this run sees them (overrides first)
    memo: RunMemo | None = None  # the whole-run cache, when this run may use it
    scopes: FileScopes | None = None  # each file's config (``scopes.py``)
    enabled: frozenset[str] = frozenset()  # the rules some reported file enables (with a selector)
    # Files the index loaded on demand (parsed without the pre-scan), in order: what the cost
    # benchmark counts as reached (bench/corpus_bench.py).
    loaded: list[str] = field(default_factory=list)
    kept: KeptWorker | None = None  # the worker those loads share, ended once the project is resolved
    # Each file's content key in the per-file cache (what the rules' cache keys are made of).
    file_keys: dict[str, str] = field(default_factory=dict)
    # The run's snapshot, when it can answer this run without the facts of unreached files
    # (``snapshot_run``): then no fact was loaded yet.
    snapshot: SnapshotPlan | None = None
    partial: partial_run.PartialRun | None = None  # what a partial run read lightly, resolves in full
    session: Session = field(default_factory=Session)  # the run's mode and counters

    @property
    def stats(self) -> RunStats:
        return self.session.stats

    def text(self, path: str) -> str | None:
        """The decoded text of a file, as the run saw it (what a fix's offsets point into)."""
        data = self.read(path)
        if data is None:
            return None
        decoded = decode(data)
        return decoded.text if isinstance(decoded, Decoded) else None

    def resolved(self) -> ProjectView:
        try:
            if self.session.mode is Mode.BUFFER and self.partial is None:  # ``facts_partial`` may serve
                walked = [result.path for result in self.results]
                view = facts_partial.resolved(
                    self.index, self.settings, walked, self.report_set, self.loaded, self.read, self.session
                )
            else:
                view = partial_run.resolved(self.index, self.settings, self.partial, self.loaded, self.read, self.stats)
            self.stats.resolve = view.resolve_counts()
            return view
        finally:
            if self.kept is not None:
                self.kept.close()


def configure(options: Options) -> tuple[LoadedConfig, Settings]:
    """Check the paths exist and find the project's configuration (``UsageError``/``ConfigError``:
    exit 2). Each file's own config is found as the walk reaches it (``config_tree``)."""
    _, config, settings = configure_tree(options)
    return config, settings


def configure_tree(options: Options) -> tuple[ConfigTree, LoadedConfig, Settings]:
    """The run's configs, and the project's: the closest config to the common folder of the paths."""
    tree = _tree(options)
    if options.sources is not None:
        config = tree.forced or DEFAULTS
        return tree, config, config.settings
    paths = [Path(p) for p in options.paths]
    for path in paths:
        if not path.exists() and options.stdin is None:
            raise UsageError(f"{path}: no such file or directory")
    config = tree.project(paths)
    return tree, config, config.settings


def _tree(options: Options) -> ConfigTree:
    forced = options.config
    if options.settings is not None:  # these settings, for every file
        forced = LoadedConfig(settings=options.settings, path=forced.path if forced is not None else None)
    if forced is None and options.sources is not None:
        forced = DEFAULTS  # an in-memory project reads no config
    return ConfigTree(forced, options.isolated, options.flags, options.setting_overrides)


def run_root(options: Options, config: LoadedConfig, paths: Sequence[Path]) -> Path:
    """The project root of a run. A config forced by ``--config FILE`` decides the settings, never
    where the project is: ``--config ../base.toml`` keeps the root where the configs on disk put it
    (a sibling project under ``..`` must not join this one's files and tool vocabulary)."""
    if options.config is not None and options.sources is None:
        config = ConfigTree(None, False, options.flags).project(paths)
    return project_root(config, paths)


def project_root(config: LoadedConfig, paths: Sequence[Path]) -> Path:
    """The project root: the project config's folder when it holds every path, else the top of
    the package of each path (or the folder given), their common folder."""
    common = common_folder(paths)
    if config.root is not None and (config.root == common or config.root in common.parents):
        return config.root
    return common_folder([_package_top(path) for path in paths] or [Path(".")])


def _package_top(path: Path) -> Path:
    absolute = Path(os.path.abspath(path))
    if absolute.is_file() or not absolute.exists():
        base = module_of(str(absolute))[2] if absolute.suffix == ".py" else str(absolute.parent)
        return Path(base)
    return absolute


def discover(
    options: Options, config: LoadedConfig, settings: Settings, selector: RuleSelector | None, tree: ConfigTree
) -> tuple[Path, FileScopes, Walker, Discovery]:
    """The project root, each file's scope, the walker, and the files the paths name (what is
    reported on: excludes apply to files named explicitly, and to the name a buffer is linted as)."""
    paths = [Path(p) for p in options.paths]
    root = run_root(options, config, paths)
    scopes = FileScopes(tree, root, selector)
    respect = options.flags.respect_gitignore
    walker = Walker(
        root,
        respect_gitignore=settings.respect_gitignore if respect is None else respect,
        exclude_rules=scopes.excludes,
        lease=options.lent.walks,
    )
    reported = Discovery()
    walker.walk([Path(os.path.abspath(options.stdin[0]))] if options.stdin is not None else paths, reported)
    return root, scopes, walker, reported


def analyse(
    options: Options,
    config: LoadedConfig,
    settings: Settings,
    selector: RuleSelector | None = None,
    tree: ConfigTree | None = None,
    snapshot: bool = False,
    session: Session | None = None,
) -> Analysis:
    """Discover, analyse every file (parallel, cached) and index the project.

    With ``selector`` (the rules each config enables), a run whose every input is unchanged is
    found in the cache before any file's facts are loaded: ``memo.entry`` then holds its report.
    ``session``: the run's, told its mode and counting what the stages do (a new one if None)."""
    session = session or Session(lent=options.lent)
    lent = session.lent
    tree = tree or _tree(options)
    if options.sources is not None:
        session.mode = Mode.PROJECT  # (every file given is reported)
        return _analyse_sources(options, config, settings, FileScopes(tree, Path("/"), selector), session)
    root, scopes, walker, reported = discover(options, config, settings, selector, tree)
    report_set = set(reported.files)
    overrides = dict(options.overrides)
    if options.stdin is not None:
        overrides[os.path.abspath(options.stdin[0])] = options.stdin[1]

    # The project: every file under the root that passes the pre-scan, so cross-file facts (tool
    # names, services, shared contracts) are the same whether one file or the tree is reported.
    project_files = reported
    if options.stdin is not None:
        session.mode = Mode.BUFFER
    elif [Path(os.path.abspath(p)) for p in options.paths] != [root]:
        session.mode = Mode.PART
    else:
        session.mode = Mode.PROJECT
    if session.mode is not Mode.PROJECT:
        project_files = Discovery()  # (the whole project named: one walk, not two of the same tree)
        walker.walk([root], project_files)
    all_paths = sorted(set(project_files.files) | report_set)
    memo: RunMemo | None = None
    cacheable = options.use_cache and options.stdin is None and not options.overrides
    reportable = report_set | {path for path, _ in reported.problems}
    enabled = scopes.enabled_in(reportable) if selector is not None else frozenset()

    found_plan: SnapshotPlan | None = None

    def remembered(partial: list[FileResult]) -> bool:
        nonlocal memo, found_plan
        memo = RunMemo.open(
            settings,
            root,
            report_set,
            list(reported.problems),
            partial,
            enabled,
            options.report_unused_suppressions,
            scopes.cache_parts(reportable),
        )
        if memo is None or memo.lookup() is not None:
            return memo is not None
        if snapshot and snapshot_allowed(enabled):
            found_plan = snapshot_run.plan(
                memo.cache.directory, memo.frame, partial, report_set, session.stats.snapshot
            )
        return found_plan is not None

    probe = remembered if selector is not None and cacheable else None
    read_back: dict[str, bytes] = {}
    lightly = partial_run.PartialRun.chosen(options.use_cache, all_paths, report_set)  # pre-commit without cache
    results = run_files(
        all_paths,
        settings,
        jobs=options.jobs,
        use_cache=options.use_cache,
        cache_root=root,
        overrides=overrides,
        probe=probe,
        read_back=read_back,
        light=lightly.lighter if lightly is not None else None,
        lease=lent.facts,
        deadline=lent.deadline_s,
    )
    if found_plan is not None:  # the snapshot answers: the caller loads what it reaches
        found_plan.contents, nothing = read_back, ProjectIndex({}, lambda path: None, [], settings.follow_calls)
        return Analysis(
            config,
            settings,
            root,
            report_set,
            list(reported.problems),
            results,
            {},
            nothing,
            _reader(overrides),
            memo,
            scopes,
            enabled,
            snapshot=found_plan,
            session=session,
        )
    if memo is None or memo.entry is None:
        results = second_look.admit_reexport_users(
            results, settings, options.use_cache, root, overrides, lease=lent.facts, deadline=lent.deadline_s
        )
    files = {result.path: result.facts for result in results if result.facts is not None}

    loaded: list[str] = []
    kept = KeptWorker(settings.runtime_modules)

    file_keys = {result.path: result.key for result in results if result.key is not None and result.facts is not None}

    def load(path: str) -> FileFacts | None:
        loaded.append(path)
        result = run_files(
            [path],
            settings,
            jobs=1,
            use_cache=options.use_cache,
            cache_root=root,
            prescan=False,
            overrides=overrides,
            kept=kept,
            lease=lent.facts,
            deadline=lent.deadline_s,
        )[0]
        if result.key is not None and result.facts is not None:
            file_keys[path] = result.key
        return result.facts

    full = (
        lightly.loader(list(files), settings, root, overrides, kept, lent.deadline_s) if lightly is not None else None
    )
    read = _reader(overrides)
    # Every file the walk found, parsed or not: which files the pre-scan admits must not decide
    # where a module is looked for (a package's root may hold only files it skips).
    index = ProjectIndex(files, load, import_roots([r.path for r in results], root), settings.follow_calls, full=full)
    return Analysis(
        config,
        settings,
        root,
        report_set,
        list(reported.problems),
        results,
        files,
        index,
        read,
        memo,
        scopes,
        enabled,
        loaded,
        kept,
        file_keys,
        partial=lightly,
        session=session,
    )


def _reader(overrides: dict[str, bytes]) -> Callable[[str], bytes | None]:
    """A file's bytes as the run sees them (an override first), or None."""

    def read(path: str) -> bytes | None:
        if path in overrides:
            return overrides[path]
        data = read_source(path)  # a regular file only, and never more than the size limit
        return data if isinstance(data, bytes) else None

    return read


def _analyse_sources(
    options: Options, config: LoadedConfig, settings: Settings, scopes: FileScopes, session: Session
) -> Analysis:
    """An in-memory project: its files are ``options.sources``, read from nowhere else."""
    sources = dict(options.sources or {})
    paths = sorted(sources)
    root = Path(os.path.commonpath([os.path.dirname(p) for p in paths])) if paths else Path("/")
    scopes.root = root
    results = run_files(paths, settings, jobs=1, use_cache=False, overrides=sources, isolate=False)
    results = second_look.admit_reexport_users(results, settings, False, root, sources, isolate=False)  # as on disk
    files = {result.path: result.facts for result in results if result.facts is not None}

    def load(path: str) -> FileFacts | None:
        return run_files([path], settings, jobs=1, use_cache=False, prescan=False, overrides=sources, isolate=False)[
            0
        ].facts

    index = ProjectIndex(
        files, load, import_roots(files, root), settings.follow_calls, is_file=lambda path: str(path) in sources
    )
    enabled = scopes.enabled_in(paths) if scopes.selector is not None else frozenset()
    return Analysis(
        config,
        settings,
        root,
        set(paths),
        [],
        results,
        files,
        index,
        sources.get,
        None,
        scopes,
        enabled,
        session=session,
    )


# ----- after the rules: per-file ignores, suppressions, fixes -------------------------------------


def texts_to_fix(reported: list[Reported], analysis: Analysis) -> dict[str, str]:
    """The text of every file a kept diagnostic's fix edits (read once, as the run saw it)."""
    texts: dict[str, str] = {}
    for path in sorted({item.diagnostic.path for item in reported if item.fix is not None}):
        text = analysis.text(path)
        if text is not None:
            texts[path] = text
    return texts


def build_fixes(reported: list[Reported], texts: dict[str, str]) -> None:
    """Each kept diagnostic's fix, built from the text of its file: pure, like the rules."""
    for item in reported:
        if item.fix is not None and item.diagnostic.path in texts:
            item.diagnostic.fix = item.fix(texts[item.diagnostic.path])


# ----- the whole run ------------------------------------------------------------------------------


def _stop_if_superseded(analysis: Analysis) -> None:
    ends = analysis.kept.close if analysis.kept is not None else None  # (``resolved`` would end it)
    stop_if_superseded(analysis.session.lent.superseded, ends)


def lint(options: Options, configured: tuple[ConfigTree, LoadedConfig, Settings] | None = None) -> Report:
    """The run's report. ``configured``: ``configure_tree(options)``, when the caller made it
    already (the language server)."""
    return never_costed_by_the_cache(lambda chosen: _lint(chosen, configured), options)


Computed = TypeVar("Computed")


def never_costed_by_the_cache(compute: Callable[[Options], Computed], options: Options) -> Computed:
    """``compute(options)``: the cache may make it faster, never fail it (DESIGN §13.1). Whatever a
    computation that reuses work raises — loading, validating or replaying the per-file entries, the
    rules' results, the run's snapshot, what the language server kept — that reuse is dropped and
    the computation runs afresh, as ``--no-cache`` runs it. Only what it is asked to stop for goes
    through: a superseded lint, bad paths or flags, a bad config (a fresh run would raise them again)."""
    if not options.use_cache:
        return compute(options)
    try:
        return compute(options)
    except (Superseded, UsageError, ConfigError):
        raise
    except Exception as exc:  # noqa: BLE001 (a bug in reuse costs the reuse, never the run)
        logging.getLogger("fusion_lint").warning(
            "reusing earlier work failed (%s: %s); this run is computed without the cache", type(exc).__name__, exc
        )
        return compute(replace(options, use_cache=False, lent=_afresh(options.lent)))


def _afresh(lent: Lent) -> Lent:
    """What a run computed afresh is lent: nothing kept between the language server's lints serves
    it, and what was kept is dropped (the failure may have come from it)."""
    if lent.resolution is not None:
        lent.resolution.drop()
    if lent.facts is not None:
        lent.facts.kept.clear()
    if lent.walks is not None:
        lent.walks.kept.clear()
    return lent.kept_nothing()


# Rules allocate plenty and free it all by reference counting, while collections would scan every
# file's facts again and again: measured ~20% of the rules' time on the dense benchmark corpus.
@gc_paused()
def _lint(options: Options, configured: tuple[ConfigTree, LoadedConfig, Settings] | None) -> Report:
    session = Session(lent=options.lent)
    tree, config, settings = configured or configure_tree(options)
    rules = all_rules()
    selector = RuleSelector(options.selection, rules)
    analysis = analyse(options, config, settings, selector, tree, snapshot=True, session=session)
    report_set, enabled, scopes = analysis.report_set, analysis.enabled, analysis.scopes
    assert scopes is not None
    _stop_if_superseded(analysis)
    memo = analysis.memo
    if memo is not None and memo.entry is not None:  # nothing the run depends on changed: no rule runs
        texts = {path: text for path in memo.entry.texts if (text := analysis.text(path)) is not None}
        return Report(
            memo.entry.diagnostics,
            len(report_set),
            config,
            texts,
            sorted(report_set),
            frozenset(enabled),
            dict(memo.entry.definitions),
            stats=session.stats,
        )

    active = [rule for rule in rules if rule.code in enabled and rule.code not in ENGINE_RULES]
    if analysis.snapshot is not None and memo is not None:  # only what the edit reaches is loaded and checked
        roots = import_roots([r.path for r in analysis.results], analysis.root)
        answer = snapshot_run.replay(analysis, analysis.snapshot, active, memo.frame, memo.cache.directory, roots)
        if answer is not None:
            found, stand_ins, counts, used_files = answer
            return _finish(options, analysis, found, stand_ins, used_files, counts, rules)
        analysis = analyse(options, config, settings, selector, tree, session=session)  # the ordinary path
        memo = analysis.memo
    view = analysis.resolved()
    try:  # whatever stops the lint from here, the view's cycles (and a kept resolution's lock) are let go
        _stop_if_superseded(analysis)
        rule_memo = None
        if memo is not None:  # a run over files on disk, with a cache: replay what did not change
            rule_memo = RuleMemo(
                memo.cache.directory,
                view,
                analysis.file_keys,
                analysis.text,
                [settings.model_dump_json(), ",".join(rule.code for rule in active)],
            )
        recorder, reads = None, None
        if memo is not None and snapshot_allowed(enabled) and report_set == {r.path for r in analysis.results}:
            recorder, reads = Recorder(places(view.definitions), analysis.text), Reads()
        found = check(view, active, report_set, scopes.views(view), rule_memo, recorder, reads, session.stats.check)
        if rule_memo is not None:
            rule_memo.save()
        if (
            recorder is not None
            and reads is not None
            and memo is not None
            and not any(r.diagnostic.code == "FL999" for r in found)
        ):
            snapshot_run.record(analysis, view, recorder, reads, memo.frame, memo.cache.directory)
        counts = definition_counts(view, report_set)
        # Every file the answer rests on: those whose facts it used, and those the index tried to
        # load (one that could not be parsed then, a syntax error, must not be left out: repaired,
        # it changes the answer).
        used = [*analysis.files, *analysis.loaded]
        report = _finish(options, analysis, found, analysis.files, used, counts, rules)
    except BaseException:
        view.release()
        raise
    free_later(session.lent.freed, view.release, view, analysis, found)
    return report


def _finish(
    options: Options,
    analysis: Analysis,
    found: list[Reported],
    files: dict[str, FileFacts],
    used_files: Iterable[str],
    counts: dict[str, int],
    rules: Sequence[type[Rule]],
) -> Report:
    """After the rules: per-file ignores, suppressions (``files``: each file's comments), fixes,
    the whole-run cache (``used_files``: every file whose facts the answer rests on), the report."""
    report_set, scopes, memo = analysis.report_set, analysis.scopes, analysis.memo
    assert scopes is not None
    by_code = {rule.code: rule for rule in rules}
    reported = [Reported(d) for d in _file_problems(analysis, by_code)] + found
    # A ``# fusion-lint:`` comment that is no directive: FL900 wherever FL900 is enabled.
    reported += [
        r
        for r in unknown_directives(files, report_set, by_code["FL900"])
        if "FL900" in scopes.enabled(r.diagnostic.path)
    ]
    # A directory the walk could not read is reported at the directory, which no file set holds.
    reportable = report_set | {path for path, _ in analysis.walk_problems}
    # Each file's config decides what is reported in it (its rules, its per-file ignores).
    reported = [r for r in reported if r.diagnostic.path in reportable and scopes.reports(r.diagnostic)]
    kept, used = suppress(reported, files)
    if options.report_unused_suppressions:
        kept += unused_suppressions(used, files, report_set, by_code["FL900"], rules, scopes.enabled, analysis.text)
    texts = texts_to_fix(kept, analysis)
    build_fixes(kept, texts)
    ordered = sorted((item.diagnostic for item in kept), key=Diagnostic.sort_key)
    with_fixes = {d.path for d in ordered if d.fix}  # one pass: a scan per file was quadratic
    fixed_texts = {path: text for path, text in texts.items() if path in with_fixes}
    if memo is not None:
        memo.store(ordered, analysis.results, used_files, fixed_texts, counts)
    return Report(
        ordered,
        len(report_set),
        analysis.config,
        fixed_texts,
        sorted(report_set),
        frozenset(analysis.enabled),
        counts,
        stats=analysis.stats,
    )


def definition_counts(view: ProjectView, report_set: set[str]) -> dict[str, int]:
    """How many tools, resources, prompts and low-level dispatchers the reported files define (the
    summary says so, and says when there are none: nothing was checked)."""
    counts: dict[str, int] = {}
    for resolved in view.definitions:
        if resolved.path in report_set:
            for kind in counted_as(resolved):
                counts[kind] = counts.get(kind, 0) + 1
    return counts


def _file_problems(analysis: Analysis, by_code: dict[str, type[Rule]]) -> list[Diagnostic]:
    """FL000/FL001 of reported files that could not be analysed, and of what the walk could not read."""
    found = []
    for result in analysis.results:
        if result.facts is None and result.problem is not None and result.path in analysis.report_set:
            problem = result.problem
            rule = by_code[problem.code]
            span = Span(problem.line, problem.col, problem.line, problem.col, 0, 0, problem.line)
            found.append(Diagnostic(rule.code, rule.name, rule.severity, problem.message, result.path, span))
    for path, why in analysis.walk_problems:
        rule = by_code["FL001"]
        found.append(Diagnostic(rule.code, rule.name, rule.severity, why, path, Span(1, 0, 1, 0, 0, 0, 1)))
    return found
