"""The supported framework versions, and every framework internal the adapters rely on (DESIGN §13.4).

The adapters (``@contract`` under mcp 1.x ``FastMCP``, mcp 2.x ``MCPServer``, the ``fastmcp``
package; ``mcp_fusion.integrations``) use a few pieces of each framework that are not its public
API. Each is listed here once, with the shape the adapter expects; before an adapter first uses
a framework (when ``@contract`` decorates a handler while that framework is loaded, when an
integration is installed, when a call is served) the pieces are checked, and a missing or
reshaped one raises :class:`FrameworkInternalsError` naming the framework, its version and the
piece, instead of a silent wrong wire. Where the framework has a public API for what an internal
gave (fastmcp's ``get_context()``, ``ToolResult(is_error=...)`` in 3.x/4.x, middleware hooks),
the adapter uses it and nothing is listed.

``SUPPORTED`` declares the version ranges; ``MATRIX`` the environments in which
``tests/framework_matrix.sh`` tests the oldest and the newest of each (``python -m
mcp_fusion.internals --matrix`` prints them).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any, NamedTuple


class Supported(NamedTuple):
    """One supported framework line: the distribution and its oldest and newest supported versions."""

    distribution: str
    oldest: str
    newest: str

    @property
    def range(self) -> str:
        return f"{self.distribution} {self.oldest} to {self.newest}"


#: The one declaration of what is supported (the README names the oldest mcp 1.x: keep it true).
SUPPORTED: dict[str, Supported] = {
    "mcp1": Supported("mcp", "1.19.0", "1.30.0"),
    "mcp2": Supported("mcp", "2.3.0", "2.3.0"),
    "fastmcp2": Supported("fastmcp", "2.14.0", "2.14.7"),
    "fastmcp3": Supported("fastmcp", "3.0.0", "3.4.11"),
    "fastmcp4": Supported("fastmcp", "4.0.0", "4.2.3"),
}

#: The framework matrix (``tests/framework_matrix.sh``): ``(name, pip requirements)``, one virtual
#: environment each, together holding both ends of every line in ``SUPPORTED`` (a test checks it).
#: Ends share an environment where their requirements allow it. The default environment
#: (``python -m pytest``) is mcp 2.3 with no fastmcp. Framework packages are test-only.
MATRIX: tuple[tuple[str, str], ...] = (
    # mcp 1.19's FastMCP imports a pydantic internal that pydantic 2.12 removed.
    ("mcp1-oldest", "mcp==1.19.0 pydantic>=2.11,<2.12"),
    ("mcp1-newest-fastmcp3-newest", "mcp==1.30.0 fastmcp==3.4.11"),
    ("fastmcp2-newest", "mcp==1.30.0 fastmcp==2.14.7"),
    # fastmcp 2.14.0 and 3.0.0 do not cap mcp below 2: pinned to mcp 1.x, as they were built for.
    ("fastmcp2-oldest", "mcp>=1.19,<2 fastmcp==2.14.0"),
    ("fastmcp3-oldest", "mcp>=1.19,<2 fastmcp==3.0.0"),
    ("fastmcp4-oldest", "mcp==2.3.0 mcp-types==2.3.0 fastmcp==4.0.0"),
    ("fastmcp4-newest", "mcp==2.3.0 mcp-types==2.3.0 fastmcp==4.2.3"),
)


class FrameworkInternalsError(RuntimeError):
    """A framework internal an adapter relies on is missing or has another shape."""

    def __init__(self, framework: str, installed: str, piece: str, problem: str, used_for: str) -> None:
        self.framework = framework
        self.installed = installed
        self.piece = piece
        supported = ", ".join(entry.range for entry in SUPPORTED.values() if entry.distribution == framework)
        super().__init__(
            f"mcp_fusion cannot serve contracts on {framework} {installed}: {piece} {problem} (mcp_fusion uses it "
            f"{used_for}). Supported: {supported}. Install a supported version, or report this with the version."
        )


@dataclass(frozen=True)
class Internal:
    """One framework internal: where it lives, what it must look like, what the adapter uses it for."""

    line: str  # "mcp1", "mcp2" or "fastmcp"
    piece: str  # the dotted name the error gives, and the attribute a test removes
    used_for: str
    #: ``None`` when the piece is there with the expected shape, else what is wrong ("is missing").
    problem: Callable[[], str | None]
    #: Only on these fastmcp majors (``None``: every version of the line).
    majors: tuple[int, ...] | None = None


def _attribute(dotted: str) -> Any:
    """``package.module.Name.attr`` resolved, importing the longest module prefix; raises LookupError."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value: Any = import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(value, name):
                raise LookupError(dotted)
            value = getattr(value, name)
        return value
    raise LookupError(dotted)


