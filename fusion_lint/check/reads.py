"""What the rules of a shared item read of other files, recorded as they run (DESIGN §13.1).

The run's snapshot (``snapshot``) replays the findings of a *shared* item — a contract entry that
definitions of other files hold, a function that other files' definitions serve, reach or call —
when an edit of those files changes nothing its rules read of them. What they read is not listed
by hand. While the rules of a shared item run, the item and every object of the model they reach
from it answer attribute reads through a recording class (the same object with its class swapped,
so ``is``, ``id`` and equality hold), and each read is kept as a path from the item, such as
``("holders", ALL, "handler", "function", "params")``, in the run's *schema* of the item's scope.

The snapshot then digests, per shared item and per file, the values those paths lead to (``digests``):
a value read through an object of a file is that file's, so an edit of the file that changes it
changes the digest, and a later run that finds the same digests on its own objects may replay the
item. The neighbours an item has in other files are found from the model's fields alone
(``neighbour_files``): a holder, a definition served or reaching, a caller, transitively up the
call graph; a new or lost neighbour changes the digests too.

What a shared item's rules read of the project itself must be what the snapshot checks on its own
(the vocabulary, the settings): any other read makes the schema ``opaque`` and no snapshot is
recorded — the ordinary path answers, never a stale replay.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import hashlib
import types
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from contextlib import contextmanager
from typing import Any, Protocol

import fusion_lint.facts.model as facts_model
import fusion_lint.project.view as project_view

ALL = "*"  # a path's step into every element of a sequence
PROJECT = "<project>"  # a path's first step when a rule reads the project, not the item
#: What a rule may read of the project while checking a shared item: what the snapshot compares on
#: its own (the vocabulary by its words, the settings by the run's frame).
COVERED_BY_THE_SNAPSHOT = frozenset({("vocabulary",), ("recovery_min_words",), ("runtime_modules",)})
#: ``project.files[item.path]``: the facts of the item's own file (a fix's imports), which an edit
#: of another file leaves as they are.
OWN_FACTS = ("files", "[home]")
#: The scopes whose items can be shared (a definition's rules read what its file imports, which an
#: edit reaches through the import graph: ``snapshot.reached_from``).
SHARED_SCOPES = ("entry", "function")
_LEAVES = (str, int, float, bool, bytes, type(None))
ReadPath = tuple[str, ...]  # attribute names, ``ALL`` and ``[key]`` steps from the item
Schema = Mapping[str, Iterable[ReadPath]]  # scope -> the paths its shared items' rules read
Trie = dict[str, "Trie"]
ItemKey = tuple[object, ...]  # how the snapshot names an entry or a function


def _model_classes() -> frozenset[type]:
    found = set()
    for module in (facts_model, project_view):
        for value in vars(module).values():
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
                found.add(value)
    return frozenset(found - {project_view.ProjectView, project_view.Vocabulary})


#: The classes of the model whose reads are recorded (immutable: computed once, no run state).
MODEL = _model_classes()


def _file(value: object) -> str | None:
    """The file an object of the model belongs to, when it says (definitions, entries, functions)."""
    if type(value) in MODEL:
        path = getattr(value, "path", None)
        return path if isinstance(path, str) else None
    return None


# ----- which items are shared ------------------------------------------------------------------------


def _neighbours(value: object) -> Iterator[object]:
    """The objects of the model a field holds, directly or in (nested) lists and tuples."""
    if type(value) in MODEL:
        yield value
    elif isinstance(value, (list, tuple)):
        for element in value:
            yield from _neighbours(element)


class Item(Protocol):
    """An entry or a function of the view: what can be shared."""

    path: str


def neighbours(item: Item) -> Iterator[tuple[str, object]]:
    """Every object of another file the item's fields lead to (``(field, object)``), and, through
    objects of the item's own class (a function's callers), theirs, transitively: a shared entry's
    holders, a function's callers and the definitions it and they serve or are reached by."""
    seen, stack = {id(item)}, [item]
    while stack:
        current = stack.pop()
        for field in dataclasses.fields(current):  # type: ignore[arg-type]  # (an entry or a function: a dataclass)
            for found in _neighbours(getattr(current, field.name)):
                if id(found) in seen:
                    continue
                seen.add(id(found))
                where = _file(found)
                if where is not None and where != item.path:
                    yield field.name, found
                if type(found) is type(item):
                    stack.append(found)


def neighbour_files(item: Item) -> set[str]:
    return {where for _, found in neighbours(item) if (where := _file(found)) is not None}


# ----- recording -------------------------------------------------------------------------------------


