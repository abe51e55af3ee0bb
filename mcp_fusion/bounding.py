"""Bounding of caller-supplied values before they are echoed (DESIGN §3.6).

Whatever a caller sent may be echoed back in a validation envelope and is written into every log
record of a failure. A hostile or confused caller must not be able to blow up a result or a log
with it, so every echo goes through :func:`bound_value` first.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

#: Strings longer than this are cut to this many characters.
MAX_STRING_CHARS = 1024
#: Arrays keep only their first this-many entries.
MAX_ITEMS = 10
#: Objects keep only their first this-many keys.
MAX_KEYS = 10
#: Nesting below this depth is replaced by a marker (a deep structure is as hostile as a wide one).
MAX_DEPTH = 8

#: Key under which a cut object records how many keys it had.
TRUNCATED_KEYS_MARKER = "…"


def bound_value(value: Any, *, _depth: int = 0) -> Any:
    """Return ``value`` with long strings, arrays and objects cut; each cut names the uncut size.

    * a string keeps its first 1,024 characters, followed by ``… [truncated from N characters]``;
    * an array keeps its first 10 entries, followed by one ``… [truncated from N items]`` entry;
    * an object keeps its first 10 keys, plus a ``"…"`` key whose value is ``[truncated from N keys]``.

    Values within the limits come back equal to the input (containers are copied, never mutated).
    """
    if isinstance(value, str):
        if len(value) <= MAX_STRING_CHARS:
            return value
        return f"{value[:MAX_STRING_CHARS]}… [truncated from {len(value)} characters]"
    if isinstance(value, (bytes, bytearray)):
        # Raw bytes are never useful to a model and may be huge: describe them instead.
        return f"<{len(value)} bytes>"
    if isinstance(value, Mapping):
        if _depth >= MAX_DEPTH:
            return f"[nested object of {len(value)} keys not shown]"
        bounded: dict[Any, Any] = {}
        for position, (key, item) in enumerate(value.items()):
            if position == MAX_KEYS:
                bounded[TRUNCATED_KEYS_MARKER] = f"[truncated from {len(value)} keys]"
                break
            bounded[bound_value(key, _depth=_depth + 1) if isinstance(key, str) else key] = bound_value(
                item, _depth=_depth + 1
            )
        return bounded
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        if _depth >= MAX_DEPTH:
            return f"[nested array of {len(items)} items not shown]"
        kept = [bound_value(item, _depth=_depth + 1) for item in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            kept.append(f"… [truncated from {len(items)} items]")
        return kept
    return value


def render_bounded(value: Any) -> str:
    """A one-line, bounded rendering of a caller value for messages and log records.

    Strings are shown quoted (``'abc'``) so an empty or blank string is visible; everything else
    as compact JSON when it is JSON-serialisable, else via ``repr``.
    """
    bounded = bound_value(value)
    if isinstance(bounded, str):
        return repr(bounded)
    try:
        return json.dumps(bounded, ensure_ascii=False, default=_unserialisable)
    except (TypeError, ValueError):
        return repr(bounded)


def _unserialisable(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_STRING_CHARS else bound_value(text)
