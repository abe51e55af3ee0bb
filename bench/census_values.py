"""Abstract values for the census interpreter (``census_interp``), and the framework tables.

The census reads a unit by *running* its import-time code abstractly: module top levels, the functions
they call, class bodies and ``__init__`` methods, with values that stand for what the real objects
would be (a server, a function, a list of functions, a string...). Everything the interpreter cannot
know is ``UNKNOWN``. Nothing here imports fusion_lint, mcp_fusion or any framework: the frameworks are
names in the tables below, matched after import resolution, however the unit spells or aliases them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

# -- framework tables (qualified names after import resolution) ---------------------------------

MCP1 = "mcp1-FastMCP"
MCP2 = "mcp2-MCPServer"
FASTMCP = "fastmcp"
LOWLEVEL = "lowlevel"

SERVER_CLASSES = {
    "mcp.server.fastmcp.FastMCP": MCP1,
    "mcp.server.fastmcp.server.FastMCP": MCP1,
    "mcp.server.mcpserver.MCPServer": MCP2,
    "mcp.server.mcpserver.server.MCPServer": MCP2,
    "fastmcp.FastMCP": FASTMCP,
    "fastmcp.server.FastMCP": FASTMCP,
    "fastmcp.server.server.FastMCP": FASTMCP,
    # fastmcp 3 component providers: decorators like a server's, served through FastMCP(providers=[...]).
    "fastmcp.server.providers.LocalProvider": FASTMCP,
    "fastmcp.server.providers.local_provider.LocalProvider": FASTMCP,
    # mcp 2.x's Apps extension: tools bound to ui:// resources, served through MCPServer(extensions=[...]).
    "mcp.server.apps.Apps": MCP2,
    "mcp.server.lowlevel.Server": LOWLEVEL,
    "mcp.server.lowlevel.server.Server": LOWLEVEL,
    "mcp.server.Server": LOWLEVEL,
}
# Constructors that build a server whose tools come from elsewhere at run time (a remote server, an
# OpenAPI document): the census records the server, never a tool count.
OPAQUE_SERVER_FACTORIES = {
    "fastmcp.FastMCP.as_proxy": FASTMCP,
    "fastmcp.server.create_proxy": FASTMCP,
    "fastmcp.server.proxy.create_proxy": FASTMCP,
    "fastmcp.FastMCP.from_openapi": FASTMCP,
    "fastmcp.FastMCP.from_fastapi": FASTMCP,
}

_COMPONENT_PREFIXES = {
    "tool": (
        "mcp.server.fastmcp.tools",
        "mcp.server.fastmcp.tools.base",
        "mcp.server.mcpserver.tools",
        "mcp.server.mcpserver.tools.base",
        "fastmcp.tools",
        "fastmcp.tools.tool",
        "fastmcp.tools.function_tool",
    ),
    "prompt": (
        "mcp.server.fastmcp.prompts",
        "mcp.server.fastmcp.prompts.base",
        "mcp.server.mcpserver.prompts",
        "mcp.server.mcpserver.prompts.base",
        "fastmcp.prompts",
        "fastmcp.prompts.prompt",
        "fastmcp.prompts.function_prompt",
    ),
    "resource": (
        "mcp.server.fastmcp.resources",
        "mcp.server.fastmcp.resources.types",
        "mcp.server.fastmcp.resources.templates",
        "mcp.server.mcpserver.resources",
        "mcp.server.mcpserver.resources.types",
        "mcp.server.mcpserver.resources.templates",
        "fastmcp.resources",
        "fastmcp.resources.resource",
        "fastmcp.resources.template",
        "fastmcp.resources.function_resource",
    ),
}
_COMPONENT_CLASSES = {
    "tool": ("Tool", "FunctionTool"),
    "prompt": ("Prompt", "FunctionPrompt"),
    "resource": ("Resource", "FunctionResource", "ResourceTemplate", "FunctionResourceTemplate"),
}


def _framework_of_module(qual: str) -> str:
    if qual.startswith("fastmcp"):
        return FASTMCP
    if qual.startswith("mcp.server.mcpserver"):
        return MCP2
    return MCP1


# "<Class>.from_function" for every framework's component classes -> (kind, framework)
FROM_FUNCTION = {
    f"{prefix}.{cls}.from_function": (kind, _framework_of_module(prefix))
    for kind, prefixes in _COMPONENT_PREFIXES.items()
    for prefix in prefixes
    for cls in _COMPONENT_CLASSES[kind]
}
# Resource objects built directly (``add_resource(TextResource(uri=..., text=...))``): a fn= if any.
RESOURCE_OBJECTS = {
    f"{prefix}.{cls}": _framework_of_module(prefix)
    for prefix in _COMPONENT_PREFIXES["resource"]
    for cls in (
        "TextResource",
        "BinaryResource",
        "FileResource",
        "HttpResource",
        "DirectoryResource",
        "FunctionResource",
    )
}
# fastmcp 3's standalone decorators (discovered by FileSystemProvider or added with add_tool).
STANDALONE_DECORATORS = {
    "fastmcp.tools.tool": "tool",
    "fastmcp.tools.tool.tool": "tool",
    "fastmcp.tools.function_tool.tool": "tool",
    "fastmcp.resources.resource": "resource",
    "fastmcp.resources.function_resource.resource": "resource",
    "fastmcp.prompts.prompt": "prompt",
    "fastmcp.prompts.function_prompt.prompt": "prompt",
}
# The low-level server's wire types (a list_tools handler returns these).
LOWLEVEL_LISTED = {
    "mcp.types.Tool": "tool",
    "mcp_types.Tool": "tool",
    "mcp.types.Resource": "resource",
    "mcp_types.Resource": "resource",
    "mcp.types.ResourceTemplate": "resource",
    "mcp_types.ResourceTemplate": "resource",
    "mcp.types.Prompt": "prompt",
    "mcp_types.Prompt": "prompt",
}
LOWLEVEL_RESULTS = {
    "mcp.types.ListToolsResult": "tools",
    "mcp_types.ListToolsResult": "tools",
    "mcp.types.ListResourcesResult": "resources",
    "mcp_types.ListResourcesResult": "resources",
    "mcp.types.ListPromptsResult": "prompts",
    "mcp_types.ListPromptsResult": "prompts",
}
# Registration methods of the high-level servers -> the kind they register.
DECORATOR_METHODS = {"tool": "tool", "resource": "resource", "prompt": "prompt"}
ADD_METHODS = {
    "add_tool": "tool",
    "add_resource": "resource",
    "add_template": "resource",
    "add_resource_fn": "resource",
    "add_prompt": "prompt",
}
MOUNT_METHODS = {"mount", "import_server"}
# Low-level handler decorators (1.x) and constructor keywords (2.x) -> (role, kind).
LOWLEVEL_DECORATORS = {
    "call_tool": ("dispatcher", "tool"),
    "list_tools": ("lister", "tool"),
    "read_resource": ("dispatcher", "resource"),
    "list_resources": ("lister", "resource"),
    "list_resource_templates": ("lister", "resource"),
    "get_prompt": ("dispatcher", "prompt"),
    "list_prompts": ("lister", "prompt"),
}
LOWLEVEL_KEYWORDS = {f"on_{name}": role for name, role in LOWLEVEL_DECORATORS.items()}

# The text a function must contain for the interpreter to run it "standalone" when nothing calls it.
INTERESTING_TOKENS = (
    ".tool",
    ".resource",
    ".prompt",
    "add_tool",
    "add_resource",
    "add_prompt",
    "add_template",
    ".mount",
    "import_server",
    "call_tool",
    "list_tools",
    "FastMCP",
    "MCPServer",
    "Server(",
    "from_function",
    "on_call_tool",
)


# -- values ----------------------------------------------------------------------------------------


class Value:
    """Base of every abstract value; ``key`` identifies it for de-duplication and memoisation."""

    def key(self) -> Any:
        return id(self)


class Unknown(Value):
    def key(self) -> Any:
        return "?"

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown()


@dataclass(eq=False)
class Param(Value):
    """A parameter whose argument is not known (standalone execution, unknown call-site argument)."""

    name: str
    func: str
    module: Any

    def key(self) -> Any:
        return ("param", self.func, self.name)


@dataclass(eq=False)
class Const(Value):
    value: Any

    def key(self) -> Any:
        return ("const", type(self.value).__name__, self.value)


@dataclass(eq=False)
class PartialStr(Value):
    """A string with parts the census cannot know (``prefix + "list_instances"``): ``{?}`` marks them."""

    pattern: str

    def key(self) -> Any:
        return ("partial-str", self.pattern)


@dataclass(eq=False)
class Seq(Value):
    items: list
    approximate: bool = False  # built by a filtered comprehension or a loop we could not unroll


@dataclass(eq=False)
class DictV(Value):
    items: list  # [(key Value, value Value)]


@dataclass(eq=False)
class Ext(Value):
    """A name from outside the unit: ``fastmcp.FastMCP``, ``functools.partial``, ``builtins.getattr``."""

    qual: str

    def key(self) -> Any:
        return ("ext", self.qual)


@dataclass(eq=False)
class ModV(Value):
    module: Any  # census_interp.Module
    dotted: str

    def key(self) -> Any:
        return ("mod", self.module.path)


@dataclass(eq=False)
class NsV(Value):
    """A namespace package prefix of unit modules (``awslabs`` without an ``__init__.py``)."""

    dotted: str

    def key(self) -> Any:
        return ("ns", self.dotted)


@dataclass(eq=False)
class FuncV(Value):
    module: Any
    node: ast.AST  # FunctionDef | AsyncFunctionDef | Lambda
    qualname: str
    closure: Any = None  # the defining Frame (None at module level: the module's frame is used)
    cls: Any = None  # ClsV when defined in a class body

    @property
    def name(self) -> str:
        return "<lambda>" if isinstance(self.node, ast.Lambda) else self.node.name

    def key(self) -> Any:
        return ("func", id(self.node))


@dataclass(eq=False)
class ClsV(Value):
    module: Any
    node: ast.ClassDef
    qualname: str
    frame: Any  # the class body's Frame (class attributes)
    bases: list

    def key(self) -> Any:
        return ("cls", id(self.node))


@dataclass(eq=False)
class InstV(Value):
    cls: Any  # ClsV
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False)
class ServerV(Value):
    """An instance of a framework server (or of a unit subclass of one, ``cls`` then set)."""

    framework: str
    label: str  # "<file>:<line>" of the constructor, or "param f.mcp"
    name: str | None = None
    cls: Any = None
    attrs: dict = field(default_factory=dict)
    mask_error_details: bool | None = None
    opaque: bool = False  # a proxy or OpenAPI server: its tools are not in the source
    inferred: bool = False  # an unannotated receiver in a module that imports a framework


@dataclass(eq=False)
class BoundV(Value):
    receiver: Value
    func: FuncV
    via_self: bool = False  # written as self.method

    def key(self) -> Any:
        return ("bound", self.receiver.key(), self.func.key())


@dataclass(eq=False)
class PartialV(Value):
    func: Value

    def key(self) -> Any:
        return ("partial", self.func.key())


@dataclass(eq=False)
class WrappedV(Value):
    """A decorator's result around a function: ``wraps`` says whether the name is the inner one."""

    outer: Value
    inner: Value
    wraps: bool
    note: str

    def key(self) -> Any:
        return ("wrapped", self.outer.key() if self.outer is not None else None, self.inner.key())


