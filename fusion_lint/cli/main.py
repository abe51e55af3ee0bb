"""The command line (DESIGN §6, §12.4). Exit codes: 0 clean; 1 findings (or, with
``--exit-non-zero-on-fix``, something was fixed); 2 a usage, config or internal error."""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import os
import platform
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from fusion_lint import __version__
from fusion_lint.config.settings import OUTPUT_FORMATS, ConfigError, load_explicit, parse_override

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: The environment's choice of report format, between the flag's and the config's (ruff's order).
OUTPUT_FORMAT_ENV = "FUSION_LINT_OUTPUT_FORMAT"


def _codes(values: tuple[str, ...]) -> list[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


class FlagError(click.ClickException):
    """A bad flag or flag value: one line naming the flag and what was expected, exit 2 (as a
    configuration error is), instead of click's usage block."""

    exit_code = EXIT_ERROR

    def show(self, file: object = None) -> None:
        click.echo(f"fusion-lint: error: {self.format_message()} (see --help)", err=True)


class OneLineUsageErrors(click.Command):
    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            raise FlagError(f"{self.name}: {exc.format_message()}") from None


class DefaultGroup(click.Group):
    """``fusion-lint PATH...`` means ``fusion-lint check PATH...``."""

    command_class = OneLineUsageErrors

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version", "-V")):
            if args:
                self._refuse_mistyped_command(args[0])
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def _refuse_mistyped_command(self, word: str) -> None:
        """A first word that is no command and no existing path, but close to a command's name
        (``clena``), or a bare word naming nothing at all, is a usage error — never a path to lint."""
        if word.startswith("-") or os.path.lexists(word):
            return
        close = difflib.get_close_matches(word, sorted(self.commands), n=1, cutoff=0.6)
        if close:
            raise FlagError(f"unknown command '{word}' (did you mean '{close[0]}'?)")
        if not any(mark in word for mark in ("/", os.sep, ".")):
            raise FlagError(
                f"'{word}' is neither a command ({', '.join(sorted(self.commands))}) nor a file or directory"
            )


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="fusion-lint", message="%(prog)s %(version)s")
def main() -> None:
    """Check the error contracts of MCP servers written with mcp_fusion."""


def fail(message: str) -> click.exceptions.Exit:
    click.echo(f"fusion-lint: error: {message}", err=True)
    return click.exceptions.Exit(EXIT_ERROR)


