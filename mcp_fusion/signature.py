"""Reading a handler's signature: its arguments model, JSON schemas and the injected ``Context``.

A handler's parameters are the tool's arguments (plain typed params or pydantic models, as in the
official SDK) plus at most one parameter annotated ``Context``, found by annotation under any name,
also when annotations are strings (``from __future__ import annotations``).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from .context import Context

try:  # Python 3.10+: ``X | Y`` unions have their own origin type.
    from types import UnionType
except ImportError:  # pragma: no cover
    UnionType = Union  # type: ignore[misc,assignment]  # Python < 3.10 only: typing.Union stands in for types.UnionType

_NONE_TYPE = type(None)
_QUOTES = "'\""


@dataclass(frozen=True)
class HandlerSignature:
    """What the runtime needs to know about a handler to call it and to advertise it."""

    #: Name of the parameter the runtime injects a ``Context`` into, if any.
    context_parameter: str | None
    #: The tool's argument names, in signature order (the ``Context`` parameter excluded).
    argument_names: tuple[str, ...]
    #: Names among ``argument_names`` that must be passed positionally (positional-only params).
    positional_only: tuple[str, ...]
    #: Pydantic model validating the arguments a caller sends (unknown keys are rejected).
    arguments_model: type[BaseModel]
    #: JSON schema of the arguments, as advertised in ``tools/list``.
    input_schema: dict[str, Any]
    #: JSON schema of a structured result (pydantic model, dataclass or TypedDict return), else ``None``.
    output_schema: dict[str, Any] | None
    #: Serialises a returned value for ``structured_content`` when there is an output schema.
    output_adapter: TypeAdapter[Any] | None
    is_async: bool

    def call_arguments(self, validated: BaseModel) -> tuple[list[Any], dict[str, Any]]:
        """Split validated arguments into ``(args, kwargs)`` for calling the handler."""
        values = {name: getattr(validated, argument_field_name(name)) for name in self.argument_names}
        args = [values.pop(name) for name in self.positional_only]
        return args, values


def analyze_handler(fn: Callable[..., Any], owner: str, model_name: str) -> HandlerSignature:
    """Inspect ``fn``; raise ``TypeError`` naming ``owner`` when its signature cannot be served."""
    if not callable(fn):
        raise TypeError(f"{owner}: the handler must be callable, got {type(fn).__name__}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{owner}: cannot read the handler's signature: {exc}") from None
    hints = _resolve_hints(fn, signature, owner)

    context_parameter: str | None = None
    fields: dict[str, Any] = {}
    argument_names: list[str] = []
    positional_only: list[str] = []
    for parameter in signature.parameters.values():
        annotation = hints.get(parameter.name, parameter.annotation)
        if _is_context_annotation(annotation):
            if context_parameter is not None:
                raise TypeError(
                    f"{owner}: parameters {context_parameter!r} and {parameter.name!r} are both annotated "
                    "Context; a handler receives at most one"
                )
            context_parameter = parameter.name
            continue
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(
                f"{owner}: parameter {parameter.name!r} is variadic; declare each tool argument as its own parameter"
            )
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only.append(parameter.name)
        argument_names.append(parameter.name)
        field_annotation = Any if annotation is inspect.Parameter.empty else annotation
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        if argument_field_name(parameter.name) != parameter.name:
            fields[argument_field_name(parameter.name)] = (field_annotation, Field(default, alias=parameter.name))
        else:
            fields[parameter.name] = (field_annotation, default)

    try:
        arguments_model = create_model(
            model_name,
            __config__=ConfigDict(extra="forbid", populate_by_name=True),
            **fields,
        )
        input_schema = arguments_model.model_json_schema(by_alias=True)
    except Exception as exc:  # pydantic raises several types for unschemable annotations
        raise TypeError(f"{owner}: cannot build the input schema from the handler's parameters: {exc}") from None
    input_schema.setdefault("type", "object")
    input_schema.setdefault("properties", {})

    output_adapter, output_schema = _output_schema(hints.get("return", inspect.Parameter.empty), owner)
    return HandlerSignature(
        context_parameter=context_parameter,
        argument_names=tuple(argument_names),
        positional_only=tuple(positional_only),
        arguments_model=arguments_model,
        input_schema=input_schema,
        output_schema=output_schema,
        output_adapter=output_adapter,
        is_async=_is_async_callable(fn),
    )


def argument_field_name(parameter_name: str) -> str:
    # A parameter named like a BaseModel attribute (``json``, ``schema``, ``copy``...) or starting
    # with an underscore cannot be a pydantic field; it is stored under a safe name with an alias.
    if parameter_name.startswith("_") or hasattr(BaseModel, parameter_name):
        return f"arg_{parameter_name.lstrip('_')}_"
    return parameter_name


def _resolve_hints(fn: Callable[..., Any], signature: inspect.Signature, owner: str) -> dict[str, Any]:
    """Resolve annotations, including string ones; a ``Context`` that cannot be resolved is still found."""
    target = inspect.unwrap(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass  # fall back to one annotation at a time, to say which one failed
    namespace = dict(getattr(target, "__globals__", {}))
    try:
        namespace.update(inspect.getclosurevars(target).nonlocals)
    except (TypeError, ValueError):
        pass
    hints: dict[str, Any] = {}
    annotated = [(p.name, p.annotation) for p in signature.parameters.values()]
    annotated.append(("return", signature.return_annotation))
    for name, annotation in annotated:
        if not isinstance(annotation, str):
            hints[name] = annotation
            continue
        try:
            resolved: Any = annotation
            # A quoted annotation under `from __future__ import annotations` is a string twice over.
            for _ in range(3):
                if not isinstance(resolved, str):
                    break
                resolved = eval(resolved, namespace)  # noqa: S307 - the module's own annotation
            if isinstance(resolved, str):
                raise NameError(resolved)
            hints[name] = resolved
        except Exception:
            if _names_context(annotation):
                hints[name] = Context
            elif name == "return":
                # An unresolvable return annotation only costs the output schema.
                hints[name] = inspect.Parameter.empty
            else:
                raise TypeError(
                    f"{owner}: cannot resolve the annotation {annotation.strip(_QUOTES)!r} of parameter {name!r}; "
                    "import the type at module level"
                ) from None
    return hints


_CONTEXT_SPELLING = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)*Context$")


def _names_context(annotation: str) -> bool:
    """``"Context"``, ``"mcp_fusion.Context"``, ``"mf.Context"``, also ``Optional``/``| None`` forms."""
    text = annotation.strip().strip(_QUOTES)
    for wrapper in ("Optional[", "typing.Optional["):
        if text.startswith(wrapper) and text.endswith("]"):
            text = text[len(wrapper) : -1]
    parts = [part.strip() for part in text.split("|")]
    candidates = [part for part in parts if part != "None"]
    return len(candidates) == 1 and bool(_CONTEXT_SPELLING.match(candidates[0]))


def _is_context_annotation(annotation: Any) -> bool:
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):
        return _names_context(annotation)
    if isinstance(annotation, type):
        return issubclass(annotation, Context)
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _is_context_annotation(get_args(annotation)[0])
    if origin is Union or origin is UnionType:
        members = [arg for arg in get_args(annotation) if arg is not _NONE_TYPE]
        return len(members) == 1 and _is_context_annotation(members[0])
    return False


def _output_schema(annotation: Any, owner: str) -> tuple[TypeAdapter[Any] | None, dict[str, Any] | None]:
    """A structured result needs an object type: a pydantic model, a dataclass or a TypedDict."""
    target = annotation
    if get_origin(target) is typing.Annotated:
        target = get_args(target)[0]
    structured = isinstance(target, type) and (
        issubclass(target, BaseModel) or dataclasses.is_dataclass(target) or typing.is_typeddict(target)
    )
    if not structured:
        return None, None
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        return adapter, adapter.json_schema(mode="serialization")
    except Exception as exc:
        raise TypeError(f"{owner}: cannot build the output schema from the return annotation: {exc}") from None


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    target = inspect.unwrap(fn)
    if inspect.iscoroutinefunction(target):
        return True
    call = getattr(target, "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


def bind_context(signature: HandlerSignature, kwargs: dict[str, Any], context: Context) -> dict[str, Any]:
    """Add the injected ``Context`` to the call's keyword arguments when the handler takes one."""
    if signature.context_parameter is not None:
        kwargs[signature.context_parameter] = context
    return kwargs
