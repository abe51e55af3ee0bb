"""Module-level classes as facts: their bases and where their methods store the context (DESIGN §12.3).

The project view follows a method call (``self.helper()``, ``svc.handle``) through the class and its
bases in MRO order, across files; ``self.ctx.fail(...)`` counts as ``ctx.fail`` in a class that
stores its context as ``self.ctx = ctx``.
"""
from __future__ import annotations

from typing import Iterable, Iterator

import libcst as cst

from .parameters import CONTEXT_NAMES
from .model import ClassFacts
from .names import Names
from .syntax import children, dotted, string_value


def class_facts(node: cst.ClassDef, methods: list[cst.FunctionDef], names: Names, known: dict[str, ClassFacts]) -> ClassFacts:
    """The facts of a module-level class; ``known`` are the classes of the module read before it,
    whose stored context a subclass inherits."""
    bases = tuple(
        names.qualify(arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value) or ""
        for arg in node.bases if arg.keyword is None and not arg.star
    )  # fmt: skip
    stored = list(stored_context(methods))
    prefix = names.module_name + "."
    for base in bases:
        local = known.get(base[len(prefix) :]) if base.startswith(prefix) else None
        if local is not None:
            stored += [attribute for attribute in local.context_attributes if attribute not in stored]
    return ClassFacts(node.name.value, bases, tuple(stored))


def stored_context(methods: Iterable[cst.FunctionDef]) -> Iterator[str]:
    """The attributes a class's methods store their context parameter in (``self.ctx = ctx``), so
    that ``self.ctx.fail(...)`` in any of its methods is ``ctx.fail`` (DESIGN §12.3). A context
    parameter here is read from its spelling alone (an annotation naming a ``...Context`` type,
    or an unannotated ``ctx``/``context``): the class is read before its methods are walked."""
    seen: set[str] = set()
    for method in methods:
        positional = [*method.params.posonly_params, *method.params.params]
        if not positional:
            continue
        receiver = positional[0].name.value
        rest = [*positional[1:], *method.params.kwonly_params]
        contexts = {param.name.value for param in rest if _spelled_as_context(param)}
        if not contexts:
            continue
        stack: list[cst.CSTNode] = [method.body]
        while stack:
            current = stack.pop()
            if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(current, cst.Assign) and isinstance(current.value, cst.Name) and current.value.value in contexts:
                for target in current.targets:
                    attribute = target.target
                    if (isinstance(attribute, cst.Attribute) and isinstance(attribute.value, cst.Name)
                            and attribute.value.value == receiver and attribute.attr.value not in seen):  # fmt: skip
                        seen.add(attribute.attr.value)
                        yield attribute.attr.value
            elif isinstance(current, (cst.BaseSuite, cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.Else,
                                      cst.ExceptHandler, cst.Finally)):  # fmt: skip
                stack.extend(child for child in children(current) if not isinstance(child, cst.BaseExpression))


def _spelled_as_context(param: cst.Param) -> bool:
    if param.annotation is None:
        return param.name.value in CONTEXT_NAMES
    stack: list[cst.CSTNode] = [param.annotation.annotation]
    while stack:  # ``Context``, ``fastmcp.Context``, ``Context | None``, ``Optional[Context]``, ``"Context"``
        current = stack.pop()
        text = string_value(current)
        name = text if isinstance(text, str) else dotted(current)
        if name is not None and name.rpartition(".")[2] == "Context":
            return True
        if not isinstance(current, (cst.Name, cst.Attribute)):
            stack.extend(children(current))
    return False
