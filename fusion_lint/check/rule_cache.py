"""The rules' findings, cached per checked item (issue 15: cost proportional to the change).

A rule is a pure function of what it checks (a definition, a contract entry, a function) and of
the parts of the resolved project it reaches from there. Each checked item gets a digest of
exactly those inputs, and the findings every active rule made for it are kept under that digest:
an edit re-runs the rules only for the items whose resolved inputs changed.

What an item's digest covers (a key that misses an input would replay a stale finding, so when in
doubt an input is in):

* every item: the linter's code, the project's settings, the active rules, the file's
  ``recovery-min-words`` and the runtime modules;
* a **definition**: its own resolved definition (the definition as settled by the index, the
  content key of its file, its contract with every entry's resolved fields, the handler and every
  function it reaches, each by the content key of its file, its name and, when the index settled
  it, the raises and fail sites it resolved; the wrappers), and, for each entry, the first holder
  and the entry's place in that holder's contract (``entry #2`` in a message). A rule that follows
  the callers of what the handler reaches (``reads_callers``: FL208, through ``function_view``)
  also has every function above those in the call graph, with the definitions they serve;
* an **entry**: the entry, its resolved fields, every definition holding it (a shared entry
  depends on all of them) and the tool vocabulary (FL400/FL401: a renamed tool elsewhere matters);
* a **function**: the function, and every function above it in the call graph (its callers,
  theirs, ...) with the definitions each serves and reaches.

``tests/lint/test_rule_cache.py`` checks the rules read the project through nothing else.

The granularity is the file: a function, an entry, a definition is known by its file's content
key (and what the index settled in it, by value), so an edit of a service module re-runs every
definition reaching a function of it, and an edit of a tool module re-runs that module's items,
the entries its definitions hold and the functions above what they reach, nothing else.

A finding whose rule described a fix is kept with the fix built from its file's text (and that
file's content key: another text is a miss); a rule that raised is never cached. The findings
live in one signed entry of the cache's own directory (``cache_store``), the items of a file and
scope under one digest, bounded to a few such groups per file of the project.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from fusion_lint.base.diagnostics import Fix, Span
from fusion_lint.facts.model import FunctionFacts
from fusion_lint.memo.cache import code_fingerprint
from fusion_lint.memo.store import load_entry, store_entry, user_key
from fusion_lint.project.view import FunctionView, ProjectView, ResolvedDefinition, ResolvedEntry, Vocabulary
from fusion_lint.rules import Finding, Rule

#: Bumped when the layout of a record changes.
STORE_FORMAT = "2"
Digest = bytes
_UNKNOWN = object()  # not computed yet (None: computed, and the item is not cached)
# A stored finding: (span, message, path, subjects' identities or None, whether its rule described
# a fix, the fix built). A group of records carries the digest of the files its fixes edit.
Stored: TypeAlias = tuple[Any, ...]


def _digest(*parts: object) -> Digest:
    # The repr of a tuple of strings, bytes, numbers and None is unambiguous, and built in C.
    return hashlib.blake2b(repr(parts).encode("utf-8", "backslashreplace"), digest_size=16).digest()


def _settled(fact: object, written: object) -> str:
    """What the index settled in a fact of a file (a definition's server or name, a function's
    raises), by value: the fields it does not share with the fact as written (the file's content
    key covers those). Without the fact as written, all of it."""
    if fact is written:
        return ""
    if written is None or type(written) is not type(fact):
        return repr(fact)
    return repr(
        [
            (f.name, getattr(fact, f.name))
            for f in dataclasses.fields(fact)  # type: ignore[arg-type]  # every fact of a file is a dataclass
            if getattr(fact, f.name) is not getattr(written, f.name)
        ]
    )


def vocabulary_digest(vocabulary: Vocabulary) -> Digest:
    return _digest(
        "V",
        *(",".join(sorted(field)) if isinstance(field, frozenset) else field for field in vocabulary.words()),
    )


def identity(definition: ResolvedDefinition) -> tuple[str, int, int, str, str]:
    """How a stored finding names a definition it concerns (unique within a run, or not stored)."""
    span = definition.definition.span
    return (definition.path, span.start, span.end, definition.kind, definition.label)


def _complete(parts: list[object]) -> Digest | None:
    """The digest of ``parts``, or None when one of them is unknown (an item that is not cached)."""
    return None if None in parts else _digest(*parts)  # parts are strings, bytes, numbers: ``in`` is exact


class Inputs:
    """The digests of what each item's rules read, each computed once per run."""

    def __init__(self, project: ProjectView, file_keys: dict[str, str], salt: str):
        self.project, self.file_keys, self.salt = project, file_keys, salt
        # id of the object -> its digest, by kind (the objects live as long as the view: ids are stable)
        self._functions: dict[int, Digest | None] = {}
        self._entries: dict[int, Digest | None] = {}
        self._definitions: dict[int, Digest | None] = {}
        self._upwards: dict[int, Digest | None] = {}
        self._identities: dict[int, str] = {}
        self._vocabulary: Digest | None = None

    def function(self, function: FunctionFacts, path: str) -> Digest | None:
        """A reached function: its file's content key and its name; what the index settled in it
        (raises resolved through re-exports, reasons through constants) by value."""
        known = self._functions.get(id(function), _UNKNOWN)
        if known is _UNKNOWN:
            known = self._functions[id(function)] = self._function(function, path)
        return known  # type: ignore[return-value]  # not _UNKNOWN: computed above if it was  # not _UNKNOWN: computed above if it was

    def _function(self, function: FunctionFacts, path: str) -> Digest | None:
        facts = self.project.files.get(path)
        written = facts.functions.get(function.qualname) if facts is not None else None
        return _complete(
            [
                "F",
                path,
                self.file_keys.get(path),
                function.qualname,
                repr(function.span),
                _settled(function, written),
            ]
        )

    def entry(self, entry: ResolvedEntry) -> Digest | None:
        """The entry as written is its file's; a field's value resolved elsewhere, by value."""
        known = self._entries.get(id(entry), _UNKNOWN)
        if known is _UNKNOWN:
            known = self._entries[id(entry)] = self._entry(entry)
        return known  # type: ignore[return-value]  # not _UNKNOWN: computed above if it was

    def _entry(self, entry: ResolvedEntry) -> Digest | None:
        parts: list[object] = [
            "E",
            entry.path,
            self.file_keys.get(entry.path),
            repr(entry.entry.span),
            len(entry.fields),
        ]
        for written, value in entry.fields:
            parts += [written.name, "=" if value is written.value else repr(value)]
        return _complete(parts)

    def definition(self, resolved: ResolvedDefinition) -> Digest | None:
        """A definition as resolved: itself, its contract, its reach, its wrappers."""
        known = self._definitions.get(id(resolved), _UNKNOWN)
        if known is _UNKNOWN:
            known = self._definitions[id(resolved)] = self._definition(resolved)
        return known  # type: ignore[return-value]  # not _UNKNOWN: computed above if it was

    def identity(self, resolved: ResolvedDefinition) -> str:
        known = self._identities.get(id(resolved))
        if known is None:
            known = self._identities[id(resolved)] = repr(identity(resolved))
        return known

    def _definition(self, resolved: ResolvedDefinition) -> Digest | None:
        contract = resolved.contract
        facts = self.project.files.get(resolved.path)
        span = resolved.definition.span
        written = next((d for d in facts.definitions if d.span == span), None) if facts is not None else None
        parts: list[object] = [
            "D",
            resolved.path,
            self.file_keys.get(resolved.path),
            _settled(resolved.definition, written),
            self.identity(resolved),
            repr(
                (
                    contract.declared,
                    contract.inert,
                    contract.wrong_type,
                    contract.empty_literal,
                    contract.bad_items,
                    contract.unresolved,
                )
            ),
            repr(resolved.wrappers),
            len(contract.entries),
        ]
        parts += [self.entry(entry) for entry in contract.entries]
        parts += ["reach", len(resolved.reach)]
        for reached in resolved.reach:
            parts += [self.function(reached.function, reached.path), reached.depth]
        parts.append(resolved.handler is not None)
        return _complete(parts)

    def upward(self, view: FunctionView) -> Digest | None:
        """A function and everything above it in the call graph: each function with its callers
        (by the name they call it), the definitions it is the handler of and those reaching it."""
        known = self._upwards.get(id(view), _UNKNOWN)
        if known is _UNKNOWN:
            known = self._upwards[id(view)] = self._upward(view)
        return known  # type: ignore[return-value]  # not _UNKNOWN: computed above if it was

    def _upward(self, view: FunctionView) -> Digest | None:
        order: list[FunctionView] = [view]
        seen: set[int] = {id(view)}
        stack = [caller for caller, _ in reversed(view.callers)]  # most functions have none
        while stack:  # every function above, each once (a recursive call graph has cycles)
            current = stack.pop()
            if id(current) not in seen:
                seen.add(id(current))
                order.append(current)
                stack.extend(caller for caller, _ in reversed(current.callers))
        parts: list[object] = ["U"]
        for current in order:
            parts += [self.function(current.function, current.path), len(current.callers)]
            for caller, name in current.callers:
                parts += [self.function(caller.function, caller.path), name]
            parts.append(len(current.handler_of))
            parts += [self.definition(definition) for definition in current.handler_of]
            parts.append(len(current.reached_by))
            for definition, depth in current.reached_by:
                parts += [self.definition(definition), depth]
        return _complete(parts)

    def vocabulary(self) -> Digest:
        if self._vocabulary is None:
            self._vocabulary = vocabulary_digest(self.project.vocabulary)
        return self._vocabulary

    # ----- the keys of the checked items ----------------------------------------------------------

    def definition_key(self, resolved: ResolvedDefinition, view: ProjectView, callers: bool) -> Digest | None:
        own = self.definition(resolved)
        if own is None:
            return None
        parts: list[object] = [self.salt, "definition", own, view.recovery_min_words, view.runtime_modules]
        for entry in resolved.contract.entries:  # ``entry #2``: its place in its first holder's contract
            first = entry.holders[0] if entry.holders else None
            place = next((i for i, held in enumerate(first.contract.entries) if held is entry), 0) if first else -1
            parts += [self.identity(first) if first is not None else "-", place]
        if callers:
            parts.append("callers")
            for reached in resolved.reach:
                function_view = view.function_view(reached.function)
                parts.append(self.upward(function_view) if function_view is not None else "-")
        return _complete(parts)

    def entry_key(self, entry: ResolvedEntry, view: ProjectView) -> Digest | None:
        parts: list[object] = [
            self.salt,
            "entry",
            self.entry(entry),
            view.recovery_min_words,
            view.runtime_modules,
            self.vocabulary(),
            len(entry.holders),
        ]
        parts += [self.definition(holder) for holder in entry.holders]
        return _complete(parts)

    def function_key(self, function: FunctionView, view: ProjectView) -> Digest | None:
        upward = self.upward(function)
        if upward is None:
            return None
        return _digest(self.salt, "function", upward, view.recovery_min_words, view.runtime_modules)


