"""Which rules run (DESIGN §6): codes, code prefixes (``FL2``), names or ``ALL``, from the config
and the command line, each list checked where it was written."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from .config import ConfigError, LoadedConfig, Settings
from .rules import Rule


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


def select(requested: Selection, config: LoadedConfig, settings: Settings, rules: Sequence[type[Rule]]) -> set[str]:
    """The codes that run: the config's lists, then the command line's (each checked where it was
    written, so an unknown code names its flag or its file)."""
    table = f"{config.path}: [tool.fusion-lint]" if config.path else "configuration"
    Selection(settings.select, settings.ignore, settings.extend_select).resolve(rules, table)
    for pattern, keys in settings.per_file_ignores.items():
        expand_rule_keys(keys, rules, table, f'per-file-ignores."{pattern}"')
    requested.resolve(rules)
    selection = Selection(
        select=requested.select if requested.select is not None else settings.select,
        ignore=[*settings.ignore, *requested.ignore],
        extend_select=[*settings.extend_select, *requested.extend_select],
    )
    return selection.resolve(rules)
