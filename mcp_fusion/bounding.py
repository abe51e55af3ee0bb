"""Bounding and sanitising of everything a failure echoes (DESIGN §3.5, §3.6).

Whatever a caller sent, and whatever a handler put into a failure's message or ``data``, may be
echoed to the model and is written into the failure's log record. It must not be able to blow
up a result or a log, crash the writer, or leak a secret, so every echo goes through
:func:`bound_value` (or :func:`bound_text`) first:

* strings keep their first 1,024 characters, then ``… [truncated from N characters]``; lone
  surrogates (``os.listdir`` of a latin-1 name) become U+FFFD, which every writer can encode;
* arrays keep their first 10 entries, then one ``… [truncated from N items]`` entry; an iterator
  is read for at most 11 items (``itertools.count()`` is not an error, just cut);
* objects keep their first 10 keys, plus a ``"…"`` key whose value is ``[truncated from N keys]``;
  keys named like credentials (``password``, ``accessToken``, ``X-Api-Key``...) are dropped at any
  depth, and keys that are not strings become strings that never collide with a real key;
* nesting below 8 levels, a circular reference, an integer of more than 1,024 digits, a
  non-finite float, bytes and unknown objects become short descriptive strings;
* a whole bounded value spends at most ``MAX_BOUNDED_CHARS`` characters (a wide *and* deep value
  is cut with a marker), so its size is bounded whatever its shape.

The result is plain JSON data (``json.dumps(..., allow_nan=False)`` always works). Bounding is
idempotent: bounding a bounded value returns it unchanged.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import functools
import json
import math
import re
import uuid
from collections.abc import Iterable, Mapping, Set
from itertools import islice
from pathlib import PurePath
from typing import Any

#: Strings longer than this are cut to this many characters.
MAX_STRING_CHARS = 1024
#: Arrays keep only their first this-many entries.
MAX_ITEMS = 10
#: Objects keep only their first this-many keys.
MAX_KEYS = 10
#: Nesting below this depth is replaced by a marker (a deep structure is as hostile as a wide one).
MAX_DEPTH = 8
#: Characters one bounded value may spend in all (strings, keys and numbers together).
MAX_BOUNDED_CHARS = 16384
#: A one-line rendering (log records, "You sent: ...") is cut at this length.
MAX_RENDERED_CHARS = 4096

#: Key under which a cut object records how many keys it had.
TRUNCATED_KEYS_MARKER = "…"
_OUTPUT_LIMIT = "[truncated: size limit reached]"

#: Words that make a key a credential: ``token``, ``access_token``, ``X-Auth-Token``, ``sessionId``.
CREDENTIAL_KEYS: frozenset[str] = frozenset(
    {"auth", "authorization", "password", "passwd", "secret", "token", "api_key", "apikey", "cookie", "session"}
)
_CREDENTIAL_WORDS = frozenset(key.replace("_", "") for key in CREDENTIAL_KEYS)

#: ``json.dumps(value, ensure_ascii=False)``, without building an encoder per call (``json.dumps``
#: does that for any non-default option): the same text, a few microseconds cheaper per failure.
compact_json = json.JSONEncoder(ensure_ascii=False).encode
#: ``json.dumps(value, ensure_ascii=False, allow_nan=False)``, likewise.
strict_compact_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode

_SURROGATES = re.compile("[\ud800-\udfff]")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_CUT_TEXT = re.compile(r"… \[truncated from \d+ characters\]")


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so any UTF-8 writer can send it."""
    if text.isascii():  # most text: no surrogate possible, and much cheaper than the search
        return text
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def bound_text(text: str, limit: int = MAX_STRING_CHARS) -> str:
    """A cleaned string of at most ``limit`` (1,024) characters plus the cut marker (idempotent)."""
    text = clean_text(text)
    if len(text) <= limit or _CUT_TEXT.fullmatch(text, limit):
        return text
    return f"{text[:limit]}… [truncated from {len(text)} characters]"


def as_text(value: Any) -> str:
    """Any value as message text: a string cleaned; anything else rendered, never raising."""
    if isinstance(value, str):
        return clean_text(value)
    rendered = bound_value(value)
    return rendered if isinstance(rendered, str) else compact_json(rendered)