@dataclass(eq=False)
class MethodV(Value):
    """``server.tool`` / ``server.add_tool`` / ``param.tool``..., not yet called."""

    receiver: Value
    method: str


@dataclass(eq=False)
class RegDecoV(Value):
    """What ``server.tool(...)`` returns: a decorator that registers what it is applied to."""

    server: ServerV
    method: str
    args: list
    kwargs: dict
    site: ast.AST
    module: Any


@dataclass(eq=False)
class StandaloneDecoV(Value):
    kind: str
    args: list
    kwargs: dict
    site: ast.AST
    module: Any


@dataclass(eq=False)
class ComponentV(Value):
    """``Tool.from_function(fn, name=...)`` and friends, or fastmcp's standalone ``@tool``."""

    kind: str
    framework: str
    fn: Value
    name: str | None
    site: ast.AST
    module: Any
    form: str

    def key(self) -> Any:
        return ("component", id(self.site), self.fn.key())


@dataclass(eq=False)
class ListedV(Value):
    """A low-level ``types.Tool(name=...)`` (or Resource, Prompt) object."""

    kind: str
    name: str | None
    site: ast.AST
    module: Any


@dataclass(eq=False)
class WrapsDecoV(Value):
    inner: Value


@dataclass(eq=False)
class ListMethodV(Value):
    seq: Seq
    method: str