class Reads:
    """The paths the rules of shared items read, per scope: the run's schema, recorded as they run."""

    def __init__(self, schema: Schema | None = None):
        self.schema: dict[str, set[ReadPath]] = {scope: set((schema or {}).get(scope, ())) for scope in SHARED_SCOPES}
        self._classes: dict[type, type] = {}
        self._keys: dict[int, ReadPath] = {}  # id of an object swapped while recording -> its path
        self._swapped: list[tuple[object, type]] = []
        self._paths: set[ReadPath] | None = None  # the schema of the scope being recorded
        self._home = ""  # the file of the item being recorded

    @property
    def opaque(self) -> bool:
        """Whether a shared item's rules read the project beyond what the snapshot checks itself."""
        return any(
            path[0] == PROJECT and path[1:2] not in COVERED_BY_THE_SNAPSHOT and path[1:3] != OWN_FACTS
            for paths in self.schema.values()
            for path in paths
        )

    def frozen(self) -> dict[str, tuple[ReadPath, ...]]:
        """The schema as the snapshot stores it."""
        return {scope: tuple(sorted(paths)) for scope, paths in self.schema.items()}

    @contextmanager
    def recording(self, scope: str, item: Item, project: object) -> Iterator[None]:
        """While the block runs, what is read of ``item`` and ``project`` joins the scope's schema."""
        self._paths, self._home = self.schema[scope], item.path
        try:
            self._adopt(item, ())
            self._adopt(project, (PROJECT,))
            yield
        finally:
            for value, original in reversed(self._swapped):
                object.__setattr__(value, "__class__", original)
            self._swapped.clear()
            self._keys.clear()
            self._paths = None

    def _adopt(self, value: object, path: ReadPath) -> None:
        if id(value) in self._keys:
            return
        original = type(value)
        recording = self._classes.get(original)
        if recording is None:
            recording = self._classes[original] = self._recording_class(original)
        self._keys[id(value)] = path
        self._swapped.append((value, original))
        object.__setattr__(value, "__class__", recording)

    def _adopt_value(self, value: object, path: ReadPath) -> None:
        kind = type(value)
        if kind in MODEL:
            self._adopt(value, path)
        elif isinstance(value, (list, tuple)):
            for element in value:
                if type(element) in MODEL or type(element) in (list, tuple):
                    self._adopt_value(element, path + (ALL,))

    def _read(self, value: object, name: str, found: object) -> object:
        at = self._keys.get(id(value))
        if at is None or self._paths is None:
            return found
        path = at + (name,)
        if type(found) is types.MethodType:  # what it reads of its object is recorded as it runs
            if at[:1] == (PROJECT,):
                self._paths.add(path)  # (``project.function_view``: the project read otherwise)
            return found
        if type(found) is dict:  # read by key: ``entry.get("reason")`` reads one value, not all
            return _KeyedReads(found, self, path)
        self._paths.add(path)
        self._adopt_value(found, path)
        return found

    def _key_read(self, path: ReadPath, key: object, found: object) -> None:
        if self._paths is not None:
            own = path == (PROJECT, OWN_FACTS[0]) and key == self._home
            keyed = path + (OWN_FACTS[1] if own else f"[{key!r}]",)
            self._paths.add(keyed)
            self._adopt_value(found, keyed)

    def _whole_read(self, path: ReadPath) -> None:
        if self._paths is not None:
            self._paths.add(path)

    def _recording_class(self, original: type) -> type:
        reads = self

        def __getattribute__(value: object, name: str) -> object:  # noqa: N807 (the hook itself)
            found = object.__getattribute__(value, name)
            return found if name[0] == "_" else reads._read(value, name, found)

        namespace: dict[str, Any] = {"__slots__": (), "__getattribute__": __getattribute__}
        params = getattr(original, "__dataclass_params__", None)
        if params is not None and params.eq:  # the generated ``__eq__`` asks for the same class
            compared = [f.name for f in dataclasses.fields(original) if f.compare]

            def __eq__(value: object, other: object) -> bool:  # noqa: N807
                if not isinstance(other, original):
                    return NotImplemented
                return all(getattr(value, name) == getattr(other, name) for name in compared)

            namespace["__eq__"], namespace["__hash__"] = __eq__, original.__hash__
        return type(f"Recording{original.__name__}", (original,), namespace)


class _KeyedReads(dict[object, object]):
    """A dict of the model as a rule reads it: a copy recording each key looked up, and the whole
    dict when it is iterated, measured or compared."""

    __slots__ = ("_reads", "_path")

    def __init__(self, values: dict[object, object], reads: Reads, path: ReadPath):
        super().__init__(values)
        self._reads, self._path = reads, path

    def get(self, key: object, default: object = None) -> object:
        found = dict.get(self, key, default)
        self._reads._key_read(self._path, key, found)
        return found

    def __getitem__(self, key: object) -> object:
        found = dict.get(self, key, _missing)
        self._reads._key_read(self._path, key, found)
        if found is _missing:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        self._reads._key_read(self._path, key, dict.get(self, key, _missing))
        return dict.__contains__(self, key)

    def _whole(self) -> None:
        self._reads._whole_read(self._path)

    def __iter__(self) -> Iterator[object]:
        self._whole()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._whole()
        return dict.__len__(self)

    def keys(self) -> KeysView[object]:  # type: ignore[override]  # (the dict's own view, typed as the abstract one)
        self._whole()
        return dict.keys(self)

    def values(self) -> ValuesView[object]:  # type: ignore[override]  # (the dict's own view, typed as the abstract one)
        self._whole()
        return dict.values(self)

    def items(self) -> ItemsView[object, object]:  # type: ignore[override]  # (the dict's own view, typed as the abstract one)
        self._whole()
        return dict.items(self)

    def __eq__(self, other: object) -> bool:
        self._whole()
        return dict.__eq__(self, other)

    __hash__ = None  # (a dict)