def is_credential_key(key: Any) -> bool:
    """Whether a ``data`` key names a credential (case-insensitive, by word: ``max_tokens`` is not)."""
    if not isinstance(key, str):
        return False
    # Only short keys are cached: a hostile 5 MB key must not be kept alive by the cache. Of a long
    # key, the part that would be shown is read.
    return _credential_name(key) if len(key) <= 256 else _credential_words(key[:MAX_STRING_CHARS])


@functools.lru_cache(maxsize=2048)
def _credential_name(key: str) -> bool:
    return _credential_words(key)


def _credential_words(key: str) -> bool:
    words = [word.lower() for word in _WORDS.findall(key)]
    if any(word in _CREDENTIAL_WORDS for word in words):
        return True
    return any(first + second in _CREDENTIAL_WORDS for first, second in zip(words, words[1:]))


def drop_credentials(data: Any, _depth: int = 0, _copies: dict[int, Any] | None = None) -> Any:
    """``data`` without credential-named keys at any depth (containers are copied, never mutated).

    Shared and circular references stay shared and circular in the copy (as ``copy.deepcopy``).
    """
    if _depth == 0 and type(data) is dict and is_plain_and_small(data):
        return dict(data)  # the common case (a reason, a flag, an ID), before any ABC check
    if _depth > MAX_DEPTH or not isinstance(data, (Mapping, list, tuple)):
        return data  # deeper levels are never rendered: bound_value cuts them
    copies = {} if _copies is None else _copies
    if id(data) in copies:
        return copies[id(data)]
    if isinstance(data, tuple):
        return tuple(drop_credentials(item, _depth + 1, copies) for item in data)
    if isinstance(data, list):
        copied_list: list[Any] = []
        copies[id(data)] = copied_list
        copied_list.extend(drop_credentials(item, _depth + 1, copies) for item in data)
        return copied_list
    copied: dict[Any, Any] = {}
    copies[id(data)] = copied
    for key, item in data.items():
        if not is_credential_key(key):
            copied[key] = drop_credentials(item, _depth + 1, copies)
    return copied


def bound_value(value: Any, *, source: Any = None) -> Any:
    """``value`` as bounded, sanitised JSON data (see the module docstring for every rule).

    ``source`` is what ``value`` was copied from, if anything: a reference back to it is circular.
    """
    if is_plain_and_small(value):
        return dict(value)  # the common case (a reason, a flag, an ID) needs no walk
    bounder = _Bounder()
    if source is not None:
        bounder.visiting.add(id(source))
    return bounder.value(value, 0)


_PLAIN_SCALARS = (type(None), bool, int, float)


def is_plain_and_small(value: Any) -> bool:
    """A flat dict of at most 10 short, clean, non-credential scalars: bounding it changes nothing."""
    if type(value) is not dict or len(value) > MAX_KEYS:
        return False
    for key, item in value.items():
        if type(key) is not str or not _is_plain_key(key):
            return False
        kind = type(item)
        if kind is str:
            if len(item) > MAX_STRING_CHARS or (not item.isascii() and _SURROGATES.search(item)):
                return False
        elif (
            kind not in _PLAIN_SCALARS
            or (kind is int and item.bit_length() > 3400)
            or (kind is float and not math.isfinite(item))
        ):
            return False
    return True


def _is_plain_key(key: str) -> bool:
    """A short, clean key that names no credential (cached: the same few keys come back every call)."""
    if len(key) > MAX_STRING_CHARS:
        return False
    return _plain_short_key(key) if len(key) <= 256 else not (_SURROGATES.search(key) or is_credential_key(key))


@functools.lru_cache(maxsize=2048)
def _plain_short_key(key: str) -> bool:
    return not (_SURROGATES.search(key) or _credential_words(key))


