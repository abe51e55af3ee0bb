"""Registration helpers (DESIGN §12.2): a project function that is handed the server and registers on
it — ``def audited_tool(mcp, name, **kw): def decorator(fn): ...; mcp.tool(name=name)(wrapper)`` —
and the calls that use one, ``audited_tool(mcp, "create_job")(self.create_job)`` or
``@audited_tool(mcp, "create_job")``.

Each side is recorded as what it is: the helper's registration as a ``HelperTemplate`` (which of
its parameters the server, the name and the handler come from), a call that hands a server to
some function and passes the result a function as a ``HelperCall``. Which calls reach which
helper is for the project view to find (``project.helpers``): the helper is usually in another file.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from fusion_lint.facts.model import FileFacts, HelperArgument, HelperTemplate, ServerRef
from fusion_lint.facts.names import Names, Scope
from fusion_lint.facts.positions import Cursor
from fusion_lint.facts.syntax import args_of, is_name_or_attribute, name_value, string_value
from fusion_lint.facts.values import Values

# What this module reads of ``definitions.Definitions``, its ``Registration`` and ``Enclosing``
# (that module calls this one: it is not imported here).


class Enclosing(Protocol):  # (all of definitions.Enclosing: ``receiver`` takes one)
    scope: Scope
    servers: dict[str, ServerRef]
    loose_params: set[str]
    param_names: set[str]
    qualprefix: str


class Registration(Protocol):
    dispatcher: bool
    name_node: ast.expr | None
    extra: dict[str, Any]


class Definitions(Protocol):
    facts: FileFacts
    names: Names
    values: Values
    wraps_kept: set[str]

    def receiver(self, node: ast.AST, walker: Enclosing | None) -> ServerRef | None: ...


# Decorator factories that are never registration helpers (their arguments are no server).
_NOT_HELPERS = ("functools.", "contextlib.", "typing.", "dataclasses.", "pytest.", "unittest.")


def template(
    definitions: Definitions,
    registration: Registration,
    target: ast.expr | None,
    handler: str | None,
    walker: Enclosing | None,
) -> HelperTemplate | None:
    """The helper template a registration inside a function is, when its server is a parameter of
    an enclosing function ``F`` and it registers, from a function ``F.D`` that ``F`` defines, ``D``'s
    first parameter or a function nested in ``D`` (the wrapper ``D`` returns around it)."""
    receiver = name_value(registration.extra.get("receiver"))
    if walker is None or receiver is None or registration.dispatcher:
        return None
    functions = definitions.facts.functions
    decorator = walker.qualprefix.rstrip(".")
    owner = decorator.rpartition(".")[0]
    inner, outer = functions.get(decorator), functions.get(owner)
    if inner is None or outer is None or not inner.params or receiver in inner.params:
        return None
    if receiver not in outer.params:
        return None
    if target is not None and name_value(target) == inner.params[0]:
        handler_is_param, keeps_name = True, True
    elif handler is not None and handler.startswith(decorator + ".") and handler != decorator:
        handler_is_param, keeps_name = False, handler in definitions.wraps_kept
    else:
        return None
    name_node = registration.name_node
    name_param = name_value(name_node) if name_value(name_node) in outer.params else None
    return HelperTemplate(
        function=owner,
        server_param=receiver,
        decorator=decorator,
        name_param=name_param,
        named=name_node is not None,
        handler_is_param=handler_is_param,
        keeps_name=keeps_name,
        param_only=bool(registration.extra.get("param_only")),
    )


def call_arguments(
    definitions: Definitions,
    call: ast.Call,
    walker: Enclosing | None,
    at: Cursor,
) -> tuple[str, tuple[HelperArgument, ...]] | None:
    """(the callee's qualified name, the arguments) of ``call`` when it may be a registration
    helper's: a call of a named function, one of whose arguments is a server or a parameter a
    server may arrive through; None otherwise."""
    found = args_of(call)
    if not is_name_or_attribute(call.func) or not found:
        return None
    names, scope = definitions.names, walker.scope if walker is not None else None
    callee = names.qualify(call.func, scope)
    if callee is None or callee.startswith(_NOT_HELPERS) or names.api_of(callee)[0] is not None:
        return None
    arguments = []
    for arg in found:
        span = definitions.values.spans.at(arg.value, at)
        keyword = arg.keyword
        if arg.star:
            arguments.append(HelperArgument(span, keyword, star=True))
            continue
        value = arg.value
        text = string_value(value)
        if isinstance(text, str):
            arguments.append(HelperArgument(span, keyword, text=text))
        elif name_value(value) == "None":
            arguments.append(HelperArgument(span, keyword, is_none=True))
        elif is_name_or_attribute(value):
            arguments.append(
                HelperArgument(
                    span, keyword, ref=names.qualify(value, scope), server=_server(definitions, value, walker)
                )
            )
        else:
            arguments.append(HelperArgument(span, keyword))
    if not any(argument.server is not None for argument in arguments):
        return None
    return callee, tuple(arguments)


def _server(definitions: Definitions, node: ast.expr, walker: Enclosing | None) -> ServerRef | None:
    """The server ``node`` is, or may be: a parameter of the enclosing function (whatever its
    annotation says: ``mcp: Any``) is the framework the module imports, if it imports one."""
    server = definitions.receiver(node, walker)
    if server is not None:
        return server
    if walker is not None and name_value(node) in walker.param_names:
        return ServerRef(definitions.names.imported_framework if definitions.names.imports_framework else "unknown")
    return None