def use_color(choice: str, stream: Any) -> bool:
    """``--color always|never`` decides; ``auto``: ``FORCE_COLOR`` forces, else ``NO_COLOR``
    disables (each when set and not empty), else colour on a terminal."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def emit(output: str | bytes, output_file: Path | None, color: bool = False, err: bool = False) -> None:
    """The report on standard output, or only in ``--output-file`` (its missing folders are
    created, as ruff does)."""
    if output_file is None:
        click.echo(output, nl=False, color=color, err=err)
        return
    try:
        output_file.parent.mkdir(parents=True, exist_ok=True)
        with open(output_file, "wb") as handle:
            handle.write(output if isinstance(output, bytes) else output.encode("utf-8"))
    except OSError as exc:
        raise fail(f"{output_file}: cannot write the report: {exc.strerror or exc}") from None


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--select", multiple=True, help="Rule codes, prefixes or names to enable (replaces the config's selection)."
)
@click.option("--ignore", multiple=True, help="Rule codes, prefixes or names to disable.")
@click.option(
    "--extend-ignore", multiple=True, help="Rule codes, prefixes or names to disable in addition (as --ignore)."
)
@click.option("--extend-select", multiple=True, help="Rule codes, prefixes or names to enable in addition.")
@click.option(
    "--output-format",
    type=click.Choice(OUTPUT_FORMATS),
    default=None,
    help=f"How to print the report [default: concise; else ${OUTPUT_FORMAT_ENV}, else output-format in the config].",
)
@click.option(
    "--output-file",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to this file instead of standard output.",
)
@click.option(
    "--statistics",
    is_flag=True,
    help="Print the findings counted per rule instead of the findings ([*]: --fix can fix some).",
)
@click.option(
    "--show-fixes", is_flag=True, help="Show what each fix does; with --fix, list what was fixed per file and rule."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when --fix or --fix-only fixed something.")
@click.option("--quiet", "-q", is_flag=True, help="Print diagnostics only, no summary.")
@click.option("--silent", "-s", is_flag=True, help="Print nothing; the exit code says it all.")
@click.option("--show-source", is_flag=True, help="Show the offending source line under each diagnostic.")
@click.option(
    "--color",
    "color_choice",
    type=click.Choice(("auto", "always", "never")),
    default="auto",
    show_default=True,
    help="Colour the text report (auto: on a terminal; NO_COLOR/FORCE_COLOR honoured).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes (default: the cores).")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--fix-only", is_flag=True, help="Apply safe fixes and report nothing that remains (exit 0).")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
@click.option("--add-noqa", is_flag=True, help="Add a '# noqa: CODE' to every line with a finding.")
@click.option("--report-unused-suppressions", is_flag=True, help="Report suppressions of ours that suppress nothing.")
@click.option("--stdin-filename", type=str, default=None, help="Lint standard input as if it were this file.")
@click.option(
    "--config",
    "config_values",
    multiple=True,
    metavar="FILE | 'KEY = VALUE'",
    help="A config file for every file (no other is read), or a TOML 'KEY = VALUE' overriding every config's.",
)
@click.option("--isolated", is_flag=True, help="Read no config file: the defaults and the flags only.")
@click.option("--exclude", multiple=True, help="Patterns to exclude, replacing every config's exclude.")
@click.option("--extend-exclude", multiple=True, help="Patterns to exclude in addition.")
@click.option(
    "--per-file-ignores",
    multiple=True,
    metavar="PATTERN:CODES",
    help="Ignore CODES in the files PATTERN matches, replacing every config's per-file-ignores.",
)
@click.option(
    "--extend-per-file-ignores",
    multiple=True,
    metavar="PATTERN:CODES",
    help="Ignore CODES in the files PATTERN matches, in addition.",
)
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip what .gitignore lists (default).")
@click.option(
    "--show-settings", is_flag=True, help="Print the settings that govern the first path, and their config files."
)
@click.option("--show-files", is_flag=True, help="List the files that would be checked, one per line.")
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks of internal errors.")
@click.option(
    "--watch",
    "-w",
    is_flag=True,
    help="Lint again whenever a Python or config file changes (needs fusion-lint[watch]).",
)
def check(paths: tuple[str, ...], watch: bool, **flags: Any) -> None:
    """Lint files and directories (default: the current directory)."""
    if watch:
        _watch(paths, flags)
    elif flags["silent"]:  # nothing on stderr either (a fixed buffer for --stdin-filename still goes out)
        with contextlib.redirect_stderr(io.StringIO()):
            _check(paths, **flags)
    else:
        _check(paths, **flags)


def _check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    output_format: str | None,
    output_file: Path | None,
    statistics: bool,
    show_fixes: bool,
    exit_zero: bool,
    exit_non_zero_on_fix: bool,
    quiet: bool,
    silent: bool,
    show_source: bool,
    color_choice: str,
    no_cache: bool,
    jobs: int | None,
    fix: bool,
    fix_only: bool,
    diff: bool,
    unsafe_fixes: bool,
    add_noqa: bool,
    report_unused_suppressions: bool,
    stdin_filename: str | None,
    config_values: tuple[str, ...],
    isolated: bool,
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    per_file_ignores: tuple[str, ...],
    extend_per_file_ignores: tuple[str, ...],
    respect_gitignore: bool | None,
    show_settings: bool,
    show_files: bool,
    verbose: bool,
) -> None:
    from fusion_lint.check.engine import Options, UsageError, lint
    from fusion_lint.check.selection import Selection
    from fusion_lint.config.tree import FlagSettings
    from fusion_lint.output import DOCUMENT_FORMATS, FORMATTERS, TEXT_FORMATS

    try:
        chosen_format = output_format or _environment_format()
        stdin = None
        path_list = list(paths) or ["."]
        if stdin_filename is not None:
            if paths and list(paths) != ["-"]:
                raise UsageError("--stdin-filename reads standard input; pass '-' or no path")
            stdin = (stdin_filename, b"" if show_settings or show_files else sys.stdin.buffer.read())
            path_list = [stdin_filename]
        elif "-" in paths:
            raise UsageError("reading standard input needs --stdin-filename NAME")
        config_path, overrides = _config_values(config_values)
        if isolated and config_path is not None:
            raise UsageError("--config and --isolated contradict each other: give one")
        config = load_explicit(config_path) if config_path is not None else None
        options = Options(
            paths=path_list,
            config=config,
            isolated=isolated,
            flags=FlagSettings.parse(
                _codes(exclude) if exclude else None,
                _codes(extend_exclude),
                list(per_file_ignores) if per_file_ignores else None,
                list(extend_per_file_ignores),
                respect_gitignore,
            ),
            selection=Selection(
                select=_codes(select) or None,
                ignore=_codes(ignore) + _codes(extend_ignore),
                extend_select=_codes(extend_select),
            ),
            jobs=jobs,
            use_cache=not no_cache,
            stdin=stdin,
            report_unused_suppressions=report_unused_suppressions,
            setting_overrides=overrides,
        )
        if show_settings or show_files:
            from fusion_lint.check.engine import configure_tree
            from fusion_lint.output.show import files_to_check
            from fusion_lint.output.show import show_settings as settings_shown

            as_json = (chosen_format or configure_tree(options)[1].settings.output_format) == "json"
            shown = settings_shown(options, as_json) if show_settings else files_to_check(options)
            if not silent:
                emit(shown, output_file)
            return
        fix = fix or fix_only
        report = lint(options)
        if fix or diff or add_noqa:
            from fusion_lint.fix.apply import apply_fixes

            # --diff shows the fixes, or with --add-noqa the suppressions; --add-noqa writes like --fix.
            report, outcome = apply_fixes(
                report,
                options,
                write=(fix or add_noqa) and not diff,
                unsafe=unsafe_fixes,
                add_noqa=add_noqa,
                stdin=stdin is not None,
                fix=fix or (diff and not add_noqa),
            )
            if diff or (stdin is not None and (fix or add_noqa)):
                # the diff, or the fixed buffer (bytes) for --stdin-filename
                if not (silent and diff):
                    emit(outcome, output_file if diff else None)
                if diff:
                    raise click.exceptions.Exit(EXIT_FINDINGS if outcome and not exit_zero else EXIT_CLEAN)
        if show_fixes and report.fixed_rules and not silent:
            click.echo(_fixes_listed(report.fixed_rules), err=True, nl=False)
        fixed_something = exit_non_zero_on_fix and report.fixed > 0
        if fix_only:  # what remains is not reported
            raise click.exceptions.Exit(EXIT_FINDINGS if fixed_something and not exit_zero else EXIT_CLEAN)
        # CLI, then environment (both checked above), then the project's config, then concise.
        output_format = chosen_format or report.config.settings.output_format or "concise"
        # With the fixed buffer on stdout (an editor replaces its buffer with it), findings go to stderr.
        buffer_out = stdin is not None and (fix or add_noqa)
        stream = sys.stderr if buffer_out else sys.stdout
        drawn = output_format in TEXT_FORMATS
        color = drawn and use_color(color_choice, stream if output_file is None else None)
        if statistics and output_format not in DOCUMENT_FORMATS:  # the counts instead of the findings
            from fusion_lint.output.statistics import statistics_report

            rendered = statistics_report(report, as_json=output_format in ("json", "json-lines"), quiet=quiet)
            color = False
        else:
            extra: dict[str, Any] = {"color": color, "show_fixes": show_fixes} if drawn else {}
            rendered = FORMATTERS[output_format](
                report, show_source=show_source, quiet=quiet, statistics=statistics, **extra
            )
        if not silent:
            emit(rendered, output_file, color=color, err=buffer_out)
    except click.exceptions.Exit:
        raise
    except (ConfigError, UsageError) as exc:
        raise fail(str(exc)) from None
    except Exception as exc:  # an internal error: one line, traceback only when asked
        if verbose:
            traceback.print_exc()
        raise fail(f"internal error: {type(exc).__name__}: {exc} (run with --verbose for the traceback)") from None
    if (report.diagnostics or fixed_something) and not exit_zero:
        raise click.exceptions.Exit(EXIT_FINDINGS)


def _watch(paths: tuple[str, ...], flags: dict[str, Any]) -> None:
    """``--watch``: the same check now and after every burst of relevant changes."""
    from fusion_lint.check.engine import Options, UsageError, configure_tree, run_root
    from fusion_lint.cli.watch import watch, watched_places

    refused = [name for name in ("stdin_filename", "diff", "show_settings", "show_files") if flags[name]]
    if refused:
        raise fail(f"--watch cannot be combined with --{refused[0].replace('_', '-')}")
    try:
        config_path, _ = _config_values(flags["config_values"])
        config = load_explicit(config_path) if config_path is not None else None
        options = Options(paths=list(paths) or ["."], config=config, isolated=flags["isolated"])
        _, project, _ = configure_tree(options)
        root = run_root(options, project, [Path(p) for p in options.paths])
        configs = [c for c in (config_path, project.path, *project.extends) if c is not None]
    except (ConfigError, UsageError) as exc:
        raise fail(str(exc)) from None
    places, extra = watched_places(options.paths, root, configs)
    clear = sys.stdout.isatty() and flags["output_file"] is None
    try:
        watch(lambda: check.callback(paths, watch=False, **flags), places, extra, clear)  # type: ignore[misc]  # check is a click command: its callback is set
    except click.UsageError as exc:
        raise fail(exc.format_message()) from None


def _environment_format() -> str | None:
    """``FUSION_LINT_OUTPUT_FORMAT``, when set and not empty; a name it does not know is a usage
    error naming the variable."""
    value = os.environ.get(OUTPUT_FORMAT_ENV, "").strip()
    if not value:
        return None
    if value not in OUTPUT_FORMATS:
        raise ConfigError(f"{OUTPUT_FORMAT_ENV}={value!r}: expected one of {', '.join(OUTPUT_FORMATS)}")
    return value


def _config_values(values: tuple[str, ...]) -> tuple[Path | None, dict[str, Any]]:
    """``--config`` values: at most one config file (an existing file, or anything without ``=``),
    and any number of inline TOML overrides (``"follow-calls = 2"``), later ones winning."""
    path: Path | None = None
    overrides: dict[str, Any] = {}
    for value in values:
        if os.path.isfile(value) or "=" not in value:
            if path is not None:
                raise ConfigError(f"--config: one config file at most (got {str(path)!r} and {value!r})")
            path = Path(value)
        else:
            overrides.update(parse_override(value))
    return path, overrides


def _fixes_listed(fixed_rules: dict[str, dict[tuple[str, str], int]]) -> str:
    """``--show-fixes`` after ``--fix``: what was fixed, per file and rule (ruff's listing)."""
    from fusion_lint.base.diagnostics import display_path

    total = sum(sum(counts.values()) for counts in fixed_rules.values())
    lines = [f"Fixed {total} finding{'s' if total != 1 else ''}:"]
    for path in sorted(fixed_rules):
        lines.append(f"- {display_path(path)}:")
        for (code, name), count in sorted(fixed_rules[path].items()):
            lines.append(f"    {count} \u00d7 {code} ({name})")
    return "\n".join(lines) + "\n"


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None, help="Use this config file.")
def clean(paths: tuple[str, ...], config_path: Path | None) -> None:
    """Remove the cache of the project under PATHS (default: here): only the directory fusion-lint
    created and signed; anything else at that place is left untouched."""
    from fusion_lint.check.engine import Options, UsageError, configure_tree, run_root
    from fusion_lint.memo.store import cache_directory, remove_cache

    try:
        config = load_explicit(config_path) if config_path is not None else None
        options = Options(paths=list(paths) or ["."], config=config)
        _, project, settings = configure_tree(options)
        root = run_root(options, project, [Path(p) for p in options.paths])
        try:
            directory = cache_directory(settings.cache_dir, root)
        except ConfigError:  # neither the folder nor its fusion-lint subfolder is ours: nothing to remove
            directory = None
        removed = remove_cache(directory) if directory is not None else False
    except (ConfigError, UsageError, OSError) as exc:
        raise fail(str(exc)) from None
    shown = directory if directory is not None else Path(settings.cache_dir)
    if removed:
        click.echo(f"Removed the cache at {shown}")
    elif removed is None:
        click.echo(f"No cache at {shown}: nothing to remove")
    else:
        click.echo(f"{shown} is not a fusion-lint cache: left untouched")