def _callable(dotted: str, *parameters: str) -> Callable[[], str | None]:
    """The piece is a callable taking (at least) these parameters."""

    def problem() -> str | None:
        try:
            value = _attribute(dotted)
        except LookupError:
            return "is missing"
        if not callable(value):
            return f"is a {type(value).__name__}, not a function"
        if parameters:
            try:
                accepted = inspect.signature(value).parameters
            except (TypeError, ValueError):
                return None
            missing = [name for name in parameters if name not in accepted]
            if missing and not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
                return f"no longer takes {', '.join(missing)}"
        return None

    return problem


def _own_function(dotted: str) -> Callable[[], str | None]:
    """The class defines this function itself (a stack walk recognises the override's frame, not a base's)."""
    owner, _, name = dotted.rpartition(".")

    def problem() -> str | None:
        try:
            cls = _attribute(owner)
        except LookupError:
            return "is missing (its class is gone)"
        return None if callable(vars(cls).get(name)) else "is no longer defined by its class"

    return problem


def _fields(dotted: str, *names: str) -> Callable[[], str | None]:
    """The piece is a pydantic model (or class) with these fields (or attributes)."""

    def problem() -> str | None:
        try:
            value = _attribute(dotted)
        except LookupError:
            return "is missing"
        known = set(getattr(value, "__pydantic_fields__", None) or {}) | set(dir(value))
        missing = [name for name in names if name not in known]
        return f"has no {', '.join(missing)}" if missing else None

    return problem


def _any_of(*checks: Callable[[], str | None]) -> Callable[[], str | None]:
    """The piece passes one of these checks (the first one's problem is named otherwise)."""

    def problem() -> str | None:
        problems = [check() for check in checks]
        return None if None in problems else problems[0]

    return problem


def _mcp1(attribute: str) -> str:
    return f"mcp.server.fastmcp.{attribute}"


def _mcp2(attribute: str) -> str:
    return f"mcp.server.mcpserver.{attribute}"


