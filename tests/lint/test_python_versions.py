"""What the running Python decides (DESIGN §11, §12.4, issue 17).

* A file the running Python rejects but a newer one accepts is FL000 ``needs Python ≥ 3.X to parse
  (fusion-lint is running on 3.Y)``, and only then: a plain syntax error stays one, even next to
  newer syntax. Each case runs on every Python; what it must say depends on which one runs it.
* The gate bounds nesting the same way on every Python: CPython 3.10 admits a 20,000-link chain
  and 3.13 ~20,000 levels, 3.11 and 3.12 refuse ~3,000 themselves; libcst must see none of them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, lint
from fusion_lint.source.gate import MAX_DEPTH, Unreadable, gate_tree
from fusion_lint.source.newer_syntax import needed_version

RUNNING = sys.version_info[:2]
RUNNING_TEXT = f"{RUNNING[0]}.{RUNNING[1]}"

# name -> (source, the oldest Python that parses it; None: none does)
CASES: dict[str, tuple[str, tuple[int, int] | None]] = {
    "except_star": ("try:\n    pass\nexcept* ValueError:\n    pass\n", (3, 11)),
    "star_in_index": ("def f(a, b):\n    return a[*b]\n", (3, 11)),
    "type_alias": ("type Pair = tuple[int, int]\n", (3, 12)),
    "generic_type_alias": ("type Pairs[T] = list[tuple[T, T]]\n", (3, 12)),
    "generic_function": ("def first[T](items: list[T]) -> T:\n    return items[0]\n", (3, 12)),
    "generic_class": ("class Box[T: (int, str)]:\n    pass\n", (3, 12)),
    "fstring_same_quotes": ('names = {"a": 1}\nlabel = f"{names["a"]}"\n', (3, 12)),
    "fstring_backslash": ("lines = []\ntext = f\"{'\\n'.join(lines)}\"\n", (3, 12)),
    "fstring_nested": ('width = 3\nlabel = f"{f"{width:>{width}}"!r}"\n', (3, 12)),
    "fstring_comment": ('total = f"""{1 +  # the first\n  2}"""\n', (3, 12)),
    "type_parameter_default": ("def first[T = int](items: list[T]) -> T:\n    return items[0]\n", (3, 13)),
    "except_without_parentheses": ("try:\n    pass\nexcept ValueError, TypeError:\n    pass\n", (3, 14)),
    "template_string": ('name = "x"\ngreeting = t"hello {name}"\n', (3, 14)),
    # wrong on every Python
    "plain_syntax_error": ("def broken(:\n    pass\n", None),
    "newer_syntax_and_an_error": ("type Pair = tuple[int, int]\ndef broken(:\n    pass\n", None),
    "broken_fstring_expression": ('label = f"{1 +}"\n', None),
    "broken_expression_in_a_newer_fstring": ('names = {}\nlabel = f"{names["a"] +}"\n', None),
    "python2_print": ('print "hello"\n', None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fl000_names_the_python_a_file_needs(tmp_path: Path, name: str) -> None:
    source, oldest = CASES[name]
    (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
    (tmp_path / "app.py").write_text("import mcp_fusion\n" + source)
    report = lint(Options(paths=[str(tmp_path)], use_cache=False, jobs=1))
    problems = [(d.code, d.message) for d in report.diagnostics if d.code in ("FL000", "FL001")]
    if oldest is not None and oldest <= RUNNING:
        assert problems == []  # this Python parses it: linted like any file
    elif oldest is not None:
        wanted = f"needs Python \u2265 {oldest[0]}.{oldest[1]} to parse (fusion-lint is running on {RUNNING_TEXT})"
        assert problems == [("FL000", wanted)]
    else:
        assert [code for code, _ in problems] == ["FL000"]
        assert problems[0][1].startswith("syntax error"), problems


def test_the_version_a_file_needs_is_found_without_guessing() -> None:
    """The neutralisers only remove newer syntax: what is left must parse on the running Python."""
    for name, (source, oldest) in CASES.items():
        try:
            compile(source, name, "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
        except SyntaxError:
            assert needed_version(source) == (oldest if oldest is not None and oldest > RUNNING else None), name


SHAPES = {
    "attribute": lambda n: "x = a" + ".b" * n,
    "addition": lambda n: "x = " + " + ".join(["a"] * n),
    "subscript": lambda n: "x = a" + "[0]" * n,
    "call": lambda n: "x = a" + "()" * n,
    "negation": lambda n: "x = " + "-" * n + "a",
    "conditional": lambda n: "x = " + "a if b else " * n + "c",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_gate_bounds_nesting_the_same_on_every_python(shape: str) -> None:
    make = SHAPES[shape]
    assert not isinstance(gate_tree(make(MAX_DEPTH - 50) + "\n", "ok.py"), Unreadable)
    for depth in (MAX_DEPTH + 50, 2_900, 20_000):
        verdict = gate_tree("import mcp_fusion\n\n\ndef f():\n    " + make(depth) + "\n", "deep.py")
        assert isinstance(verdict, Unreadable) and verdict.code == "FL000", (shape, depth)
        if not verdict.message.startswith("CPython cannot parse this file"):  # it may refuse the deepest itself
            assert verdict.message == (
                f"the code on line 5 nests deeper than {MAX_DEPTH} levels, more than fusion-lint parses safely"
            )
            assert verdict.line == 5


def test_deep_nesting_in_a_decorator_or_an_except_clause_is_measured_too() -> None:
    deep = "-" * (MAX_DEPTH + 10) + "a"
    for source, line in (
        (f"@decorate({deep})\ndef f():\n    pass\n", 1),
        (f"try:\n    pass\nexcept ({deep}):\n    pass\n", 3),
        (f"class C:\n    def f(self, x={deep}):\n        pass\n", 2),
        (f"match x:\n    case 1:\n        pass\n    case y if {deep}:\n        pass\n", 4),
        (f"match x:\n    case 1:\n        y = {deep}\n", 3),
    ):
        verdict = gate_tree(source, "deep.py")
        assert isinstance(verdict, Unreadable) and verdict.line == line, source[:40]