@main.command()
@click.option("--output-format", type=click.Choice(("text", "json")), default="text", show_default=True)
def version(output_format: str) -> None:
    """Print fusion-lint's version (as -V/--version does)."""
    if output_format == "json":
        click.echo(json.dumps({"version": __version__, "python": platform.python_version()}, indent=2))
    else:
        click.echo(f"fusion-lint {__version__}")


@main.command()
@click.argument("key", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
@click.option("--output-format", type=click.Choice(("text", "json")), default="text", show_default=True)
def rule(key: str | None, show_all: bool, output_format: str) -> None:
    """Show a rule's documentation: what it checks, why, an example and its fix (KEY: code or name)."""
    from fusion_lint.output.docs import UnknownRule, find_rule, render_rule, render_rule_list, rule_json
    from fusion_lint.rules import all_rules

    if show_all and key is not None:
        raise fail("give a rule code or name, or --all, not both")
    try:
        if output_format == "json":
            shown: Any = [rule_json(r) for r in all_rules()] if key is None else rule_json(find_rule(key))
            click.echo(json.dumps(shown, indent=2))
        else:
            click.echo(render_rule_list() if key is None else render_rule(find_rule(key)), nl=False)
    except UnknownRule as exc:
        raise fail(str(exc)) from None


@main.command()
def lsp() -> None:
    """Run the language server on stdio (for editors)."""
    try:  # pygls is imported here only, so that every other command starts fast
        from fusion_lint.lsp.server import serve
    except ImportError as exc:
        raise fail(
            f"the language server needs the [lsp] extra: pip install 'pygls>=2,<3' 'lsprotocol>=2025.0.0' ({exc})"
        ) from None
    code = serve()
    # The stdin reader thread may still block on a pipe the editor keeps open after 'exit':
    # leave without waiting for it (the protocol is done and stdout was closed by the server).
    sys.stderr.flush()
    os._exit(code)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Compare the code with the lockfile instead of writing it: exit 0 in sync, 1 otherwise.",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="With --check: no lockfile yet is exit 0, saying so (the pre-commit hook on a first commit).",
)
@click.option(
    "--lockfile",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="The lockfile (default: fusion-contracts.lock at the project root).",
)
@click.option("--output-format", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes (default: the cores).")
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None, help="Use this config file.")
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks of internal errors.")
def lock(
    paths: tuple[str, ...],
    check_only: bool,
    allow_missing: bool,
    lockfile: str | None,
    output_format: str,
    no_cache: bool,
    jobs: int | None,
    config_path: Path | None,
    verbose: bool,
) -> None:
    """Write (or --check) the contract lockfile of the tools and resources under PATHS (default: the project)."""
    import fusion_lint.lock.lockfile as locking
    from fusion_lint.check.engine import Options, UsageError
    from fusion_lint.config.settings import find_config
    from mcp_fusion.lockfile import LockfileError

    try:
        config = load_explicit(config_path) if config_path is not None else None
        if paths:
            path_list = list(paths)
        else:  # the whole project, wherever in it this runs
            config = config or find_config(Path("."))
            path_list = locking.default_paths(config)
        options = Options(paths=path_list, config=config, jobs=jobs, use_cache=not no_cache)
        static = locking.build_static_lock(options, lockfile)
        if static.skipped:  # named, one line each: a surface nobody checked is never silent
            click.echo(static.skipped_lines(), err=True, nl=False)
        if check_only and allow_missing and not static.lockfile.exists():
            click.echo(
                f"{static.lockfile}: no lockfile yet, nothing to check ({static.tally} would be locked); "
                "run `fusion-lint lock` and commit the file to start reviewing contract changes",
                err=True,
            )
            output, code = ("[]\n" if output_format == "json" else ""), locking.EXIT_IN_SYNC
        else:
            output, code = (locking.check if check_only else locking.write)(static, output_format)
    except (ConfigError, UsageError, LockfileError, locking.LockRefused) as exc:
        raise fail(str(exc)) from None
    except Exception as exc:  # an internal error: one line, traceback only when asked
        if verbose:
            traceback.print_exc()
        raise fail(f"internal error: {type(exc).__name__}: {exc} (run with --verbose for the traceback)") from None
    click.echo(output, nl=False)
    raise click.exceptions.Exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
