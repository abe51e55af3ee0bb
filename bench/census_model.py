"""The census interpreter's data: a unit's modules, the frames it runs them in, the registrations it finds."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from census_values import ClsV, FuncV


@dataclass
class Module:
    path: Path
    rel: str  # path relative to the corpus root, for output
    tree: ast.Module
    lines: list
    names: list  # every dotted name this module can be imported as
    framework: str | None  # the framework its imports name (for unannotated receivers)
    frame: Any = None
    state: str = "new"


@dataclass
class Frame:
    module: Module
    kind: str  # "module" | "class" | "function"
    parent: Frame | None = None
    func: FuncV | None = None
    cls: ClsV | None = None
    vars: dict = field(default_factory=dict)
    global_names: set = field(default_factory=set)
    returns: list = field(default_factory=list)

    def scope_name(self) -> str:
        if self.kind == "function" and self.func is not None:
            return self.func.qualname
        if self.kind == "class" and self.cls is not None:
            return self.cls.qualname
        return "<module>"


@dataclass
class Registration:
    kind: str  # tool | resource | prompt | dispatcher | listed-tool | listed-resource | ...
    framework: str
    form: str
    name: str | None
    file: str
    line: int
    col: int
    handler: str | None
    handler_file: str | None
    handler_line: int | None
    handler_form: str
    server: str | None
    server_name: str | None
    scope: str
    via: list  # the unit functions being run when it registered, outermost first
    call_sites: list  # the calls that led there, outermost first ("file:line")
    conditional: bool
    loop: bool
    reached: bool
    decorators: list = field(default_factory=list)
    uri: str | None = None
    version: str | None = None  # fastmcp 3: one name may have several versions
    mounted_as: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    request_time: bool = False  # made inside a registered handler's body, while that tool runs
    server_ref: Any = None  # the ServerV (not serialised)
    handler_ref: Any = None  # the handler's FuncV (not serialised)
    receiver_ref: Any = None  # a bound method's receiver (not serialised)
    handler_node: Any = None  # the handler's def node (not serialised)
    handler_module: Any = None  # its Module (not serialised)
    dedupe: Any = None

    def as_json(self) -> dict:
        skip = {"server_ref", "handler_ref", "receiver_ref", "handler_node", "handler_module", "dedupe"}
        return {k: v for k, v in self.__dict__.items() if k not in skip}
