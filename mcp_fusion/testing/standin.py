"""A harmless stand-in for a framework's ``Context`` when a contracted tool is called alone in a test.

mcp 1.x ``FastMCP``, mcp 2.x ``MCPServer`` and fastmcp inject their own ``Context``; called without a
server (``run_tool_contract(get_invoice, {...})``) a tool still gets one: logging and progress are
recorded (a test can assert on them) and go nowhere else, the request identifiers are fixed, and
what needs a live client (sampling, elicitation, reading another resource) raises a clear error —
pass ``context=`` your own fake for those, or the server and the tool name.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

try:  # Python 3.10+: ``X | Y`` unions have their own origin type.
    from types import UnionType
except ImportError:  # pragma: no cover
    UnionType = Union  # type: ignore[misc,assignment]  # Python < 3.10 only: typing.Union stands in for types.UnionType

#: Packages whose ``Context`` class a framework injects into the parameter annotated with it.
FRAMEWORK_PACKAGES = ("mcp", "fastmcp")
_NEEDS_A_CLIENT = frozenset({"sample", "elicit", "read_resource", "list_roots", "send_notification"})


class Context:
    """What a contracted handler receives for its framework ``Context`` when no server runs it.

    Exported as ``StandInContext``; its class is named ``Context`` because that is how the boundary
    recognises (and leaves out of the logged arguments) the context a framework injects.
    """

    request_id = "run_tool_contract"
    client_id = None
    session_id = None
    session = None
    request_context = None
    lifespan_context = None
    fastmcp = None

    def __init__(self) -> None:
        #: ``(level, message)`` of every log call, in order.
        self.logs: list[tuple[str, str]] = []
        #: ``(progress, total, message)`` of every progress report, in order.
        self.progress: list[tuple[float, float | None, str | None]] = []

    async def log(self, level: Any, message: Any = None, *args: Any, **kwargs: Any) -> None:
        self.logs.append((str(level), str(message)))

    async def debug(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.logs.append(("debug", str(message)))

    async def info(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.logs.append(("info", str(message)))

    async def warning(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.logs.append(("warning", str(message)))

    async def error(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.logs.append(("error", str(message)))

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None, *args: Any, **kwargs: Any
    ) -> None:
        self.progress.append((progress, total, message))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        needs = " needs a live client" if name in _NEEDS_A_CLIENT else " is not part of the stand-in"
        raise AttributeError(
            f"ctx.{name}{needs}: run_tool_contract called the tool without a server. Pass context=<your fake> "
            "to give the tool one, or pass the server (app) and the tool name to run it in memory"
        )

    def __repr__(self) -> str:
        return f"StandInContext(logs={len(self.logs)}, progress={len(self.progress)})"


StandInContext = Context


def context_parameters(fn: Callable[..., Any]) -> list[str]:
    """The parameters of ``fn`` that a framework (or ``mcp_fusion``) fills with its ``Context``."""
    target = inspect.unwrap(fn)
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: read the spelling
        hints = {}
    found = []
    for parameter in inspect.signature(target).parameters.values():
        annotation = hints.get(parameter.name, parameter.annotation)
        if _is_context(annotation):
            found.append(parameter.name)
    return found


def _is_context(annotation: Any) -> bool:
    if isinstance(annotation, str):
        text = annotation.strip().strip("'\"").replace("Optional[", "").rstrip("]").split("|")[0].strip()
        return text == "Context" or text.endswith(".Context")
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _is_context(get_args(annotation)[0])
    if origin is Union or origin is UnionType:
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        return len(members) == 1 and _is_context(members[0])
    if not isinstance(annotation, type):
        return False
    from ..context import Context as FusionContext

    if issubclass(annotation, FusionContext):
        return True
    return any(
        base.__name__ == "Context" and (base.__module__ or "").split(".")[0] in FRAMEWORK_PACKAGES
        for base in annotation.__mro__
    )