class StoredFix:
    """A fix built when its finding was stored: the builder a replayed finding hands the engine."""

    __slots__ = ("fix",)

    def __init__(self, fix: Fix | None):
        self.fix = fix

    def __call__(self, text: str) -> Fix | None:
        return self.fix


@dataclass
class Plan:
    """The items of a scope (in the order ``check`` visits them) as the cache knows them."""

    tokens: list[tuple[Digest, int] | None]  # where ``RuleMemo.record`` keeps an item's findings (None: not cached)
    found: list[dict[str, list[Finding]] | None]  # what earlier runs found, by rule (None: it must run)
    misses: list[int] = field(default_factory=list)  # the items that must run
    with_findings: dict[str, list[int]] = field(default_factory=dict)  # rule -> replayed items it found in

    def visit(self, code: str) -> list[int]:
        """The items a rule must look at, in order: those that run, and those replaying a finding of it."""
        replayed = self.with_findings.get(code)
        return sorted(self.misses + replayed) if replayed else self.misses


class RuleMemo:
    """The findings of one run's checked items: ``records`` says what earlier runs found for each
    item (None: it must run), ``record`` keeps what a rule found running, ``save`` stores them
    once every rule ran.

    Items are stored by file: one digest of the keys of a file's items of a scope (every item of a
    file has the file's content key among its inputs, so an edit of it re-runs all of them
    anyway), which keeps the entry a few digests per file rather than per item."""

    def __init__(
        self,
        directory: Path,
        project: ProjectView,
        file_keys: dict[str, str],
        text: Callable[[str], str | None],
        salt_parts: Iterable[str],
    ):
        self.directory, self.file_keys, self.text = directory, file_keys, text
        salt = _digest(code_fingerprint(), STORE_FORMAT, *salt_parts).hex()
        self.inputs = Inputs(project, file_keys, salt)
        self.name = f"rules-{hashlib.sha256(f'{code_fingerprint()}|rules|{STORE_FORMAT}'.encode()).hexdigest()}.pickle"
        self.signing_key = user_key()
        loaded = load_entry(directory / self.name, self.signing_key)
        self.stored: dict[Digest, tuple[Any, ...]] = loaded if isinstance(loaded, dict) else {}
        self.by_identity: dict[tuple[str, int, int, str, str], ResolvedDefinition | None] = {}
        for definition in project.definitions:
            found = identity(definition)
            self.by_identity[found] = None if found in self.by_identity else definition  # ambiguous: None
        paths = {d.path for d in project.definitions} | {e.path for e in project.entries}
        self.groups = 8 * len(paths | {f.path for f in project.functions})  # what the entry may hold
        self.recorded: dict[Digest, list[dict[str, list[Finding]]]] = {}
        self.spoiled: set[Digest] = set()  # a rule raised, or a finding cannot be stored
        self.keys: dict[tuple[str, bool], Plan] = {}  # (scope, reads callers) -> its plan

    def plan(self, rule: type[Rule], scope: str, items: Sequence[tuple[Any, ...]]) -> Plan:
        """What earlier runs found for each item, by rule, and where ``record`` keeps what runs.
        One key per item, whatever the rule, but for the definition rules that read callers."""
        callers = scope == "definition" and rule.reads_callers
        slot = (scope, callers)
        if slot in self.keys:
            return self.keys[slot]
        keys: list[Digest | None] = []
        by_file: dict[str, list[int]] = {}
        for index, (item, _, _, path, view) in enumerate(items):
            if scope == "definition":
                keys.append(self.inputs.definition_key(item, view, callers))
            elif scope == "entry":
                keys.append(self.inputs.entry_key(item, view))
            else:
                keys.append(self.inputs.function_key(item, view))
            by_file.setdefault(path, []).append(index)
        plan = Plan([None] * len(items), [None] * len(items))
        for path, indices in by_file.items():
            if any(keys[index] is None for index in indices):
                continue
            group = _digest(scope, callers, path, *(keys[index] for index in indices))
            decoded = self._decode_group(self.stored.get(group), len(indices))
            self.recorded[group] = [{} for _ in indices]
            for position, index in enumerate(indices):
                plan.tokens[index] = (group, position)
                if decoded is not None:
                    plan.found[index] = decoded[position]
        for index, record in enumerate(plan.found):
            if record is None:
                plan.misses.append(index)
            else:
                for code, findings in record.items():
                    if findings:
                        plan.with_findings.setdefault(code, []).append(index)
        self.keys[slot] = plan
        return plan

    def _texts_digest(self, paths: Iterable[str]) -> Digest | None:
        """The content keys of the files some stored fixes were built from."""
        keys = [(path, self.file_keys.get(path)) for path in sorted(set(paths))]
        return _digest(*keys) if all(key is not None for _, key in keys) else None

    def _decode_group(self, stored: tuple[Any, ...] | None, size: int) -> list[dict[str, list[Finding]]] | None:
        if not isinstance(stored, tuple) or len(stored) != 2 or len(stored[1]) != size:
            return None
        fixed_from, records = stored
        decoded: list[dict[str, list[Finding]]] = []
        fixed: list[str] = []
        for record in records:
            findings = self._decode(record, fixed)
            if findings is None:
                return None
            decoded.append(findings)
        if fixed and self._texts_digest(fixed) != fixed_from:
            return None  # a fix was built from another text of its file
        return decoded

    def _decode(self, record: dict[str, list[Stored]], fixed: list[str]) -> dict[str, list[Finding]] | None:
        decoded: dict[str, list[Finding]] = {}
        for code, stored in record.items():
            findings = []
            for span, message, path, subjects, has_fix, fix in stored:
                concerned = None
                if subjects is not None:
                    concerned = [self.by_identity.get(subject) for subject in subjects]
                    if any(subject is None for subject in concerned):
                        return None
                if has_fix:
                    fixed.append(path)
                builder = StoredFix(fix) if has_fix else None
                findings.append(Finding(Span(*span), message, path, builder, concerned))  # type: ignore[arg-type]  # no None left: returned above
            decoded[code] = findings
        return decoded

    def record(self, token: tuple[Digest, int] | None, code: str, findings: Sequence[Finding] | None) -> None:
        """What ``code`` found running on the item (None: it raised)."""
        if token is None:
            return
        group, position = token
        if findings is None:
            self.spoiled.add(group)
        else:
            self.recorded[group][position][code] = list(findings)

    def _encode(self, findings: list[Finding], texts: dict[str, str | None], fixed: list[str]) -> list[Stored] | None:
        stored = []
        for finding in findings:
            subjects = None
            if finding.subjects is not None:
                subjects = tuple(identity(subject) for subject in finding.subjects)
                if any(self.by_identity.get(subject) is None for subject in subjects):
                    return None
            fix: Fix | None = None
            if finding.fix is not None:
                if finding.path not in texts:
                    texts[finding.path] = self.text(finding.path)
                text = texts[finding.path]
                if text is None:
                    return None
                fix = finding.fix(text)
                fixed.append(finding.path)
            s = finding.span
            stored.append(
                (
                    (s.line, s.col, s.end_line, s.end_col, s.start, s.end, s.stmt_line),
                    finding.message,
                    finding.path,
                    subjects,
                    finding.fix is not None,
                    fix,
                )
            )
        return stored

    def save(self) -> None:
        """Keep what ran this run (its fixes built now), and what earlier runs stored, up to a
        few groups per file of the project (a one-file run keeps the whole tree's findings)."""
        texts: dict[str, str | None] = {}
        fresh: dict[Digest, tuple[Any, ...]] = {}
        for group, records in self.recorded.items():
            if group in self.spoiled or group in self.stored:
                continue  # a rule raised on one of its items, or it was replayed
            fixed: list[str] = []
            encoded = [
                {code: self._encode(found, texts, fixed) for code, found in by_code.items() if found}
                for by_code in records
            ]
            fixed_from = self._texts_digest(fixed) if fixed else None
            if all(stored is not None for record in encoded for stored in record.values()) and (
                fixed_from or not fixed
            ):
                fresh[group] = (fixed_from, tuple(encoded))
        if not fresh:
            return
        kept = dict(fresh)
        for group, stored in self.stored.items():
            if len(kept) >= max(self.groups, len(fresh)):
                break
            kept.setdefault(group, stored)
        store_entry(self.directory, self.name, kept, self.signing_key)
