"""Contracts resolved across files: spreads, constants, imports and concatenations expanded into
entries, each entry's field values resolved (DESIGN §4 "Contracts")."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from fusion_lint.facts.model import (
    BadExpr,
    BadItem,
    Binding,
    ConcatExpr,
    ContractExpr,
    Definition,
    Entry,
    EntryField,
    EntryItem,
    ListExpr,
    RefExpr,
    RefItem,
    SpreadItem,
    Value,
)
from fusion_lint.project.index import ProjectIndex
from fusion_lint.project.view import ResolvedContract, ResolvedEntry


class ContractResolver:
    """Resolves definitions' contracts; an entry shared by several contracts is resolved once
    (one ``ResolvedEntry``, whose ``holders`` the caller fills)."""

    def __init__(self, index: ProjectIndex, kept: Callable[[Entry, str], ResolvedEntry | None] | None = None):
        self.index = index
        self.entries: dict[int, ResolvedEntry] = {}  # id(entry) -> its resolution, in order of first use
        # The language server's: an entry's resolution from an earlier lint that still holds
        # (``kept_resolution``), and each (entry, path, resolution) used, in order, while recording.
        self.kept = kept
        self.uses: list[tuple[Entry, str, ResolvedEntry]] | None = None

    def resolved_entry(self, entry: Entry, path: str) -> ResolvedEntry:
        known = self.entries.get(id(entry))
        if known is None:
            known = self.kept(entry, path) if self.kept is not None else None
            if known is None:
                written = self._with_spreads(entry, path, set()) if entry.spreads else entry
                fields = [(field, self.index.resolve_value(field.value)) for field in written.fields]
                known = ResolvedEntry(written, path, fields)
            self.entries[id(entry)] = known
        if self.uses is not None:
            self.uses.append((entry, path, known))
        return known

    def _with_spreads(self, entry: Entry, path: str, seen: set[str]) -> Entry:
        """The entry with each ``**BASE`` that names a module-level dict literal read into its
        fields (its own fields win, as in ``{**BASE, "code": ...}``); other spreads stay opaque
        (FL190). A field read from another file is placed at the ``**BASE`` that brings it, so
        every diagnostic of the entry lands in the entry's own file."""
        fields = list(entry.fields)
        names = {field.name for field in fields}
        opaque = list(entry.opaque)
        for qname, written, span in entry.spreads:
            found = self.index.binding(qname) if qname not in seen else None
            base = found[0] if found is not None else None
            if not isinstance(base, Entry) or base.form != "dict":
                continue
            base_path = found[1]  # type: ignore[index]  # found is not None: base would be None otherwise
            base = self._with_spreads(base, base_path, seen | {qname}) if base.spreads else base
            if base.opaque:
                continue  # the dict hides fields of its own: the entry stays unknown
            for field in base.fields:
                if field.name in names:
                    continue
                names.add(field.name)
                if base_path != path:
                    field = EntryField(field.name, Value(field.value.kind, field.value.value, span), span)
                fields.append(field)
            opaque.remove(written)
        return dataclasses.replace(
            entry, fields=fields, opaque=opaque, opaque_span=entry.opaque_span if opaque else None
        )

    def contract(self, definition: Definition, path: str) -> ResolvedContract:
        # A prompt takes no contract (FL117 reports its errors=): checking its shape would be noise.
        if definition.errors is None or definition.kind == "prompt":
            return ResolvedContract(declared=False)
        contract = ResolvedContract(declared=True, inert=definition.contract_above)
        expr = definition.errors
        if isinstance(expr, ListExpr) and not expr.items:
            contract.empty_literal = True
        self._expand(expr, path, contract, set(), top=True)
        return contract

    def _add(self, contract: ResolvedContract, entry: Entry, path: str) -> None:
        if entry.positional is not None:  # the runtime rejects it: one FL102, not a check per field
            bad = BadItem(
                "ErrorContract(...) with positional arguments (its fields are keyword-only)", entry.positional, True
            )
            contract.bad_items.append((bad, path))
            return
        contract.entries.append(self.resolved_entry(entry, path))

    def _expand(self, expr: ContractExpr, path: str, contract: ResolvedContract, seen: set[str], top: bool) -> None:
        if isinstance(expr, ListExpr):
            for item in expr.items:
                self._item(item, path, contract, seen)
        elif isinstance(expr, ConcatExpr):
            for part in expr.parts:
                self._expand(part, path, contract, seen, top=False)
        elif isinstance(expr, BadExpr):
            if expr.invalid and top:
                contract.wrong_type = (expr, path)
            elif expr.invalid:
                contract.bad_items.append((BadItem(expr.description, expr.span, True), path))
            else:
                where = "errors=" if top else "part of errors="
                contract.unresolved.append((f"{where} ({expr.description})", expr.span, path))
        elif isinstance(expr, RefExpr):
            target = self._deref(expr.qname, seen)
            if target is None:
                contract.unresolved.append((f"'{expr.qname}' (no list of that name in the project)", expr.span, path))
                return
            binding, where = target
            if isinstance(binding, Entry) and not self.index.confirmed(binding.assumes):
                contract.unresolved.append((_unconfirmed(binding), expr.span, path))
            elif isinstance(binding, Entry):
                if top:
                    what = "a single ErrorContract (wrap it in a list)" if binding.form == "call" else "a dict"
                    contract.wrong_type = (BadExpr(what, expr.span, True), path)
                else:
                    self._add(contract, binding, where)
            elif isinstance(binding, Value):
                bad = BadExpr(_value_phrase(binding), expr.span, True)
                if top:
                    contract.wrong_type = (bad, path)
                else:
                    contract.bad_items.append((BadItem(bad.description, expr.span, True), path))
            else:
                self._expand(binding, where, contract, seen | {expr.qname}, top)

    def _deref(self, qname: str, seen: set[str]) -> tuple[Binding, str] | None:
        if qname in seen:
            return None  # a cycle of names
        return self.index.binding(qname)

    def _item(self, item: object, path: str, contract: ResolvedContract, seen: set[str]) -> None:
        if isinstance(item, EntryItem):
            if self.index.confirmed(item.entry.assumes):
                self._add(contract, item.entry, path)
            else:
                contract.unresolved.append((_unconfirmed(item.entry), item.entry.span, path))
        elif isinstance(item, SpreadItem):
            self._expand(item.expr, path, contract, seen, top=False)
        elif isinstance(item, RefItem):
            target = self._deref(item.qname, seen)
            if target is None:
                contract.unresolved.append((f"entry '{item.qname}'", item.span, path))
                return
            binding, where = target
            if isinstance(binding, Entry) and not self.index.confirmed(binding.assumes):
                contract.unresolved.append((_unconfirmed(binding), item.span, path))
            elif isinstance(binding, Entry):
                self._add(contract, binding, where)
            elif isinstance(binding, Value):
                contract.bad_items.append((BadItem(_value_phrase(binding), item.span, True), path))
            else:  # a list used as one entry
                contract.bad_items.append((BadItem("a list (spread it with *)", item.span, True), path))
        elif isinstance(item, BadItem):
            if item.invalid:
                contract.bad_items.append((item, path))
            else:
                contract.unresolved.append((f"an entry ({item.description})", item.span, path))


def _unconfirmed(entry: Entry) -> str:
    """How an entry written with a project's ``ErrorContract`` that is not the runtime's is named."""
    return f"an entry (a call to {entry.assumes[0]}(), not the runtime's ErrorContract)"


def _value_phrase(value: Value) -> str:
    """How a constant of the wrong kind is named in a message: 'a string', 'None', 'a code'."""
    phrases = {
        "str": "a string",
        "fstring": "an f-string",
        "bytes": "bytes",
        "int": "an int",
        "float": "a float",
        "bool": "a bool",
        "none": "None",
        "code": "a JsonRpcErrorCode member",
    }
    return phrases.get(value.kind, str(value.value))
