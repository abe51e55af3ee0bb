"""The contract lockfile (DESIGN §8): one shared implementation for the runtime and the linter.

``fusion-lint lock`` builds records statically, the runtime from live definitions; both go through
:func:`build_lock`, :func:`dumps_lock`/:func:`load_lock` and :func:`diff_locks`, so a delta means the
same thing in CI and in a running server. Everything here takes and returns plain data (dicts,
dataclasses, strings): no runtime objects, no SDK.

The document (keys sorted, two-space indent, trailing newline; rewriting it gives identical bytes)::

    {
      "format": "fusion-contracts-lock",
      "resources": {},
      "tools": {
        "fetch_articles": {
          "errors": {
            "no_match": {
              "code": "NOT_FOUND",
              "code_value": -32001,
              "recovery_sha256": "…",
              "retryable": null,
              "severity": null,
              "thrown_by": null,
              "when_sha256": "…"
            }
          }
        }
      },
      "version": 1
    }
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import CANONICAL_CODES, JsonRpcErrorCode
from .errors import code_name as name_of_code
from .errors import code_value as value_of_code

LOCKFILE_NAME = "fusion-contracts.lock"
LOCK_FORMAT = "fusion-contracts-lock"
LOCK_VERSION = 1

DefinitionKind = Literal["tool", "resource"]
#: Section of the document holding each definition kind.
SECTIONS: Mapping[DefinitionKind, str] = {"tool": "tools", "resource": "resources"}

Impact = Literal["BREAKING", "RISKY", "SAFE"]
IMPACTS: tuple[str, ...] = ("BREAKING", "RISKY", "SAFE")

_ENTRY_KEYS = ("code", "code_value", "recovery_sha256", "retryable", "severity", "thrown_by", "when_sha256")


class LockfileError(ValueError):
    """A lockfile that cannot be read: missing, not JSON, or not the expected shape."""


# -- records ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LockEntry:
    """One declared reason, as the lockfile records it."""

    reason: str
    code: str | None
    code_value: int | None
    when: str | None = None
    recovery: str | None = None
    retryable: bool | None = None
    severity: str | None = None
    thrown_by: str | None = None


@dataclass(frozen=True)
class LockRecord:
    """One tool or resource and its declared entries (empty when it declares no contract)."""

    kind: DefinitionKind
    name: str
    entries: tuple[LockEntry, ...] = field(default=())


def normalize_code(code: Any, code_value: Any = None) -> tuple[str | None, int | None]:
    """``(name, value)`` of a code given as a member, its int value or its name (canonical and custom too)."""
    if isinstance(code, JsonRpcErrorCode):
        return code.name, int(code)
    if isinstance(code, bool):
        return None, None
    if isinstance(code, int):
        try:
            return JsonRpcErrorCode(code).name, code
        except ValueError:
            return None, code
    if isinstance(code, str):
        member = JsonRpcErrorCode.__members__.get(code)
        if member is not None:
            return member.name, int(member)
        if isinstance(code_value, int) and not isinstance(code_value, bool):
            return code, code_value
        mirror = CANONICAL_CODES.get(code)
        return code, int(mirror) if mirror is not None else None
    if isinstance(code_value, int) and not isinstance(code_value, bool):
        return normalize_code(code_value)
    return None, None


def coerce_record(record: LockRecord | Mapping[str, Any]) -> LockRecord:
    """Accept a ``LockRecord`` or a plain dict ``{"kind", "name", "entries": [{...}]}``."""
    if isinstance(record, LockRecord):
        return record
    if not isinstance(record, Mapping):
        raise TypeError(f"a lock record must be a LockRecord or a dict, got {type(record).__name__}")
    kind = record.get("kind")
    if kind not in SECTIONS:
        raise ValueError(f"lock record kind must be 'tool' or 'resource', got {kind!r}")
    name = record.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"lock record name must be a non-empty string, got {name!r}")
    raw_entries = record.get("entries", record.get("errors")) or ()
    return LockRecord(kind=kind, name=name, entries=tuple(_coerce_entry(entry) for entry in raw_entries))  # type: ignore[arg-type]  # in SECTIONS: "tool" or "resource"


def _coerce_entry(entry: LockEntry | Mapping[str, Any]) -> LockEntry:
    if isinstance(entry, LockEntry):
        return entry
    if not isinstance(entry, Mapping):
        raise TypeError(f"a lock entry must be a LockEntry or a dict, got {type(entry).__name__}")
    code, code_value = normalize_code(entry.get("code"), entry.get("code_value"))
    return LockEntry(
        reason=str(entry.get("reason")),
        code=code,
        code_value=code_value,
        when=entry.get("when"),
        recovery=entry.get("recovery"),
        retryable=entry.get("retryable"),
        severity=entry.get("severity"),
        thrown_by=entry.get("thrown_by"),
    )


def records_from_definitions(tools: Iterable[Any] = (), resources: Iterable[Any] = ()) -> list[LockRecord]:
    """Records of live ``ToolDefinition``/``ResourceDefinition`` objects (read duck-typed: ``.name``, ``.errors``)."""
    records = []
    sections: tuple[tuple[DefinitionKind, Iterable[Any]], ...] = (("tool", tools), ("resource", resources))
    for kind, definitions in sections:
        for definition in definitions:
            entries = tuple(
                LockEntry(
                    reason=entry.reason,
                    code=name_of_code(entry.code),
                    code_value=value_of_code(entry.code),
                    when=entry.when,
                    recovery=entry.recovery,
                    retryable=entry.retryable,
                    severity=entry.severity,
                    thrown_by=entry.thrown_by,
                )
                for entry in definition.errors
            )
            records.append(LockRecord(kind=kind, name=definition.name, entries=entries))
    return records


# -- the document -----------------------------------------------------------------------------


def text_digest(text: str | None) -> str | None:
    """sha256 of ``when``/``recovery``: the lockfile tracks that the text changed, not the text."""
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_lock(records: Iterable[LockRecord | Mapping[str, Any]]) -> dict[str, Any]:
    """The lock document of ``records``.

    A reason declared twice in one definition is recorded once (the first declaration, as the
    runtime resolves it); duplicates are the linter's FL108, not a reason to fail the lock.
    """
    document: dict[str, Any] = {"format": LOCK_FORMAT, "version": LOCK_VERSION, "tools": {}, "resources": {}}
    for raw in records:
        record = coerce_record(raw)
        errors: dict[str, Any] = {}
        for entry in record.entries:
            if entry.reason in errors:
                continue
            errors[entry.reason] = {
                "code": entry.code,
                "code_value": entry.code_value,
                "retryable": entry.retryable,
                "severity": entry.severity,
                "thrown_by": entry.thrown_by,
                "when_sha256": text_digest(entry.when),
                "recovery_sha256": text_digest(entry.recovery),
            }
        document[SECTIONS[record.kind]][record.name] = {"errors": errors}
    return document


def dumps_lock(document: Mapping[str, Any]) -> str:
    """Deterministic text: sorted keys, two-space indent, non-ASCII kept, one trailing newline."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_lock(path: str | os.PathLike[str], document: Mapping[str, Any]) -> bool:
    """Write the lockfile atomically; return whether its bytes changed (unchanged: not touched)."""
    target = Path(path)
    text = dumps_lock(document).encode("utf-8")
    if target.exists() and target.read_bytes() == text:
        return False
    handle, temporary = tempfile.mkstemp(dir=target.parent or Path("."), prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True


def load_lock(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a lockfile; ``LockfileError`` names the file and what is wrong."""
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LockfileError(f"{target}: no lockfile here; create it with `fusion-lint lock`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LockfileError(f"{target}: cannot read the lockfile: {exc}") from None
    return loads_lock(text, source=str(target))


def loads_lock(text: str, source: str = "<lockfile>") -> dict[str, Any]:
    """Parse and validate lockfile text."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LockfileError(f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    if not isinstance(document, dict):
        raise LockfileError(f"{source}: expected a JSON object at the top level, got {type(document).__name__}")
    if document.get("format") != LOCK_FORMAT:
        raise LockfileError(f'{source}: "format" must be {LOCK_FORMAT!r}, got {document.get("format")!r}')
    if document.get("version") != LOCK_VERSION:
        raise LockfileError(
            f"{source}: unsupported lockfile version {document.get('version')!r} (this fusion-lint reads {LOCK_VERSION})"
        )
    for section in SECTIONS.values():
        definitions = document.get(section)
        if not isinstance(definitions, dict):
            raise LockfileError(f'{source}: "{section}" must be an object')
        for name, body in definitions.items():
            where = f"{source}: {section}.{name}"
            if not isinstance(body, dict) or not isinstance(body.get("errors"), dict):
                raise LockfileError(f'{where}: expected an object with an "errors" object')
            for reason, entry in body["errors"].items():
                _check_entry(f"{where}.errors.{reason}", entry)
    return document


def _check_entry(where: str, entry: Any) -> None:
    if not isinstance(entry, dict):
        raise LockfileError(f"{where}: expected an object")
    missing = [key for key in _ENTRY_KEYS if key not in entry]
    if missing:
        raise LockfileError(f"{where}: missing {', '.join(missing)}")
    expectations: Mapping[str, tuple[type, ...]] = {
        "code": (str,),
        "code_value": (int,),
        "retryable": (bool,),
        "severity": (str,),
        "thrown_by": (str,),
        "when_sha256": (str,),
        "recovery_sha256": (str,),
    }
    for key, types in expectations.items():
        value = entry[key]
        if value is not None and (not isinstance(value, types) or (key == "code_value" and isinstance(value, bool))):
            raise LockfileError(f"{where}.{key}: expected {types[0].__name__} or null, got {value!r}")


# -- deltas -----------------------------------------------------------------------------------

_IMPACT_RANK = {impact: rank for rank, impact in enumerate(IMPACTS)}


@dataclass(frozen=True)
class Delta:
    """One difference between the locked and the current contract, classified per DESIGN §8."""

    severity: Impact
    kind: str
    definition_kind: DefinitionKind
    name: str
    reason: str | None = None
    old: Any = None
    new: Any = None

    @property
    def message(self) -> str:
        return _MESSAGES[self.kind](self)

    def describe(self) -> str:
        """``BREAKING tool 'get_invoice': reason 'invoice_locked' was removed``."""
        return f"{self.severity} {self.definition_kind} '{self.name}': {self.message}"

    def to_wire(self) -> dict[str, Any]:
        """What a client sees in ``<contract_awareness>`` and the mirrors."""
        return {"impact": self.severity, "kind": self.kind, "reason": self.reason, "message": self.message}

    def to_dict(self) -> dict[str, Any]:
        return {
            "impact": self.severity,
            "kind": self.kind,
            "definition": self.definition_kind,
            "name": self.name,
            "reason": self.reason,
            "old": self.old,
            "new": self.new,
            "message": self.message,
        }

    def sort_key(self) -> tuple[Any, ...]:
        return (_IMPACT_RANK[self.severity], self.definition_kind, self.name, self.reason or "", self.kind)

    def __str__(self) -> str:
        return self.describe()


def _code_text(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "?"
    return str(entry.get("code") or entry.get("code_value"))


_MESSAGES = {
    "definition_removed": lambda d: f"{d.definition_kind} was removed",
    "definition_added": lambda d: (
        f"new {d.definition_kind} with an error contract (reasons: {', '.join(d.new)})"
        if d.new
        else f"new {d.definition_kind} without an error contract"
    ),
    "reason_removed": lambda d: f"reason '{d.reason}' ({d.old}) was removed",
    "reason_added": lambda d: f"new reason '{d.reason}' ({d.new}): a new failure mode",
    "code_changed": lambda d: f"reason '{d.reason}' now fails with {d.new} (was {d.old})",
    "retryable_revoked": lambda d: f"reason '{d.reason}' is no longer retryable",
    "retryable_granted": lambda d: f"reason '{d.reason}' is now retryable",
    "retryable_clarified": lambda d: f"reason '{d.reason}' retryable changed from {_json(d.old)} to {_json(d.new)}",
    "when_changed": lambda d: f"the 'when' text of reason '{d.reason}' changed",
    "recovery_changed": lambda d: f"the recovery of reason '{d.reason}' changed",
    "severity_changed": lambda d: (
        f"the log severity of reason '{d.reason}' changed from {d.old or 'error'} to {d.new or 'error'}"
    ),
    "thrown_by_changed": lambda d: (
        f"the thrown_by marker of reason '{d.reason}' changed from {_json(d.old)} to {_json(d.new)}"
    ),
}


def _json(value: Any) -> str:
    return json.dumps(value)


def diff_locks(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Delta]:
    """Every delta from ``old`` (the lockfile) to ``new`` (the code), most severe first.

    * BREAKING: a tool/resource or a reason removed; a reason's code changed; retryable true -> false.
    * RISKY: a reason added; retryable false -> true; a new tool/resource with a contract.
    * SAFE: ``when``/``recovery`` text changed; severity changed (also: a new definition without a
      contract, the lint-only ``thrown_by`` marker, retryable unset <-> false).

    An unset ``retryable`` promises nothing, so for the BREAKING/RISKY rules it counts as false.
    """
    deltas: list[Delta] = []
    for kind, section in SECTIONS.items():
        before: Mapping[str, Any] = old.get(section) or {}
        after: Mapping[str, Any] = new.get(section) or {}
        for name in sorted(set(before) - set(after)):
            deltas.append(Delta("BREAKING", "definition_removed", kind, name))
        for name in sorted(set(after) - set(before)):
            reasons = sorted(after[name].get("errors") or {})
            impact: Impact = "RISKY" if reasons else "SAFE"
            deltas.append(Delta(impact, "definition_added", kind, name, new=tuple(reasons)))
        for name in sorted(set(before) & set(after)):
            deltas.extend(
                _diff_definition(kind, name, before[name].get("errors") or {}, after[name].get("errors") or {})
            )
    return sorted(deltas, key=Delta.sort_key)


def _diff_definition(
    kind: DefinitionKind, name: str, before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]
) -> list[Delta]:
    deltas: list[Delta] = []

    def add(impact: Impact, change: str, reason: str, old: Any = None, new: Any = None) -> None:
        deltas.append(Delta(impact, change, kind, name, reason, old, new))

    for reason in sorted(set(before) - set(after)):
        add("BREAKING", "reason_removed", reason, old=_code_text(before[reason]))
    for reason in sorted(set(after) - set(before)):
        add("RISKY", "reason_added", reason, new=_code_text(after[reason]))
    for reason in sorted(set(before) & set(after)):
        was, now = before[reason], after[reason]
        if (was.get("code"), was.get("code_value")) != (now.get("code"), now.get("code_value")):
            add("BREAKING", "code_changed", reason, old=_code_text(was), new=_code_text(now))
        was_retryable, now_retryable = was.get("retryable"), now.get("retryable")
        if bool(was_retryable) and not now_retryable:
            add("BREAKING", "retryable_revoked", reason, old=was_retryable, new=now_retryable)
        elif not was_retryable and bool(now_retryable):
            add("RISKY", "retryable_granted", reason, old=was_retryable, new=now_retryable)
        elif was_retryable != now_retryable:
            add("SAFE", "retryable_clarified", reason, old=was_retryable, new=now_retryable)
        if was.get("when_sha256") != now.get("when_sha256"):
            add("SAFE", "when_changed", reason)
        if was.get("recovery_sha256") != now.get("recovery_sha256"):
            add("SAFE", "recovery_changed", reason)
        if was.get("severity") != now.get("severity"):
            add("SAFE", "severity_changed", reason, old=was.get("severity"), new=now.get("severity"))
        if was.get("thrown_by") != now.get("thrown_by"):
            add("SAFE", "thrown_by_changed", reason, old=was.get("thrown_by"), new=now.get("thrown_by"))
    return deltas


def deltas_by_definition(
    deltas: Sequence[Delta], impacts: Iterable[str] = IMPACTS
) -> dict[tuple[str, str], list[Delta]]:
    """Group ``deltas`` of the given impacts by ``(definition kind, name)``, keeping their order."""
    wanted = set(impacts)
    grouped: dict[tuple[str, str], list[Delta]] = {}
    for delta in deltas:
        if delta.severity in wanted:
            grouped.setdefault((delta.definition_kind, delta.name), []).append(delta)
    return grouped
