"""Which rules run (DESIGN §6, §12.4): codes, code prefixes (``FL2``), names or ``ALL``, from each
file's config and from the command line, each list checked where it was written.

Ruff's precedence: the config is one layer and the command line another, applied in that order.
Within a layer the most specific key decides a rule (a code or a name beats a prefix, a longer
prefix beats a shorter one, ``ALL`` is the least specific; on a tie, ``ignore`` wins). A layer with
a ``select`` replaces everything before it — the command line's ``--select FL300`` reports FL300
even where the config ignores it —, a layer without one adds its ``extend-select`` to the rules
before it and takes its ``ignore`` away.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fusion_lint.config.settings import ConfigError, LoadedConfig, Settings
from fusion_lint.config.tree import PerFileIgnore, Scope, table_of
from fusion_lint.rules import Rule

#: How specific a rule code or a rule name is (a prefix: its length; ``ALL``: 0).
EXACT = 100


@dataclass
class Selection:
    """Which rules run: codes, code prefixes (``FL2``) or names, as in ruff."""

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)

    def apply(self, before: set[str], rules: Sequence[type[Rule]], source: str | None = None) -> set[str]:
        """The enabled codes after this layer, given those ``before`` it. ``source`` names where
        the lists come from in an error (a config file's table); None means the command-line flags."""
        chosen: dict[str, int] = {}
        dropped: dict[str, int] = {}
        for option, keys, into in (
            ("select", self.select or [], chosen),
            ("extend-select", self.extend_select, chosen),
            ("ignore", self.ignore, dropped),
        ):
            for code, specificity in _matches(keys, rules, source, option):
                into[code] = max(into.get(code, -1), specificity)
        enabled = set() if self.select is not None else set(before)
        for code in set(chosen) | set(dropped):
            if chosen.get(code, -1) > dropped.get(code, -1):
                enabled.add(code)
            else:
                enabled.discard(code)
        return enabled

    def resolve(self, rules: Sequence[type[Rule]], source: str | None = None) -> set[str]:
        """The enabled codes of this layer alone, on top of the default rules."""
        return self.apply(default_codes(rules), rules, source)


def default_codes(rules: Sequence[type[Rule]]) -> set[str]:
    return {r.code for r in rules if r.default_enabled}


def _matches(
    keys: Iterable[str], rules: Sequence[type[Rule]], source: str | None, option: str
) -> Iterable[tuple[str, int]]:
    """(code, specificity) of every rule each key names; an unknown key is a ``ConfigError``
    naming the flag, or the file and key, it came from."""
    for key in keys:
        key = key.strip()
        if not key:
            continue
        if key.upper() == "ALL":
            yield from ((r.code, 0) for r in rules)
            continue
        matched = [
            (r.code, EXACT if r.code == key.upper() or r.name == key else len(key))
            for r in rules
            if r.code.startswith(key.upper()) or r.name == key
        ]
        if not matched:
            where = f"--{option}" if source is None else f"{source} key '{option}'"
            raise ConfigError(
                f"{where}: unknown rule code, prefix or name '{key}' (expected e.g. FL202, FL2 or "
                "error-contract-unthrown; see fusion-lint rule --all)"
            )
        yield from matched


def expand_rule_keys(keys: Iterable[str], rules: Sequence[type[Rule]], source: str | None, option: str) -> set[str]:
    """Codes named by rule codes, code prefixes (``FL2``), rule names or ``ALL``."""
    return {code for code, _ in _matches(keys, rules, source, option)}


class RuleSelector:
    """The rules each config enables, with the command line's layer on top (checked once, so an
    unknown code names its flag), and the codes each ``per-file-ignores`` entry names."""

    def __init__(self, requested: Selection, rules: Sequence[type[Rule]]):
        requested.resolve(rules)  # an unknown key in a flag is an error even where no file is linted
        self.requested, self.rules = requested, rules
        self._enabled: dict[object, frozenset[str]] = {}
        self._ignored: dict[PerFileIgnore, frozenset[str]] = {}

    def enabled(self, config: LoadedConfig, settings: Settings | None = None) -> frozenset[str]:
        """The codes that run on the files ``config`` governs (``settings``: instead of its own)."""
        settings = settings or config.settings
        key = (config.path, settings.model_dump_json())
        if key not in self._enabled:
            table = table_of(config)
            layer = Selection(settings.select, list(settings.ignore), list(settings.extend_select))
            from_config = layer.apply(default_codes(self.rules), self.rules, table)
            self._enabled[key] = frozenset(self.requested.apply(from_config, self.rules))
        return self._enabled[key]

    def ignored(self, entry: PerFileIgnore) -> frozenset[str]:
        if entry not in self._ignored:
            self._ignored[entry] = frozenset(expand_rule_keys(entry.keys, self.rules, entry.source, entry.option))
        return self._ignored[entry]

    def check(self, scope: Scope) -> frozenset[str]:
        """The codes enabled in ``scope``, every list of its config checked (its per-file-ignores too)."""
        for entry in scope.per_file_ignores:
            self.ignored(entry)
        return self.enabled(scope.config)


def select(requested: Selection, config: LoadedConfig, settings: Settings, rules: Sequence[type[Rule]]) -> set[str]:
    """The codes that run under one config: its lists, then the command line's."""
    return set(RuleSelector(requested, rules).enabled(config, settings))