#: Every internal, by framework line. ``tests/runtime/test_runtime_internals.py`` removes each one in
#: turn and expects its named error.
INTERNALS: tuple[Internal, ...] = (
    # mcp 1.x FastMCP: no hook anywhere, so the adapter reads what FastMCP itself derives.
    Internal(
        "mcp1",
        _mcp1("utilities.func_metadata.func_metadata"),
        "to learn whether FastMCP gives a tool an output schema, as FastMCP derives it",
        _callable(_mcp1("utilities.func_metadata.func_metadata"), "skip_names"),
    ),
    Internal(
        "mcp1",
        _mcp1("utilities.func_metadata.FuncMetadata.convert_result"),
        "to let its own error results through FastMCP's output-schema check, and to convert a warning's payload",
        _callable(_mcp1("utilities.func_metadata.FuncMetadata.convert_result"), "result"),
    ),
    Internal(
        "mcp1",
        _mcp1("utilities.func_metadata.FuncMetadata.output_schema"),
        "to know whether the error mirror goes to structuredContent or _meta",
        _fields(_mcp1("utilities.func_metadata.FuncMetadata"), "output_schema"),
    ),
    Internal(
        "mcp1",
        _mcp1("tools.base.Tool.run"),
        "to find the tool being served (its registered name) on the call's stack: FastMCP has no hook",
        _fields(_mcp1("tools.base.Tool"), "run", "name", "fn_metadata"),
    ),
    Internal(
        "mcp1",
        _mcp1("resources.types.FunctionResource.read"),
        "to find the resource being read (its URI) on the call's stack",
        _own_function(_mcp1("resources.types.FunctionResource.read")),
    ),
    Internal(
        "mcp1",
        _mcp1("resources.templates.ResourceTemplate.create_resource"),
        "to find the resource template being read (its URI template) on the call's stack",
        _own_function(_mcp1("resources.templates.ResourceTemplate.create_resource")),
    ),
    Internal(
        "mcp1",
        "mcp.types.CallToolResult",
        "to build the error result FastMCP passes through",
        _fields("mcp.types.CallToolResult", "content", "structuredContent", "isError", "meta"),
    ),
    # mcp 2.x MCPServer (its result type is public; mcp_fusion.integrations.mcpserver uses the rest).
    Internal(
        "mcp2",
        _mcp2("utilities.func_metadata.func_metadata"),
        "to learn whether MCPServer gives a tool an output schema, and to convert a warning's payload",
        _callable(_mcp2("utilities.func_metadata.func_metadata"), "skip_names"),
    ),
    Internal(
        "mcp2",
        _mcp2("utilities.func_metadata.FuncMetadata.convert_result"),
        "to convert the payload of a warning as MCPServer does",
        _callable(_mcp2("utilities.func_metadata.FuncMetadata.convert_result"), "result"),
    ),
    Internal(
        "mcp2",
        _mcp2("utilities.func_metadata.FuncMetadata.validate_arguments"),
        "to validate a call's arguments with the tool's own model before MCPServer does",
        _callable(_mcp2("utilities.func_metadata.FuncMetadata.validate_arguments")),
    ),
    Internal(
        "mcp2",
        _mcp2("tools.tool_manager.ToolManager.get_tool"),
        "to look a tool up by name before MCPServer validates its arguments (there is no public lookup)",
        _callable(_mcp2("tools.tool_manager.ToolManager.get_tool"), "name"),
    ),
    Internal(
        "mcp2",
        _mcp2("resources.types.FunctionResource.read"),
        "to find the resource being read on the call's stack when no integration is installed",
        _own_function(_mcp2("resources.types.FunctionResource.read")),
    ),
    Internal(
        "mcp2",
        _mcp2("resources.templates.ResourceTemplate.create_resource"),
        "to find the resource template being read on the call's stack when no integration is installed",
        _own_function(_mcp2("resources.templates.ResourceTemplate.create_resource")),
    ),
    # fastmcp: middleware and ToolResult are public API; the adapter still relies on their shape.
    Internal(
        "fastmcp",
        "fastmcp.server.dependencies.get_context",
        "to tell that fastmcp serves the call (it raises RuntimeError outside one)",
        _callable("fastmcp.server.dependencies.get_context"),
    ),
    Internal(
        "fastmcp",
        "fastmcp.tools.Tool.from_function",
        "to learn whether fastmcp gives a tool an output schema, as fastmcp derives it",
        _callable("fastmcp.tools.Tool.from_function"),
    ),
    Internal(
        "fastmcp",
        "fastmcp.tools.tool._convert_to_content",
        "to convert a warning's payload as fastmcp 2.x does (it has no Tool.convert_result)",
        _callable("fastmcp.tools.tool._convert_to_content"),
        majors=(2,),
    ),
    Internal(
        "fastmcp",
        "fastmcp.tools.tool.ToolResult.to_mcp_result",
        "to carry isError on fastmcp 2.x's ToolResult, which has no is_error",
        _callable("fastmcp.tools.tool.ToolResult.to_mcp_result"),
        majors=(2,),
    ),
    Internal(
        "fastmcp",
        "fastmcp.tools.Tool.convert_result",
        "to convert a warning's payload as fastmcp does",
        _callable("fastmcp.tools.Tool.convert_result"),
        majors=(3, 4),
    ),
    Internal(
        "fastmcp",
        "fastmcp.tools.ToolResult",
        "to return a failure as fastmcp's own result: ToolResult(is_error=True) from fastmcp 3.4, before it a "
        "subclass whose to_mcp_result carries isError",
        _any_of(
            _fields("fastmcp.tools.ToolResult", "is_error", "content", "structured_content", "meta"),
            _callable("fastmcp.tools.ToolResult.to_mcp_result"),
        ),
        majors=(3, 4),
    ),
    Internal(
        "fastmcp",
        "fastmcp.server.middleware.Middleware.on_call_tool",
        "to answer rejected arguments and tell contracted handlers their registered name",
        _callable("fastmcp.server.middleware.Middleware.on_call_tool"),
    ),
)

#: Which sys.modules entry tells that a line's framework is loaded (checked when @contract decorates).
LOADED_BY = {"mcp1": "mcp.server.fastmcp", "mcp2": "mcp.server.mcpserver", "fastmcp": "fastmcp"}

#: Lines already checked in this process (a check reads the framework once).
checked: set[str] = set()


def installed_version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "(not installed)"


def _major(text: str) -> int:
    digits = text.split(".")[0]
    return int(digits) if digits.isdigit() else 0


def check(line: str) -> None:
    """Raise :class:`FrameworkInternalsError` for the first internal of ``line`` that is not as expected."""
    if line in checked:
        return
    distribution = "fastmcp" if line == "fastmcp" else "mcp"
    installed = installed_version(distribution)
    major = _major(installed)
    for internal in INTERNALS:
        if internal.line != line or (internal.majors is not None and major not in internal.majors):
            continue
        problem = internal.problem()
        if problem is not None:
            raise FrameworkInternalsError(distribution, installed, internal.piece, problem, internal.used_for)
    checked.add(line)


def check_loaded() -> None:
    """Check every framework line already imported in this process (``@contract`` calls this)."""
    if len(checked) == len(LOADED_BY):
        return
    for line, module in LOADED_BY.items():
        if line not in checked and module in sys.modules:
            if line == "mcp1" and _major(installed_version("mcp")) != 1:
                continue
            check(line)


if __name__ == "__main__":  # pragma: no cover - tests/framework_matrix.sh reads this
    if sys.argv[1:] == ["--matrix"]:
        for name, requirements in MATRIX:
            print(f"{name}|{requirements}")
    else:
        raise SystemExit("usage: python -m mcp_fusion.internals --matrix")