@dataclass(eq=False)
class DictMethodV(Value):
    d: DictV
    method: str


@dataclass(eq=False)
class UnionV(Value):
    options: list

    def key(self) -> Any:
        return ("union", tuple(o.key() for o in self.options))


def union(values: list) -> Value:
    """One value for several possibilities (branches of an ``if``, ``a or b``)."""
    flat: list = []
    seen: set = set()
    for value in values:
        for option in value.options if isinstance(value, UnionV) else [value]:
            if option is UNKNOWN:
                continue
            k = option.key()
            if k not in seen:
                seen.add(k)
                flat.append(option)
    if not flat:
        return UNKNOWN
    return flat[0] if len(flat) == 1 else UnionV(flat)


def options(value: Value) -> list:
    return list(value.options) if isinstance(value, UnionV) else [value]


def is_callable_value(value: Value) -> bool:
    if isinstance(value, UnionV):
        return any(is_callable_value(option) for option in value.options)
    return isinstance(value, (FuncV, BoundV, PartialV, WrappedV))


def literal_str(value: Any) -> str | None:
    if isinstance(value, Const) and isinstance(value.value, str):
        return value.value
    return None


def name_text(value: Any) -> str | None:
    """A literal name, or the pattern of a partly computed one (``{?}list_instances``)."""
    if isinstance(value, PartialStr):
        return value.pattern
    if isinstance(value, UnionV):
        texts = {name_text(o) for o in value.options}
        return texts.pop() if len(texts) == 1 else None
    return literal_str(value)


def short_source(node: ast.AST, limit: int = 70) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