def render_bounded(value: Any) -> str:
    """A one-line, bounded rendering of a caller value for messages and log records.

    Strings are shown quoted (``'abc'``) so an empty or blank string is visible; everything else
    as compact JSON.
    """
    if is_plain_and_small(value):
        text = _plain_json(value)  # the common case (a few IDs and flags): written directly, no encoder
    else:
        bounded = bound_value(value)
        text = repr(bounded) if isinstance(bounded, str) else compact_json(bounded)
    if len(text) > MAX_RENDERED_CHARS:
        text = f"{text[:MAX_RENDERED_CHARS]}… [truncated from {len(text)} characters]"
    return text


_encode_string = json.encoder.encode_basestring  # the string encoder of ensure_ascii=False (C where available)
_JSON_CONSTANTS = {None: "null", True: "true", False: "false"}


def _plain_json(value: dict[str, Any]) -> str:
    """``compact_json(value)`` of a dict :func:`is_plain_and_small` accepted, written directly.

    Its keys are ``str`` and its values exactly ``str``, ``None``, ``bool``, a bounded ``int`` or a
    finite ``float``: JSON renders them as below (what ``json``'s own encoder writes for them), and
    building an encoder per call would cost more than the whole record's arguments.
    """
    items = []
    for key, item in value.items():
        kind = type(item)
        if kind is str:
            text = _encode_string(item)
        elif kind is int:
            text = int.__repr__(item)
        elif kind is float:
            text = float.__repr__(item)
        else:
            text = _JSON_CONSTANTS[item]
        items.append(f"{_encode_string(key)}: {text}")
    return "{" + ", ".join(items) + "}"


def integer_digits(number: int) -> int:
    """Decimal digits of ``number``, without converting it (huge ints refuse ``str``)."""
    magnitude = abs(number)
    if magnitude < 10**18:
        return len(str(magnitude))
    digits = int(math.log10(magnitude)) + 1
    return digits


def describe_integer(number: int) -> str:
    return f"[an integer of {integer_digits(number)} digits]"


NON_FINITE_NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


class _Taken(list[Any]):
    """The first items read from an iterator; ``total`` is its length when it has one."""

    def __init__(self, items: list[Any], total: int | None) -> None:
        super().__init__(items)
        self.total = total


