"""``fusion-lint lock``: the contract lockfile, built from the linter's static model (DESIGN §8).

The document, its bytes and the BREAKING/RISKY/SAFE classification are ``mcp_fusion.lockfile``'s,
shared with the runtime (a server started with ``contract_lock=`` diffs its live definitions
against the same file). This module only turns the project the linter sees into ``LockRecord``s:
the same discovery, per-file analysis and cross-file contract resolution as ``fusion-lint check``,
so whatever the linter resolves (shared constants, spreads, imports) the lock resolves too.

Keys are tool names and resource URIs, never paths: moving or renaming files changes nothing.

A definition the lock cannot describe faithfully (a contract that is not static, a contract the
runtime would reject, a file that does not parse, one name defined twice with two contracts) makes
the command refuse (exit 2) and name every such place. A lockfile that silently skipped them would
later report them as removed or added, and a reviewer would trust a surface nobody actually checked.

A tool whose *name* is computed has no key to lock it under: it is skipped, not silently — the
command says so, one line each (``StaticLock.skipped``), and locks the rest — so a server with a
computed name can adopt the lockfile before every name is a literal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fusion_lint.base.diagnostics import Span
from fusion_lint.check.engine import Analysis, Options, analyse, configure, never_costed_by_the_cache
from fusion_lint.config.settings import LoadedConfig, find_config
from fusion_lint.facts.model import Value
from fusion_lint.output.common import display_path
from fusion_lint.project.view import ResolvedContract, ResolvedDefinition, ResolvedEntry
from mcp_fusion import (
    CONTRACT_FIELDS,
    REQUIRED_FIELDS,
    SEVERITIES,
    THROWN_BY_VALUES,
    JsonRpcErrorCode,
    coerce_code,
    is_valid_code,
)
from mcp_fusion import code_name as name_of_code
from mcp_fusion import code_value as value_of_code
from mcp_fusion.errors import CODE_EXPECTATION
from mcp_fusion.lockfile import (
    IMPACTS,
    LOCKFILE_NAME,
    Delta,
    LockEntry,
    LockfileError,
    LockRecord,
    build_lock,
    diff_locks,
    dumps_lock,
    load_lock,
    write_lock,
)

EXIT_IN_SYNC, EXIT_OUT_OF_SYNC = 0, 1
#: Refusals listed before "... and N more".
MAX_SHOWN = 50


@dataclass(frozen=True)
class Unlockable:
    """A place the lock cannot describe, and why (the user fixes it, or narrows the paths)."""

    path: str
    line: int
    what: str  # ``tool 'get_invoice'``, ``tool 'get_invoice': entry 'no_match'``; "" for a whole file
    why: str

    def describe(self) -> str:
        what = f"{self.what}: " if self.what else ""
        return f"{display_path(self.path)}:{self.line}: {what}{self.why}"


class LockRefused(Exception):
    """Some definitions cannot be locked statically; nothing was written or checked (exit 2)."""

    def __init__(self, problems: Sequence[Unlockable]):
        self.problems = list(problems)
        super().__init__(self.render())

    def render(self) -> str:
        count = len(self.problems)
        lines = [f"cannot lock the error contracts: {count} place{'' if count == 1 else 's'} cannot be read statically"]
        lines += [f"  {problem.describe()}" for problem in self.problems[:MAX_SHOWN]]
        if count > MAX_SHOWN:  # a wrong tree (say, a directory of many servers) must not flood the terminal
            lines.append(f"  ... and {count - MAX_SHOWN} more")
        lines.append(
            "  Write each contract as a literal list (or a module-level constant of the project) and fix what "
            "`fusion-lint check` reports, or leave those files out (extend-exclude, or narrower paths)."
        )
        return "\n".join(lines)


@dataclass
class StaticLock:
    """The lock document of the linted project and where its lockfile lives."""

    document: dict[str, Any]
    lockfile: Path
    skipped: list[Unlockable] = field(default_factory=list)  # definitions with no literal name: not locked

    def skipped_lines(self) -> str:
        """One line each for what was left out (the command prints them on stderr)."""
        return "".join(
            f"{display_path(p.path)}:{p.line}: skipped {p.what}: {p.why}; it is not in the lockfile\n"
            for p in self.skipped
        )

    @property
    def tally(self) -> str:
        counts = _counts(self.document)
        return ", ".join(_plural(counts[key], key[:-1]) for key in ("tools", "resources", "reasons"))


# -- where the lockfile lives and what it covers ------------------------------------------------


def lockfile_location(config: LoadedConfig, paths: Sequence[str], override: str | None) -> Path:
    """``--lockfile``, else beside the config file, else in the first path if a directory, else cwd."""
    if override is not None:
        return Path(override)
    if config.root is not None:
        return config.root / LOCKFILE_NAME
    if paths and Path(paths[0]).is_dir():
        return Path(paths[0]) / LOCKFILE_NAME
    return Path(LOCKFILE_NAME)


def default_paths(config: LoadedConfig) -> list[str]:
    """Without paths the lock covers the whole project (the config's directory) wherever it is run
    from: a lock of one sub-directory would report every tool outside it as removed."""
    return [str(config.root)] if config.root is not None else ["."]


# -- records from the project model ---------------------------------------------------------------


def build_static_lock(options: Options, lockfile: str | None = None) -> StaticLock:
    """Analyse the project like ``fusion-lint check`` and lock every tool and resource in ``options.paths``.

    Raises ``LockRefused`` naming every definition that cannot be locked; ``UsageError`` and
    ``ConfigError`` as ``lint`` does.
    """
    config, settings = configure(options)
    records, problems, skipped = never_costed_by_the_cache(lambda o: _records(analyse(o, config, settings)), options)
    if problems:
        raise LockRefused(problems)
    return StaticLock(build_lock(records), lockfile_location(config, options.paths, lockfile), skipped)


@dataclass
class ProjectContracts:
    """Every contract the linter reads in some paths, without refusing: what it cannot read is listed."""

    document: dict[str, Any]  # the lock document of the definitions that could be read
    problems: list[Unlockable]  # their places are left out of ``document``
    paths: list[str]


def project_contracts(paths: Sequence[str] = (), *, start: str = ".", use_cache: bool = True) -> ProjectContracts:
    """The declared reasons of every tool and resource in ``paths``, as ``fusion-lint lock`` reads them.

    Without ``paths``, the project found from ``start`` (the directory of its fusion-lint config, else
    ``start``), as ``fusion-lint lock`` does. Contract coverage (``pytest --contract-coverage``) counts
    these reasons; a definition that cannot be read statically is in ``problems`` instead of refusing
    the whole project. ``UsageError``/``ConfigError`` as ``fusion-lint check``.
    """
    chosen = list(paths) or default_paths(find_config(Path(start)))
    options = Options(paths=chosen, use_cache=use_cache)
    config, settings = configure(options)
    records, problems, skipped = never_costed_by_the_cache(lambda o: _records(analyse(o, config, settings)), options)
    return ProjectContracts(build_lock(records), sorted(problems + skipped, key=_place), chosen)


def _place(problem: Unlockable) -> tuple[str, int, str, str]:
    return (problem.path, problem.line, problem.what, problem.why)


def _records(analysis: Analysis) -> tuple[list[LockRecord], list[Unlockable], list[Unlockable]]:
    """The lock record of every definition reported on, the places that cannot be locked, and the
    definitions left out because their name is computed (nothing to key them by)."""
    problems = _unreadable_files(analysis)
    skipped: list[Unlockable] = []
    found: dict[tuple[str, str], list[tuple[LockRecord, str, int]]] = {}
    for resolved in analysis.resolved().definitions:
        path = resolved.path
        if path not in analysis.report_set or resolved.kind == "prompt":
            continue
        if resolved.definition.name is None:
            line = resolved.definition.name_span.line
            skipped.append(Unlockable(path, line, resolved.label, "its name is computed, so it has no key to lock"))
            continue
        record = _record_for(resolved)
        if isinstance(record, LockRecord):
            found.setdefault((record.kind, record.name), []).append((record, path, resolved.definition.span.line))
        else:
            problems.extend(record)
    records = []
    for (kind, name), places in sorted(found.items()):
        if _disagree([record for record, _, _ in places]):  # no winner: it would depend on the paths
            where = ", ".join(f"{display_path(path)}:{line}" for _, path, line in sorted(places, key=lambda p: p[1:]))
            why = f"defined {len(places)} times with different contracts ({where}); lock one server at a time"
            problems += [Unlockable(path, line, f"{kind} '{name}'", why) for _, path, line in places]
        else:
            records.append(places[0][0])
    return records, sorted(set(problems), key=_place), sorted(set(skipped), key=_place)


def _disagree(records: Sequence[LockRecord]) -> bool:
    """Whether copies of one definition (the same name in several files) would lock differently."""
    return len(records) > 1 and len({dumps_lock(build_lock([record])) for record in records}) > 1


def _unreadable_files(analysis: Analysis) -> list[Unlockable]:
    """Reported files that mention the runtime but could not be analysed: their definitions are unknown."""
    unseen = "its definitions cannot be read"
    problems = [
        Unlockable(result.path, result.problem.line, "", f"{result.problem.code} {result.problem.message}; {unseen}")
        for result in analysis.results
        if result.problem is not None and result.path in analysis.report_set
    ]
    problems += [Unlockable(path, 1, "", f"{why}; {unseen}") for path, why in analysis.walk_problems]
    return problems


def _record_for(resolved: ResolvedDefinition) -> LockRecord | list[Unlockable]:
    definition, path, label = resolved.definition, resolved.path, resolved.label
    if definition.name is None:
        return [Unlockable(path, definition.name_span.line, label, "its name is not a literal string")]
    contract = resolved.contract
    problems = _contract_problems(contract, label)
    entries: list[LockEntry] = []
    for entry in contract.entries:
        locked = _entry_for(entry, f"{label}: {_entry_label(entry, contract)}")
        if isinstance(locked, Unlockable):
            problems.append(locked)
        else:
            entries.append(locked)
    if problems:
        return problems
    return LockRecord(kind=definition.kind, name=definition.name, entries=tuple(entries))  # type: ignore[arg-type]  # a tool or a resource: the caller skips prompts


def _contract_problems(contract: ResolvedContract, label: str) -> list[Unlockable]:
    problems = [
        Unlockable(where, span.line, label, f"{what} cannot be resolved statically")
        for what, span, where in contract.unresolved
    ]
    if contract.wrong_type is not None:
        bad, where = contract.wrong_type
        # ``errors=None`` is how the runtime reads "no contract" (FL100 still asks to drop it).
        if bad.description != "None":
            problems.append(Unlockable(where, bad.span.line, label, f"errors= is {bad.description}, not a list"))
    problems += [
        Unlockable(where, item.span.line, label, f"a contract entry is {item.description}")
        for item, where in contract.bad_items
    ]
    return problems


def _entry_label(entry: ResolvedEntry, contract: ResolvedContract) -> str:
    reason = entry.entry.get("reason")
    if reason is not None and reason.value.kind == "str" and reason.value.value:
        return f"entry '{reason.value.value}'"
    index = next((i for i, e in enumerate(contract.entries) if e is entry), 0)
    return f"entry #{index + 1}"


def _entry_for(resolved: ResolvedEntry, label: str) -> LockEntry | Unlockable:
    """The entry as the runtime would read it, or why it cannot be read (or would not load)."""
    entry, path = resolved.entry, resolved.path

    def refuse(why: str, span: Span = entry.span) -> Unlockable:
        return Unlockable(path, span.line, label, why)

    if entry.opaque:
        return refuse(
            f"fields passed as {', '.join(entry.opaque)} cannot be read statically", entry.opaque_span or entry.span
        )
    values = {written.name: value for written, value in resolved.fields}
    unknown = sorted(set(values) - set(CONTRACT_FIELDS))
    if unknown:
        return refuse(f"unknown field {', '.join(repr(u) for u in unknown)} (the runtime rejects it)")
    missing = [name for name in REQUIRED_FIELDS if name not in values]
    if missing:
        return refuse(f"missing {', '.join(repr(m) for m in missing)} (the runtime rejects it)")
    for name, value in values.items():
        if value.kind in ("ref", "expr", "fstring"):
            return refuse(f"{name} is {_shown(value)}, which cannot be resolved statically", value.span)

    reason, code, when, recovery = (values[name] for name in ("reason", "code", "when", "recovery"))
    if reason.kind != "str" or not reason.value:
        return refuse(f"reason is {_shown(reason)}, not a non-empty string", reason.span)
    written = JsonRpcErrorCode.__members__.get(str(code.value)) if code.kind == "code" else code.value
    if code.kind not in ("code", "int", "str") or not is_valid_code(written):
        return refuse(f"code is {_shown(code)}, which is no error code: use {CODE_EXPECTATION}", code.span)
    locked_code = coerce_code(written)  # closed-then-open (DESIGN §3.1): the name, and the number it mirrors as
    code_name, code_value = name_of_code(locked_code), value_of_code(locked_code)
    for name, text in (("when", when), ("recovery", recovery)):
        if text.kind != "str":
            return refuse(f"{name} is {_shown(text)}, not a string", text.span)
    optional: dict[str, Any] = {}
    for name, kind, allowed in (
        ("retryable", "bool", None),
        ("severity", "str", SEVERITIES),
        ("thrown_by", "str", THROWN_BY_VALUES),
    ):
        found = values.get(name)
        if found is None or found.kind == "none":
            optional[name] = None
        elif found.kind == kind and (allowed is None or found.value in allowed):
            optional[name] = found.value
        else:
            expected = "True, False or None" if allowed is None else " or ".join(repr(a) for a in allowed)
            return refuse(f"{name} is {_shown(found)}; expected {expected}", found.span)
    return LockEntry(
        reason=str(reason.value),
        code=code_name,
        code_value=code_value,
        when=str(when.value),
        recovery=str(recovery.value),
        retryable=optional["retryable"],
        severity=optional["severity"],
        thrown_by=optional["thrown_by"],
    )


def _shown(value: Value) -> str:
    if value.kind in ("str", "int", "bool"):
        return repr(value.value)
    if value.kind == "ref":
        return f"'{value.value}'"
    if value.kind == "code":
        return f"JsonRpcErrorCode.{value.value}"
    if value.kind == "none":
        return "None"
    if value.kind == "fstring":
        return "an f-string"
    return str(value.value)


# -- the two modes ------------------------------------------------------------------------------


def write(static: StaticLock, output_format: str) -> tuple[str, int]:
    """Write the lockfile (untouched when its bytes would not change); return the report and exit code."""
    shown = display_path(str(static.lockfile))
    try:
        changed = write_lock(static.lockfile, static.document)
    except OSError as exc:
        raise LockfileError(f"{shown}: cannot write the lockfile: {exc.strerror or exc}") from None
    if output_format == "json":
        payload = {"lockfile": shown, "changed": changed, **_counts(static.document)}
        return json.dumps(payload, indent=2) + "\n", EXIT_IN_SYNC
    verb = "Wrote" if changed else "Unchanged"
    return f"{verb} {shown}: {static.tally}.\n", EXIT_IN_SYNC


def check(static: StaticLock, output_format: str) -> tuple[str, int]:
    """Compare the code with the lockfile (``LockfileError`` when it is missing or unreadable)."""
    locked = load_lock(display_path(str(static.lockfile)))  # its errors name the file as the user sees it
    deltas = diff_locks(locked, static.document)
    exit_code = EXIT_OUT_OF_SYNC if deltas else EXIT_IN_SYNC
    if output_format == "json":
        return json.dumps([delta.to_dict() for delta in deltas], indent=2) + "\n", exit_code
    shown = display_path(str(static.lockfile))
    if not deltas:
        return f"{shown} is in sync with the code: {static.tally}.\n", exit_code
    lines = [delta.describe() for delta in deltas]
    lines.append(f"{shown} is out of date: {_delta_summary(deltas)}. Review them, then run `fusion-lint lock`.")
    return "\n".join(lines) + "\n", exit_code


def _delta_summary(deltas: Sequence[Delta]) -> str:
    counts = {impact: sum(1 for d in deltas if d.severity == impact) for impact in IMPACTS}
    parts = [f"{count} {impact.lower()}" for impact, count in counts.items() if count]
    return f"{_plural(len(deltas), 'change')} ({', '.join(parts)})"


def _counts(document: dict[str, Any]) -> dict[str, int]:
    tools, resources = document["tools"], document["resources"]
    reasons = sum(len(body["errors"]) for section in (tools, resources) for body in section.values())
    return {"tools": len(tools), "resources": len(resources), "reasons": reasons}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


__all__ = [
    "LockRefused",
    "ProjectContracts",
    "StaticLock",
    "Unlockable",
    "build_static_lock",
    "check",
    "default_paths",
    "lockfile_location",
    "project_contracts",
    "write",
]
