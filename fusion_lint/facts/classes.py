"""Module-level classes as facts: their bases and where their methods store the context (DESIGN §12.3).

The project view follows a method call (``self.helper()``, ``svc.handle``) through the class and its
bases in MRO order, across files; ``self.ctx.fail(...)`` counts as ``ctx.fail`` in a class that
stores its context as ``self.ctx = ctx``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from fusion_lint.facts.model import ClassFacts
from fusion_lint.facts.names import Names
from fusion_lint.facts.parameters import CONTEXT_NAMES
from fusion_lint.facts.syntax import children, dotted, string_value

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Statements whose blocks are searched (a ``match`` is not); their expressions never are.
_BLOCKS = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.ExceptHandler,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)


def class_facts(
    node: ast.ClassDef, methods: list[ast.FunctionDef], names: Names, known: dict[str, ClassFacts]
) -> ClassFacts:
    """The facts of a module-level class; ``known`` are the classes of the module read before it,
    whose stored context a subclass inherits."""
    bases = tuple(
        names.qualify(base.value if type(base) is ast.Subscript else base) or ""
        for base in node.bases
        if type(base) is not ast.Starred
    )
    stored = list(stored_context(methods))
    prefix = names.module_name + "."
    for base in bases:
        local = known.get(base[len(prefix) :]) if base.startswith(prefix) else None
        if local is not None:
            stored += [attribute for attribute in local.context_attributes if attribute not in stored]
    return ClassFacts(node.name, bases, tuple(stored))


def stored_context(methods: Iterable[ast.FunctionDef]) -> Iterator[str]:
    """The attributes a class's methods store their context parameter in (``self.ctx = ctx``), so
    that ``self.ctx.fail(...)`` in any of its methods is ``ctx.fail`` (DESIGN §12.3). A context
    parameter here is read from its spelling alone (an annotation naming a ``...Context`` type,
    or an unannotated ``ctx``/``context``): the class is read before its methods are walked."""
    seen: set[str] = set()
    for method in methods:
        positional = [*method.args.posonlyargs, *method.args.args]
        if not positional:
            continue
        receiver = positional[0].arg
        rest = [*positional[1:], *method.args.kwonlyargs]
        contexts = {param.arg for param in rest if _spelled_as_context(param)}
        if not contexts:
            continue
        stack: list[ast.AST] = list(method.body)
        while stack:
            current = stack.pop()
            kind = type(current)
            if kind is ast.Assign and type(current.value) is ast.Name and current.value.id in contexts:  # type: ignore[attr-defined]  # kind is ast.Assign; mypy does not narrow through kind = type(...)
                for attribute in current.targets:  # type: ignore[attr-defined]  # kind is ast.Assign above; mypy does not narrow through kind = type(...)
                    if (
                        type(attribute) is ast.Attribute
                        and type(attribute.value) is ast.Name
                        and attribute.value.id == receiver
                        and attribute.attr not in seen
                    ):
                        seen.add(attribute.attr)
                        yield attribute.attr
            elif isinstance(current, _BLOCKS):
                stack.extend(child for child in children(current) if isinstance(child, (ast.stmt, ast.ExceptHandler)))


def _spelled_as_context(param: ast.arg) -> bool:
    if param.annotation is None:
        return param.arg in CONTEXT_NAMES
    stack: list[ast.AST] = [param.annotation]
    while stack:  # ``Context``, ``fastmcp.Context``, ``Context | None``, ``Optional[Context]``, ``"Context"``
        current = stack.pop()
        text = string_value(current)
        name = text if isinstance(text, str) else dotted(current)
        if name is not None and name.rpartition(".")[2] == "Context":
            return True
        if type(current) is not ast.Name and type(current) is not ast.Attribute:
            stack.extend(children(current))
    return False
