"""Every suppression of a checker in the packages says which error and why: a ``# type: ignore``
names its codes and carries its reason after it on the same line
(``# type: ignore[attr-defined]  # ast.TryStar exists only on 3.11+``); a ``# fmt: skip`` or
``# fmt: off`` carries its reason too. Read from the comments alone (``tokenize``): a string that
spells one is no suppression."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fusion_lint", "mcp_fusion")

_TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore\b(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")
_FMT = re.compile(r"#\s*fmt:\s*(?P<what>skip|off)\b(?P<rest>.*)$")
_REASON = re.compile(r"^\s+#\s*\S")  # after the pragma: another comment, saying why


def problems(source: str) -> list[tuple[int, str]]:
    """(line, what is wrong) for each suppression comment of ``source`` that does not say why."""
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line, text = token.start[0], token.string
        ignore = _TYPE_IGNORE.search(text)
        if ignore is not None:
            codes = (ignore.group("codes") or "")[1:-1].strip()
            if not codes:
                found.append((line, "a type: ignore without its [code]"))
            elif not _REASON.match(ignore.group("rest")):
                found.append((line, "a type: ignore without a reason comment after it"))
        fmt = _FMT.search(text)
        if fmt is not None and not _REASON.match(fmt.group("rest")):
            found.append((line, f"a fmt: {fmt.group('what')} without a reason comment after it"))
    return found


def _sources() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_the_packages_are_found() -> None:
    paths = _sources()
    assert len(paths) > 100 and {p.relative_to(ROOT).parts[0] for p in paths} == set(PACKAGES)


def test_every_suppression_in_the_packages_names_its_code_and_says_why() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in _sources()
        for line, what in problems(path.read_text(encoding="utf-8"))
    ]
    assert bad == [], "\n".join(bad)


@pytest.mark.parametrize(
    "line",
    [
        "x = f()  # type: ignore\n",
        "x = f()  # type:ignore\n",
        "x = f()  # type: ignore[]  # a reason\n",
        "x = f()  # type: ignore  # a reason, but no code\n",
        "x = f()  # type: ignore[attr-defined]\n",
        "x = f()  # type: ignore[attr-defined] - a reason outside a comment of its own\n",
        "x = f()  # noqa: E501  # type: ignore[attr-defined]\n",
        "x = f()  # fmt: skip\n",
        "# fmt: off\n",
    ],
)
def test_a_suppression_without_its_code_or_reason_is_found(line: str) -> None:
    assert len(problems(line)) == 1


@pytest.mark.parametrize(
    "line",
    [
        "x = f()  # type: ignore[attr-defined]  # ast.TryStar exists only on 3.11+\n",
        "x = f()  # type: ignore[arg-type,union-attr]  # narrowed above\n",
        "x = f()  # fmt: skip  # the table is aligned by hand\n",
        "# fmt: off  # the table below is aligned by hand\n",
        "# fmt: on\n",
        'x = "# type: ignore"  # a string is no comment\n',
    ],
)
def test_a_suppression_with_its_code_and_reason_passes(line: str) -> None:
    assert problems(line) == []
