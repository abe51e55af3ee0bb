"""Reading and parsing one file, behind CPython's parser as a gate (DESIGN §11).

libcst's native parser can crash the process or spin for minutes on inputs CPython rejects in
milliseconds, so every file goes through ``ast.parse`` first; what CPython rejects is FL000 with
CPython's own message and never reaches libcst.
"""
from __future__ import annotations

import ast
import codecs
import io
import tokenize
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

if TYPE_CHECKING:  # libcst is imported on the first parse: a tree that needs none never pays for it
    import libcst as cst


@dataclass(slots=True)
class Unreadable:
    """A per-file problem: ``code`` is FL000 (parse-error) or FL001 (file-unreadable)."""

    code: str
    message: str
    line: int = 1
    col: int = 0
    # A crash, a timeout or a bug of ours: it may not happen again, so it is never cached.
    transient: bool = False


@dataclass(slots=True)
class Decoded:
    text: str
    encoding: str
    bom: bool


def decode(data: bytes) -> Union[Decoded, Unreadable]:
    """Bytes to text honouring a BOM and a coding cookie, as the interpreter would."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return Unreadable("FL001", f"cannot decode: {exc.msg if hasattr(exc, 'msg') else exc}")
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig" if bom else encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        return Unreadable("FL001", f"not valid {encoding}{where}: {reason}")
    return Decoded(text, "utf-8" if encoding == "utf-8-sig" else encoding, bom)


def gate(text: str, path: str) -> Optional[Unreadable]:
    """CPython's verdict on the text; None when it parses."""
    try:
        ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = max((exc.offset or 1) - 1, 0)
        return Unreadable("FL000", f"syntax error: {exc.msg}", line, col)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        # NUL bytes (ValueError before 3.12), nesting beyond the interpreter's limits.
        message = str(exc) or type(exc).__name__
        return Unreadable("FL000", f"CPython cannot parse this file: {message}")
    return None


def parse(text: str, path: str) -> Union[cst.Module, Unreadable]:
    """Gate, then libcst. libcst rejects a few files CPython accepts: FL000 naming the parser."""
    problem = gate(text, path)
    if problem is not None:
        return problem
    import libcst as cst

    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return Unreadable(
            "FL000", f"libcst cannot parse this file (CPython can): {exc.message}", exc.raw_line, exc.raw_column
        )
    except (RecursionError, MemoryError, ValueError) as exc:
        return Unreadable("FL000", f"libcst cannot parse this file: {type(exc).__name__}: {exc}")