# ----- digests -----------------------------------------------------------------------------------------


_READ = ""  # a trie node's mark: its path was read itself (not only a path below it)


def _trie(paths: Iterable[ReadPath]) -> Trie:
    root: Trie = {}
    for path in sorted(paths):
        node = root
        for step in path:
            node = node.setdefault(step, {})
        node[_READ] = {}
    return root


def _canonical(value: object, depth: int = 0) -> object:
    """A value as the digest compares it: equal values alike in every process (sets sorted, no
    ids); an object of the model within a sequence by its class (its reads are paths of their own)."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind in MODEL and depth == 0:
        return ("obj", kind.__name__)
    if isinstance(value, (list, tuple)):
        return (kind.__name__, tuple(_canonical(element, depth) for element in value))
    if depth > 12:
        return "..."
    if isinstance(value, dict):
        return ("dict", tuple((_canonical(k, depth + 1), _canonical(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(_canonical(element, depth + 1)) for element in value)))
    if isinstance(value, enum.Enum):
        return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            kind.__name__,
            tuple(_canonical(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)),
        )
    return repr(value)


def _files_within(value: object) -> set[str]:
    return {where for found in _neighbours(value) if (where := _file(found)) is not None}


class _Walk:
    """The values the schema's paths lead to from one item, each kept for every file whose object
    the path went through (and, for a sequence's element, the files the element holds)."""

    def __init__(self, item: Item, wanted: set[str] | None):
        self.home = item.path
        self.wanted = wanted
        self.out: dict[str, list[tuple[ReadPath, object]]] = {}

    def emit(self, files: frozenset[str], path: ReadPath, value: object) -> None:
        for where in files:
            if where != self.home and (self.wanted is None or where in self.wanted):
                self.out.setdefault(where, []).append((path, value))

    def walk(self, value: object, trie: Trie, path: ReadPath, files: frozenset[str]) -> None:
        for step, below in trie.items():
            if step == _READ:
                continue
            if step == ALL:
                if type(value) is not list and type(value) is not tuple:
                    continue
                for element in value:
                    where = _file(element)
                    self.walk(element, below, path + (ALL,), files | {where} if where is not None else files)
                continue
            if step == PROJECT:
                continue
            here = path + (step,)
            if step[0] == "[":  # a key of a dict
                if type(value) is not dict:
                    continue
                found = value.get(ast.literal_eval(step[1:-1]), _missing)
            elif type(value) in MODEL:
                found = getattr(value, step, _missing)
                if type(found) is types.MethodType:
                    continue
            else:
                continue
            if found is _missing:
                self.emit(files, here, "<missing>")
                continue
            where = _file(found)
            inner = files | {where} if where is not None else files
            if _READ not in below:
                pass  # (read only on the way to what is below it)
            elif type(found) is list or type(found) is tuple:
                for element in found:
                    self.emit(inner | _files_within(element), here, _canonical(element))
                self.emit(inner, here, ("len", len(found)))
            else:
                self.emit(inner, here, _canonical(found))
            if len(below) > (_READ in below):
                self.walk(found, below, here, inner)


_missing = object()


def digests(
    items: Iterable[tuple[str, ItemKey, Item]], schema: Schema, wanted: set[str] | None = None
) -> dict[str, dict[ItemKey, bytes]]:
    """For each file (of ``wanted``, else any) and each shared item of another file
    (``(scope, key, item)``) that has neighbours in it: a digest of its neighbours there and of
    the values the scope's schema reads through that file's objects."""
    tries = {scope: _trie(schema.get(scope, ())) for scope in SHARED_SCOPES}
    found: dict[str, dict[ItemKey, bytes]] = {}
    for scope, key, item in items:
        linked: dict[str, list[tuple[str, str]]] = {}
        for field, neighbour in neighbours(item):
            where = _file(neighbour)
            if where is not None and (wanted is None or where in wanted):
                linked.setdefault(where, []).append((field, type(neighbour).__name__))
        if not linked:
            continue
        walk = _Walk(item, set(linked))
        walk.walk(item, tries[scope], (), frozenset())
        for where, links in linked.items():
            record = repr((links, walk.out.get(where, ()))).encode("utf-8", "backslashreplace")
            found.setdefault(where, {})[key] = hashlib.blake2b(record, digest_size=8).digest()
    return found
