"""Declaring tools, resources and prompts (DESIGN §3.3).

``tool``/``resource``/``prompt`` return a decorator; ``tool("x")(fn)`` is the same thing as a call.
The result is a definition object that stays callable (``fetch_articles(...)`` still runs the
handler, handy in tests) and carries what serving needs: the validated contract, the argument
model and the JSON schemas. Definition time validates types only; style is the linter's job.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from .context import Context
from .contract import ErrorContract, coerce_contract
from .signature import HandlerSignature, analyze_handler, argument_field_name

HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])


class Definition(Generic[HandlerT]):
    """What tools, resources and prompts share: a name, a handler and how to call it."""

    kind: str = "definition"

    def __init__(self, name: str, handler: HandlerT, description: str | None, signature: HandlerSignature) -> None:
        self.name = name
        self.handler: HandlerT = handler
        self.description = description if description is not None else _docstring(handler)
        self.signature = signature
        # Look like the handler to introspection (name, docs, ``inspect.unwrap``).
        functools.update_wrapper(self, handler, updated=())

    @property
    def owner(self) -> str:
        """How this definition is named in messages: ``tool 'x'``, ``resource 'uri'``, ``prompt 'p'``."""
        return f"{self.kind} {self.name!r}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.handler(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ContractDefinition(Definition[HandlerT]):
    """A definition that declares an error contract (tools and resources; never prompts)."""

    def __init__(
        self,
        name: str,
        handler: HandlerT,
        description: str | None,
        signature: HandlerSignature,
        errors: tuple[ErrorContract, ...],
    ) -> None:
        super().__init__(name, handler, description, signature)
        self.errors = errors
        self._by_reason: dict[str, ErrorContract] = {}
        for entry in errors:
            self._by_reason.setdefault(entry.reason, entry)

    @property
    def declared_reasons(self) -> tuple[str, ...]:
        return tuple(self._by_reason)

    def entry(self, reason: str | None) -> ErrorContract | None:
        """The contract entry declaring ``reason``, or ``None``."""
        return self._by_reason.get(reason) if isinstance(reason, str) else None

    def context(self, request_context: Any = None) -> Context:
        """A ``Context`` bound to this definition's contract (pass one to the handler in tests)."""
        return Context._of_definition(self.errors, self._by_reason, self.owner, request_context)


class ToolDefinition(ContractDefinition[HandlerT]):
    kind = "tool"

    def __init__(
        self,
        name: str,
        handler: HandlerT,
        *,
        description: str | None,
        title: str | None,
        errors: tuple[ErrorContract, ...],
        annotations: dict[str, Any] | None,
        signature: HandlerSignature,
    ) -> None:
        super().__init__(name, handler, description, signature, errors)
        self.title = title
        self.annotations = annotations

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.signature.input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.signature.output_schema


_TEMPLATE_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ResourceDefinition(ContractDefinition[HandlerT]):
    """A resource; ``{variables}`` in ``uri_template`` are handler parameters of the same name."""

    kind = "resource"

    def __init__(
        self,
        uri_template: str,
        handler: HandlerT,
        *,
        name: str,
        description: str | None,
        errors: tuple[ErrorContract, ...],
        signature: HandlerSignature,
    ) -> None:
        super().__init__(uri_template, handler, description, signature, errors)
        self.uri_template = uri_template
        self.resource_name = name
        self.variables: tuple[str, ...] = tuple(_TEMPLATE_VARIABLE.findall(uri_template))
        self._pattern = re.compile(_template_regex(uri_template))

    @property
    def is_template(self) -> bool:
        return bool(self.variables)

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables of ``uri`` when it is one of this resource's URIs, else ``None``."""
        found = self._pattern.fullmatch(uri)
        return found.groupdict() if found else None


class PromptDefinition(Definition[HandlerT]):
    kind = "prompt"


