"""``--show-settings`` and ``--show-files`` (DESIGN §12.4): what a run would use and check, without
running a rule.

``--show-settings`` prints, for the first path (a file; a folder: the files directly in it), the
settings that govern it and the config file they come from — its own per-file settings and the
rules they enable with the command line's flags, then the project-wide settings of the run and
their config file — as readable text (``key = value``, ruff's habit) or, with ``--output-format
json``, one JSON object.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fusion_lint.base.diagnostics import display_path
from fusion_lint.check.engine import Options, configure_tree, discover, run_root
from fusion_lint.check.selection import RuleSelector
from fusion_lint.rules import all_rules

#: The keys whose value is read from each file's closest config, and those read from the project's.
PER_FILE_KEYS = (
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "recovery-min-words",
)
PROJECT_KEYS = ("runtime-modules", "follow-calls", "cache-dir", "respect-gitignore", "output-format")


def files_to_check(options: Options) -> str:
    """The files a run over ``options.paths`` reports on, one per line, sorted (as paths are shown)."""
    tree, config, settings = configure_tree(options)
    _, _, _, reported = discover(options, config, settings, None, tree)
    return "".join(f"{display_path(path)}\n" for path in sorted(reported.files))


def settings_of(options: Options) -> dict[str, Any]:
    """What governs the first path: its config and settings, the project's config and settings."""
    tree, config, settings = configure_tree(options)
    paths = [Path(p) for p in options.paths]
    target = Path(os.path.abspath(options.stdin[0] if options.stdin else options.paths[0]))
    root = run_root(options, config, paths)
    scope = tree.scope(target if target.is_dir() else target.parent, root)
    selector = RuleSelector(options.selection, all_rules())
    enabled = selector.check(scope)
    dumped = scope.settings.model_dump(by_alias=True)
    ignored = sorted(
        {
            code
            for entry in scope.per_file_ignores
            if entry.glob.matches(str(target))
            for code in selector.ignored(entry)
        }
    )
    respect = options.flags.respect_gitignore
    project = {key: settings.model_dump(by_alias=True)[key] for key in PROJECT_KEYS}
    if respect is not None:
        project["respect-gitignore"] = respect
    flags = options.flags
    return {
        "file": str(target),
        "settings_path": str(scope.config.path) if scope.config.path else None,
        "settings_extends": [str(base) for base in scope.config.extends],  # its ``extend`` chain
        "settings": {key: dumped[key] for key in PER_FILE_KEYS},
        "command_line": {
            "select": options.selection.select,
            "ignore": options.selection.ignore,
            "extend-select": options.selection.extend_select,
            "exclude": list(flags.exclude) if flags.exclude is not None else None,
            "extend-exclude": list(flags.extend_exclude),
            "per-file-ignores": [f"{p}:{','.join(k)}" for p, k in flags.per_file_ignores]
            if flags.per_file_ignores is not None
            else None,
            "extend-per-file-ignores": [f"{p}:{','.join(k)}" for p, k in flags.extend_per_file_ignores],
        },
        "enabled": sorted(enabled),
        "ignored_here": ignored,  # what a per-file-ignores entry matching this file turns off
        "project": {"settings_path": str(config.path) if config.path else None, "root": str(root), **project},
    }


def show_settings(options: Options, as_json: bool) -> str:
    shown = settings_of(options)
    if as_json:
        return json.dumps(shown, indent=2) + "\n"
    lines = [
        f"Resolved settings for: {shown['file']}",
        f"Settings path: {shown['settings_path'] or '(none: the defaults)'}",
        *(f"Extends: {base}" for base in shown["settings_extends"]),
        "",
        "# Per file (from the settings path)",
        *(f"{key} = {_toml(value)}" for key, value in shown["settings"].items()),
        "",
        "# From the command line (beating the config)",
        *(f"{key} = {_toml(value)}" for key, value in shown["command_line"].items() if value not in (None, [])),
        "",
        "# The rules that run on this file",
        f"enabled = {_toml(shown['enabled'])}",
        f"ignored-here = {_toml(shown['ignored_here'])}",
        "",
        f"# Project-wide (from {shown['project']['settings_path'] or 'the defaults'})",
        *(f"{key} = {_toml(value)}" for key, value in shown["project"].items() if key != "settings_path"),
    ]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if value is None:  # TOML has no null: a key left unset (``select``: the default rules)
        return "(not set: the default)"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }" if value else "{}"
    return json.dumps(value)
