"""What a function's parameters say: its context, the servers it is handed, its receiver, the
wrapper calls of a decorator's function parameter.

Mixed into ``bodies.FunctionWalker``, whose state (scope, servers, context names) it sets up."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from fusion_lint.facts.frameworks import framework_of_class
from fusion_lint.facts.model import FunctionFacts, ServerRef, Try
from fusion_lint.facts.names import Names, Scope
from fusion_lint.facts.syntax import dotted, name_value, string_value

CONTEXT_NAMES = ("ctx", "context")


class ParameterReading:
    ex: Any  # ``bodies.Module``: the module being walked
    names: Names
    scope: Scope
    servers: dict[str, ServerRef]
    loose_params: set[str]
    param_names: set[str]
    ctx_names: set[str]
    ctx_attributes: set[str]

    facts_stack: list[FunctionFacts]
    try_bodies: list[Try]

    def _wrapper_call(self, func: ast.expr) -> None:
        """``func(*args)`` in a function nested in a decorator ``def deco(func)``: the wrapper calls
        the decorated function, in these try statements (a catch-all there absorbs its raises)."""
        name = name_value(func)
        for facts in self.facts_stack[1:] if name is not None else ():
            if facts.params and facts.params[0] == name:
                facts.wrapper_calls.append(tuple(reversed(self.try_bodies)))
                return

    def _bind_receiver(self, node: ast.FunctionDef, class_name: str) -> None:
        """In a method, ``self.helper()``/``cls.helper()`` is ``Class.helper``: follow it there."""
        if any(dotted(d) == "staticmethod" for d in node.decorator_list):
            return
        positional = [*node.args.posonlyargs, *node.args.args]
        if positional:
            receiver = positional[0].arg
            self.scope[receiver] = f"{self.names.module_name}.{class_name}"
            stored = self.ex.facts.classes.get(class_name)
            if stored is not None:
                self.ctx_attributes.update(f"{receiver}.{attribute}" for attribute in stored.context_attributes)

    def _find_context(self, params: ast.arguments, facts: FunctionFacts) -> None:
        all_params = [*params.posonlyargs, *params.args, *params.kwonlyargs]
        facts.params = [param.arg for param in all_params]
        self.param_names.update(facts.params)
        found = None
        for param in all_params:
            annotation = param.annotation
            if annotation is not None and any(
                qname == "Context" or self.names.api_of(qname)[0] == "Context"
                for qname in self._annotation_qnames(annotation)
            ):
                found = param.arg
                break
        if found is None:
            # By name only when nothing says otherwise: ``ctx: dict`` is an ordinary argument.
            for param in all_params:
                if param.arg in CONTEXT_NAMES and (
                    param.annotation is None
                    or any("context" in q.rpartition(".")[2].lower() for q in self._annotation_qnames(param.annotation))
                ):
                    found = param.arg
                    break
        for param in all_params:
            name = param.arg
            self.servers.pop(name, None)
            self.loose_params.discard(name)
            if param.annotation is None:
                if name not in self.scope and name != found:  # not ``self``, not the context
                    self.loose_params.add(name)
                continue
            framework = next(
                (f for q in self._annotation_qnames(param.annotation) if (f := framework_of_class(q)) is not None), None
            )
            if framework is not None:
                self.servers[name] = ServerRef(framework)
        if found is not None:
            self.ctx_names.add(found)
            facts.context_param = found
        # A parameter that shadows an outer context name is no longer the context.
        for param in all_params:
            if param.arg != found:
                self.ctx_names.discard(param.arg)

    def _annotation_qnames(self, annotation: ast.expr) -> Iterator[str]:
        """Qualified names an annotation may stand for: ``Context``, ``"Context"``,
        ``Optional[Context]``, ``Context | None``, ``Annotated[Context, ...]``."""
        text = string_value(annotation)
        if isinstance(text, str):
            yield text
        elif type(annotation) is ast.BinOp and type(annotation.op) is ast.BitOr:
            yield from self._annotation_qnames(annotation.left)
            yield from self._annotation_qnames(annotation.right)
        elif type(annotation) is ast.Subscript:
            index = annotation.slice
            for element in index.elts if type(index) is ast.Tuple else [index]:
                if type(element) is not ast.Slice:
                    yield from self._annotation_qnames(element)
        else:
            qname = self.names.qualify(annotation, self.scope)
            if qname is not None:
                yield qname