class _Bounder:
    """One walk of :func:`bound_value`: the character budget and the containers being visited.

    The budget is spent on what the walk *emits* (so walking its own output spends the same and
    cuts at the same places: bounding is idempotent).
    """

    def __init__(self) -> None:
        self.budget = MAX_BOUNDED_CHARS
        self.visiting: set[int] = set()

    def value(self, value: Any, depth: int) -> Any:
        cls = type(value)
        if cls is str:  # the common cases first: this runs for every failure's details
            return self.text(value)
        if value is None or cls is bool:
            return value
        if cls is dict:
            return self.container(value, depth)
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value.bit_length() <= 3400:
            self.budget -= 8
            return int(value)
        if isinstance(value, float) and math.isfinite(value):
            self.budget -= 8
            return float(value)
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (Mapping, list, tuple, Set)):
            return self.container(value, depth)
        try:
            replacement = self.describe(value)
        except Exception:  # noqa: BLE001 - a value that cannot even be described is described by its type
            replacement = f"<unrenderable {type(value).__name__}>"
        return self.value(replacement, depth)

    def text(self, text: str) -> str:
        bounded = bound_text(text)
        self.budget -= len(bounded)
        return bounded

    def container(self, value: Any, depth: int) -> Any:
        is_mapping = isinstance(value, Mapping)
        if depth >= MAX_DEPTH:
            kind, unit = ("object", "keys") if is_mapping else ("array", "items")
            return self.text(f"[nested {kind} of {_size(value)} {unit} not shown]")
        if id(value) in self.visiting:
            return self.text("[circular reference]")
        self.visiting.add(id(value))
        self.budget -= 2
        try:
            if is_mapping:
                return self.mapping(value, depth)
            total = value.total if isinstance(value, _Taken) else len(value)
            return self.sequence(_ordered(value) if isinstance(value, Set) else value, total, depth)
        finally:
            self.visiting.discard(id(value))

    def mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        bounded: dict[str, Any] = {}
        for key, item in value.items():
            if key == TRUNCATED_KEYS_MARKER and isinstance(item, str) and item.startswith("[truncated"):
                bounded[key] = item  # the marker of an earlier bounding
                break
            if len(bounded) == MAX_KEYS:
                bounded[TRUNCATED_KEYS_MARKER] = f"[truncated from {len(value)} keys]"
                break
            if self.budget <= 0:
                bounded[TRUNCATED_KEYS_MARKER] = _OUTPUT_LIMIT
                break
            if is_credential_key(key):
                continue
            name = self.key(key, value, bounded)
            bounded[name] = self.value(item, depth + 1)
        return bounded

    def key(self, key: Any, source: Mapping[Any, Any], bounded: dict[str, Any]) -> str:
        if isinstance(key, str):
            name = bound_text(key)
        else:
            name = _key_text(key)
            if name in source or name in bounded:  # ``1`` next to ``"1"``: the string keeps its name
                name = f"{name} ({type(key).__name__})"
        base, count = name, 1
        while name in bounded:
            count += 1
            name = f"{base} ({count})"
        self.budget -= len(name)
        return name

    def sequence(self, items: Iterable[Any], total: int | None, depth: int) -> list[Any]:
        bounded: list[Any] = []
        for index, item in enumerate(items):
            if index == MAX_ITEMS:
                if isinstance(item, str) and item.startswith("… [truncated") and total == MAX_ITEMS + 1:
                    bounded.append(item)  # the marker of an earlier bounding
                elif total is None:
                    bounded.append(f"… [truncated after {MAX_ITEMS} items]")
                else:
                    bounded.append(f"… [truncated from {total} items]")
                break
            if self.budget <= 0:
                bounded.append(f"… {_OUTPUT_LIMIT}")
                break
            bounded.append(self.value(item, depth + 1))
        return bounded

    def describe(self, value: Any) -> Any:
        """What stands for a value that is not plain JSON: text, or data to walk instead."""
        if isinstance(value, (int, float)):
            return describe_integer(value) if isinstance(value, int) else NON_FINITE_NAMES[repr(float(value))]
        if isinstance(value, (bytes, bytearray, memoryview)):
            return f"<{len(value)} bytes>"  # raw bytes are never useful to a model and may be huge
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, (datetime.date, datetime.time)):
            return value.isoformat()
        if isinstance(value, (uuid.UUID, decimal.Decimal, PurePath, datetime.timedelta)):
            return str(value)
        if isinstance(value, BaseException):
            return str(value) or type(value).__name__
        dump = getattr(value, "model_dump", None)
        if callable(dump) and hasattr(type(value), "model_fields"):  # a pydantic model
            return dump(mode="json")
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {item.name: getattr(value, item.name) for item in dataclasses.fields(value)}
        if isinstance(value, Iterable):
            # Generators, ranges, dict views, itertools.count(): read one item past the cut at most.
            total = _size(value) if hasattr(value, "__len__") else None
            taken = list(islice(value, MAX_ITEMS + 1))
            if total is None and len(taken) <= MAX_ITEMS:
                total = len(taken)
            return _Taken(taken, total if isinstance(total, int) else None)
        return _object_text(value)


def _size(value: Any) -> int | str:
    try:
        return len(value)
    except Exception:  # noqa: BLE001 - a broken __len__ only costs the count
        return "?"


def _ordered(items: Set[Any]) -> list[Any]:
    """A set in a stable order when its members sort (the envelope's bytes stay deterministic)."""
    members = list(islice(items, MAX_ITEMS + 1)) if len(items) > 10_000 else list(items)
    try:
        return sorted(members)
    except Exception:  # noqa: BLE001 - mixed types keep iteration order
        return members


def _key_text(key: Any) -> str:
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, int) and key.bit_length() > 3400:
        return describe_integer(key)
    try:
        return bound_text(str(key))
    except Exception:  # noqa: BLE001
        return f"<unrenderable {type(key).__name__}>"


def _object_text(value: Any) -> str:
    cls = type(value)
    if cls.__str__ is object.__str__ and cls.__repr__ is object.__repr__:  # type: ignore[comparison-overlap]  # the class's own slot or object's, read off the class
        return f"<{cls.__qualname__} object>"  # never a memory address
    return str(value)
