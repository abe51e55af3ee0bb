"""Registrations through a project helper (DESIGN §12.2): ``audited_tool(mcp, "create_job")(fn)``
where ``audited_tool(mcp, name, **kw)`` returns a decorator whose body registers on ``mcp``.

The helper's own registration (a ``HelperTemplate``) defines nothing by itself: what it registers,
and under which name, depends on each call. Each call (a ``HelperCall``) of a function holding a
template, with a server bound to the template's server parameter, is one definition at the call:
the tool name the framework computes — the argument bound to the helper's name parameter, else
the handler's ``__name__`` (through ``functools.wraps``), else the wrapper's — and the handler
given to the returned decorator, wrapped by the helper's wrapper where the framework calls it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fusion_lint.facts.model import Definition, FunctionFacts, HelperArgument, HelperCall, HelperTemplate

ProjectIndex = Any  # ``index.ProjectIndex``, which calls this module

_MISSING = "missing"  # the call does not pass the parameter (its default: ``None``, as helpers write it)
_UNKNOWN = "unknown"  # a ``*args``/``**kwargs`` spread may pass it: what is bound is not known


def instantiate(index: ProjectIndex, call: HelperCall) -> list[Definition]:
    """The definitions ``call`` makes: one per template of the helper it calls (none when the
    callee is no project function holding one, or no server is handed to it)."""
    found = index.function(call.callee)
    if found is None:
        return []
    function, path = found
    facts = index.files[path]
    made = []
    for template_definition in facts.definitions:
        template = template_definition.template
        if template is None or template.function != function.qualname:
            continue
        if not template.handler_is_param and not _wraps(index, path, template):
            continue
        definition = _bound(index, call, function, path, template_definition, template)
        if definition is not None:
            made.append(definition)
    return made


def _wraps(index: ProjectIndex, path: str, template: HelperTemplate) -> bool:
    """Whether the helper's decorator wraps what it is given: a function nested in it calls its
    first parameter (the wrapper is registered in its place, and calls it)."""
    decorator = index.function_facts(path, template.decorator)
    return decorator is not None and bool(decorator.wrapper_calls)


def _bound(
    index: ProjectIndex,
    call: HelperCall,
    function: FunctionFacts,
    path: str,
    template_definition: Definition,
    template: HelperTemplate,
) -> Definition | None:
    """The definition of one call through one template, with its arguments bound to the helper's
    parameters as Python binds them; None when no server is bound to the server parameter."""
    params = list(function.params)
    owner = function.qualname.rpartition(".")[0]
    if owner in index.files[path].classes and params and params[0] in ("self", "cls"):
        params = params[1:]  # called as a method: the receiver is bound already
    server = _argument(call.arguments, params, template.server_param)
    if not isinstance(server, HelperArgument) or server.server is None:
        return None
    framework_server = server.server
    if framework_server.framework == "unknown" and not template.param_only and template_definition.server is not None:
        framework_server = (
            template_definition.server if template_definition.server.framework != "unknown" else framework_server
        )
    definition = call.definition
    # With no name given the framework takes ``__name__``: the handler's, or the wrapper's own.
    wrapper = (template_definition.handler or "").rpartition(".")[2] or None
    handler_name = definition.name if template.keeps_name else wrapper
    name, name_ref, name_span = handler_name, None, definition.span
    if template.name_param is not None:
        bound = _argument(call.arguments, params, template.name_param)
        if isinstance(bound, HelperArgument) and not bound.is_none:
            name, name_ref, name_span = bound.text, bound.ref, bound.span
        elif bound == _UNKNOWN:
            name = None
    elif template.named:
        name, name_ref = template_definition.name, template_definition.name_ref
    module = index.files[path].module
    wrapped_by = (f"{module}.{template.decorator}",) if module and not template.handler_is_param else ()
    return dataclasses.replace(
        definition,
        kind=template_definition.kind,
        name=name,
        name_ref=name_ref,
        name_span=name_span,
        server=framework_server,
        wrapped_by=wrapped_by,
    )


def _argument(arguments: tuple[HelperArgument, ...], params: list[str], param: str) -> HelperArgument | str:
    """The argument bound to ``param``: by keyword, else by position (until a ``*spread``)."""
    for argument in arguments:
        if argument.keyword == param:
            return argument
    if param not in params:
        return _UNKNOWN if any(a.star for a in arguments) else _MISSING
    position = params.index(param)
    positional = [a for a in arguments if a.keyword is None]
    for index, argument in enumerate(positional):
        if argument.star:
            return _UNKNOWN
        if index == position:
            return argument
    return _UNKNOWN if any(a.star for a in arguments) else _MISSING