def tool(
    name: str,
    *,
    description: str | None = None,
    title: str | None = None,
    errors: list[ErrorContract | Mapping[str, Any]] | tuple[ErrorContract | Mapping[str, Any], ...] | None = None,
    annotations: Mapping[str, Any] | Any | None = None,
) -> Callable[[HandlerT], ToolDefinition[HandlerT]]:
    """Declare a tool: ``@tool("fetch_articles", errors=[...])`` over a sync or async handler.

    ``errors`` is the tool's error contract; ``annotations`` are MCP tool annotations
    (``{"readOnlyHint": True}`` or the SDK's ``ToolAnnotations``). The description defaults to
    the handler's docstring.
    """
    _require_name("tool", name)
    owner = f"tool {name!r}"
    contract = coerce_contract(owner, errors)
    tool_annotations = _coerce_annotations(owner, annotations)

    def decorate(handler: HandlerT) -> ToolDefinition[HandlerT]:
        return ToolDefinition(
            name,
            handler,
            description=description,
            title=title,
            errors=contract,
            annotations=tool_annotations,
            signature=analyze_handler(handler, owner, _model_name(name, "Arguments")),
        )

    return decorate


def resource(
    uri_template: str,
    *,
    name: str | None = None,
    description: str | None = None,
    errors: list[ErrorContract | Mapping[str, Any]] | tuple[ErrorContract | Mapping[str, Any], ...] | None = None,
) -> Callable[[HandlerT], ResourceDefinition[HandlerT]]:
    """Declare a resource: ``@resource("billing://invoices/{invoice_id}", errors=[...])``.

    Each ``{variable}`` of the template must be a handler parameter; the name defaults to the
    handler's function name.
    """
    _require_name("resource", uri_template)
    owner = f"resource {uri_template!r}"
    contract = coerce_contract(owner, errors)

    def decorate(handler: HandlerT) -> ResourceDefinition[HandlerT]:
        signature = analyze_handler(handler, owner, _model_name(name or _handler_name(handler), "Parameters"))
        variables = _TEMPLATE_VARIABLE.findall(uri_template)
        missing = [variable for variable in variables if variable not in signature.argument_names]
        if missing:
            raise TypeError(f"{owner}: template variables {missing} are not parameters of the handler")
        fields = signature.arguments_model.model_fields
        required_extra = [
            argument
            for argument in signature.argument_names
            if argument not in variables and fields[argument_field_name(argument)].is_required()
        ]
        if required_extra:
            raise TypeError(f"{owner}: handler parameters {required_extra} are required but not template variables")
        return ResourceDefinition(
            uri_template,
            handler,
            name=name or _handler_name(handler),
            description=description,
            errors=contract,
            signature=signature,
        )

    return decorate


def prompt(name: str, *, description: str | None = None) -> Callable[[HandlerT], PromptDefinition[HandlerT]]:
    """Declare a prompt. Prompts declare no error contract: there is no ``errors`` parameter."""
    _require_name("prompt", name)
    owner = f"prompt {name!r}"

    def decorate(handler: HandlerT) -> PromptDefinition[HandlerT]:
        signature = analyze_handler(handler, owner, _model_name(name, "Arguments"))
        return PromptDefinition(name, handler, description, signature)

    return decorate


def _require_name(kind: str, name: Any) -> None:
    if callable(name) and not isinstance(name, str):
        raise TypeError(f'@{kind} needs a name: write @{kind}("name", ...), not a bare @{kind}')
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"{kind}: the name must be a non-empty string, got {name!r}")


def _coerce_annotations(owner: str, annotations: Any) -> dict[str, Any] | None:
    if annotations is None:
        return None
    if isinstance(annotations, Mapping):
        return dict(annotations)
    dump = getattr(annotations, "model_dump", None)
    if callable(dump):  # the SDK's ToolAnnotations, without importing the SDK here
        dumped: dict[str, Any] = dump(by_alias=True, exclude_none=True)
        return dumped
    raise TypeError(f"{owner}: annotations= must be a dict or ToolAnnotations, got {type(annotations).__name__}")


def _model_name(name: str, suffix: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(word[:1].upper() + word[1:] for word in words if word) + suffix


def _handler_name(handler: Callable[..., Any]) -> str:
    return getattr(handler, "__name__", type(handler).__name__)


def _docstring(handler: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(handler)
    return doc or None


def _template_regex(uri_template: str) -> str:
    pattern, position = [], 0
    for found in _TEMPLATE_VARIABLE.finditer(uri_template):
        pattern.append(re.escape(uri_template[position : found.start()]))
        # One path segment per variable: ``{id}`` never swallows a ``/``.
        pattern.append(f"(?P<{found.group(1)}>[^/]+)")
        position = found.end()
    pattern.append(re.escape(uri_template[position:]))
    return "".join(pattern)
