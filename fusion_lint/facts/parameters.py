"""What a function's parameters say: its context, the servers it is handed, its receiver, the
wrapper calls of a decorator's function parameter.

Mixed into ``bodies.FunctionWalker``, whose state (scope, servers, context names) it sets up."""
from __future__ import annotations

from typing import Any, Iterator

import libcst as cst

from .frameworks import framework_of_class
from .model import FunctionFacts, ServerRef, Try
from .names import Names, Scope
from .syntax import dotted, string_value

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

    def _wrapper_call(self, func: cst.BaseExpression) -> None:
        """``func(*args)`` in a function nested in a decorator ``def deco(func)``: the wrapper calls
        the decorated function, in these try statements (a catch-all there absorbs its raises)."""
        for facts in self.facts_stack[1:] if isinstance(func, cst.Name) else ():
            if facts.params and facts.params[0] == func.value:
                facts.wrapper_calls.append(tuple(reversed(self.try_bodies)))
                return

    def _bind_receiver(self, node: cst.FunctionDef, class_name: str) -> None:
        """In a method, ``self.helper()``/``cls.helper()`` is ``Class.helper``: follow it there."""
        if any(dotted(d.decorator) == "staticmethod" for d in node.decorators):
            return
        positional = [*node.params.posonly_params, *node.params.params]
        if positional:
            receiver = positional[0].name.value
            self.scope[receiver] = f"{self.names.module_name}.{class_name}"
            stored = self.ex.facts.classes.get(class_name)
            if stored is not None:
                self.ctx_attributes.update(f"{receiver}.{attribute}" for attribute in stored.context_attributes)

    def _find_context(self, params: cst.Parameters, facts: FunctionFacts) -> None:
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        facts.params = [param.name.value for param in all_params]
        self.param_names.update(facts.params)
        found = None
        for param in all_params:
            annotation = param.annotation.annotation if param.annotation is not None else None
            if annotation is not None and any(
                qname == "Context" or self.names.api_of(qname)[0] == "Context"
                for qname in self._annotation_qnames(annotation)
            ):
                found = param.name.value
                break
        if found is None:
            # By name only when nothing says otherwise: ``ctx: dict`` is an ordinary argument.
            for param in all_params:
                if param.name.value in CONTEXT_NAMES and (
                    param.annotation is None
                    or any("context" in q.rpartition(".")[2].lower()
                           for q in self._annotation_qnames(param.annotation.annotation))
                ):  # fmt: skip
                    found = param.name.value
                    break
        for param in all_params:
            name = param.name.value
            self.servers.pop(name, None)
            self.loose_params.discard(name)
            if param.annotation is None:
                if name not in self.scope and name != found:  # not ``self``, not the context
                    self.loose_params.add(name)
                continue
            framework = next((f for q in self._annotation_qnames(param.annotation.annotation)
                              if (f := framework_of_class(q)) is not None), None)  # fmt: skip
            if framework is not None:
                self.servers[name] = ServerRef(framework)
        if found is not None:
            self.ctx_names.add(found)
            facts.context_param = found
        # A parameter that shadows an outer context name is no longer the context.
        for param in all_params:
            if param.name.value != found:
                self.ctx_names.discard(param.name.value)

    def _annotation_qnames(self, annotation: cst.BaseExpression) -> Iterator[str]:
        """Qualified names an annotation may stand for: ``Context``, ``"Context"``,
        ``Optional[Context]``, ``Context | None``, ``Annotated[Context, ...]``."""
        text = string_value(annotation)
        if isinstance(text, str):
            yield text
        elif isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            yield from self._annotation_qnames(annotation.left)
            yield from self._annotation_qnames(annotation.right)
        elif isinstance(annotation, cst.Subscript):
            for element in annotation.slice:
                if isinstance(element.slice, cst.Index):
                    yield from self._annotation_qnames(element.slice.value)
        else:
            qname = self.names.qualify(annotation, self.scope)
            if qname is not None:
                yield qname
