"""The command line (DESIGN §6, §12.4). Exit codes: 0 clean; 1 findings (or, with
``--exit-non-zero-on-fix``, something was fixed); 2 a usage, config or internal error."""

from __future__ import annotations

import contextlib
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
from fusion_lint.config.settings import ConfigError, load_explicit

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
OUTPUT_FORMATS = ("text", "json", "sarif", "github", "junit")


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
            args = ["check", *args]
        return super().parse_args(ctx, args)


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
    """The report on standard output, or only in ``--output-file`` (that file and nothing else is
    written: a missing folder is an error, never created)."""
    if output_file is None:
        click.echo(output, nl=False, color=color, err=err)
        return
    try:
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
@click.option("--extend-select", multiple=True, help="Rule codes, prefixes or names to enable in addition.")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="text", show_default=True)
@click.option(
    "--output-file",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to this file instead of standard output.",
)
@click.option("--statistics", is_flag=True, help="Count the findings per rule ([*]: --fix can fix some).")
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
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Use this config file for every file (no other is read).",
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
def check(paths: tuple[str, ...], **flags: Any) -> None:
    """Lint files and directories (default: the current directory)."""
    if flags["silent"]:  # nothing on stderr either (a fixed buffer for --stdin-filename still goes out)
        with contextlib.redirect_stderr(io.StringIO()):
            _check(paths, **flags)
    else:
        _check(paths, **flags)


def _check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    output_format: str,
    output_file: Path | None,
    statistics: bool,
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
    config_path: Path | None,
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
    from fusion_lint.check.engine import Options, Selection, UsageError, lint
    from fusion_lint.config.tree import FlagSettings
    from fusion_lint.output import FORMATTERS

    try:
        stdin = None
        path_list = list(paths) or ["."]
        if stdin_filename is not None:
            if paths and list(paths) != ["-"]:
                raise UsageError("--stdin-filename reads standard input; pass '-' or no path")
            stdin = (stdin_filename, b"" if show_settings or show_files else sys.stdin.buffer.read())
            path_list = [stdin_filename]
        elif "-" in paths:
            raise UsageError("reading standard input needs --stdin-filename NAME")
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
                select=_codes(select) or None, ignore=_codes(ignore), extend_select=_codes(extend_select)
            ),
            jobs=jobs,
            use_cache=not no_cache,
            stdin=stdin,
            report_unused_suppressions=report_unused_suppressions,
        )
        if show_settings or show_files:
            from fusion_lint.output.show import files_to_check
            from fusion_lint.output.show import show_settings as settings_shown

            shown = settings_shown(options, output_format == "json") if show_settings else files_to_check(options)
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
        fixed_something = exit_non_zero_on_fix and report.fixed > 0
        if fix_only:  # what remains is not reported
            raise click.exceptions.Exit(EXIT_FINDINGS if fixed_something and not exit_zero else EXIT_CLEAN)
        formatter = FORMATTERS[output_format]
        # With the fixed buffer on stdout (an editor replaces its buffer with it), findings go to stderr.
        buffer_out = stdin is not None and (fix or add_noqa)
        stream = sys.stderr if buffer_out else sys.stdout
        color = output_format == "text" and use_color(color_choice, stream if output_file is None else None)
        extra = {"color": color} if output_format == "text" else {}
        if not silent:
            emit(
                formatter(report, show_source=show_source, quiet=quiet, statistics=statistics, **extra),
                output_file,
                color=color,
                err=buffer_out,
            )
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
