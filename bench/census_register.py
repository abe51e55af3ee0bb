"""Registrations for the census interpreter (mixed into ``UnitInterpreter``): what a framework keeps.

A registration's tool name is the framework's (``name=``, else the handler's ``__name__``: ``functools.wraps``
copies it, a wrapper without it replaces it, ``functools.partial`` has none); one definition per (server,
kind, name, version), as the frameworks keep one; a low-level server's ``list_tools`` handler is run to see
the ``types.Tool(name=...)`` it lists, and its dispatcher is a definition of its own.
"""

from __future__ import annotations

import ast

from census_model import Registration
from census_values import (
    FASTMCP,
    LOWLEVEL_DECORATORS,
    UNKNOWN,
    BoundV,
    ComponentV,
    Const,
    FuncV,
    ListedV,
    Param,
    PartialV,
    Seq,
    ServerV,
    UnionV,
    Value,
    WrappedV,
    literal_str,
    name_text,
    options,
    short_source,
)


class RegisterMixin:
    # -- the low-level server ---------------------------------------------------------------------

    def lowlevel_handler(self, server: ServerV, method: str, fn: Value, site, frame, form: str, def_node=None) -> None:
        role, kind = LOWLEVEL_DECORATORS[method]
        if role == "dispatcher":
            label = f"server '{server.name}' {method}" if server.name else f"server {server.label} {method}"
            self.register(
                "dispatcher" if kind == "tool" else f"{kind}-dispatcher",
                server,
                fn,
                form,
                site,
                frame,
                explicit=Const(label),
                def_node=def_node,
            )
            return
        for option in options(fn):
            handler = self.handler_of(option)[0]
            if not isinstance(handler, FuncV):
                continue
            self.lister_sites.add((frame.module.rel, site.lineno))
            collector: list = []
            self.collectors.append(collector)
            result = self.call_function(handler, [], {})
            self.collectors.pop()
            # module-level lists the handler reads (``SAMPLE_TOOLS = [types.Tool(...) for i in range(25)]``)
            referenced = []
            if not isinstance(handler.node, ast.Lambda):
                handler_frame = handler.closure or handler.module.frame
                for name in sorted({n.id for n in ast.walk(handler.node) if isinstance(n, ast.Name)}):
                    referenced.extend(_flatten(self.lookup(name, handler_frame)))
            listed, seen = [], set()
            for item in collector + _flatten(result) + referenced:
                marker = (id(item.site), item.name)
                if item.kind == kind and marker not in seen:
                    seen.add(marker)
                    listed.append(item)
            approximate = any(isinstance(v, Seq) and v.approximate for v in _walk_seqs(result))
            for item in listed:
                self.register(
                    f"listed-{kind}",
                    server,
                    UNKNOWN,
                    f"{method} -> types.{kind.title()}(name=)",
                    item.site,
                    frame,
                    explicit=Const(item.name) if item.name else None,
                    module_override=item.module,
                    lister=handler,
                    notes=["approximate (filtered or partly unknown list)"] if approximate else [],
                )

    # -- registrations ----------------------------------------------------------------------------

    def handler_of(self, fn: Value) -> tuple:
        """(def FuncV or None, handler form, the framework's default name, notes)."""
        if isinstance(fn, FuncV):
            if isinstance(fn.node, ast.Lambda):
                form = "lambda"
            elif fn.cls is not None:
                form = "method"
            elif fn.closure is not None:
                form = "nested def"
            else:
                form = "def"
            return fn, form, fn.name, []
        if isinstance(fn, BoundV):
            return fn.func, "self.method" if fn.via_self else "bound method", fn.func.name, []
        if isinstance(fn, PartialV):
            inner = self.handler_of(fn.func)
            return (
                inner[0],
                f"partial({inner[1]})",
                None,
                inner[3] + ["functools.partial has no __name__: name= is needed"],
            )
        if isinstance(fn, WrappedV):
            inner = self.handler_of(fn.inner)
            name = inner[2] if fn.wraps or fn.outer is None else self.handler_of(fn.outer)[2]
            return inner[0], f"wrapped {inner[1]}", name, inner[3] + [fn.note]
        if isinstance(fn, ComponentV):
            inner = self.handler_of(fn.fn)
            if inner[0] is None and fn.kind == "resource":
                return None, f"{fn.form} object", fn.name, []
            return inner[0], f"{fn.form}({inner[1]})", fn.name or inner[2], inner[3]
        if isinstance(fn, Param):
            return None, f"unresolved (parameter {fn.name})", None, []
        if isinstance(fn, UnionV):
            for option in fn.options:
                inner = self.handler_of(option)
                if inner[0] is not None:
                    return inner[0], inner[1], inner[2], inner[3] + ["one of several values"]
            return None, "unresolved (several values)", None, []
        return None, "unresolved", None, []

    def register(
        self,
        kind: str,
        server: ServerV | None,
        fn: Value,
        form: str,
        site,
        frame,
        explicit=None,
        uri=None,
        def_node=None,
        notes=None,
        module_override=None,
        lister=None,
        version=None,
    ):
        module = module_override or frame.module
        last = None
        for option in options(fn) if fn is not UNKNOWN else [UNKNOWN]:
            if (
                isinstance(option, ComponentV)
                and getattr(option, "registration", None) is not None
                and server is not None
            ):
                attached = option.registration
                attached.server, attached.server_name = server.label, server.name
                attached.framework, attached.server_ref = server.framework, server
                attached.form = f"{form} of {attached.form}"
                last = attached
                continue
            handler, handler_form, default_name, handler_notes = self.handler_of(option)
            if lister is not None:
                handler, handler_form = lister, "list_tools handler"
            name = name_text(explicit) if explicit is not None else default_name
            if explicit is not None and literal_str(explicit) is None:
                handler_notes = handler_notes + [f"name= is computed: {type(explicit).__name__}"]
            decorators = []
            if def_node is not None:
                decorators = [short_source(d, 60) for d in def_node.decorator_list if d is not site]
            registration = Registration(
                kind=kind,
                framework=server.framework if server is not None else FASTMCP,
                form=form,
                name=name,
                file=module.rel,
                line=site.lineno,
                col=site.col_offset,
                handler=handler.qualname if handler is not None else None,
                handler_file=handler.module.rel if handler is not None else None,
                handler_line=handler.node.lineno if handler is not None else None,
                handler_form=handler_form,
                server=server.label if server is not None else None,
                server_name=server.name if server is not None else None,
                scope=frame.scope_name(),
                via=[f.qualname for f in self.stack],
                call_sites=list(self.site_stack),
                conditional=self.cond_depth > 0,
                loop=self.loop_depth > 0,
                reached=not self.standalone,
                decorators=decorators,
                uri=uri or getattr(option, "uri", None),
                notes=list(notes or []) + [n for n in handler_notes if n],
            )
            registration.server_ref = server
            registration.handler_ref = handler
            registration.receiver_ref = option.receiver if isinstance(option, BoundV) else None
            registration.handler_node = handler.node if handler is not None else None
            registration.handler_module = handler.module if handler is not None else None
            handler_key = option.key() if lister is None else ("listed", id(site), name)
            registration.version = name_text(version) if version is not None else None
            registration.dedupe = (module.rel, site.lineno, site.col_offset, kind, handler_key, name)
            last = self.add_registration(registration)
        return last

    def add_registration(self, registration):
        """One definition per (server, kind, name), as the frameworks keep it (a second registration of a
        name replaces or is refused); by site and handler where the name or server is unknown. What a
        standalone run (parameters unknown) finds at a site a real run reached is the same registration."""
        site = registration.dedupe[:4]
        if registration.reached:
            if registration.name is not None and registration.server_ref is not None:
                # servers built at one constructor site are one server (a factory called twice, both
                # branches of an if): the census counts what one process serves
                key = (
                    "name",
                    registration.kind,
                    registration.server_ref.label,
                    registration.name,
                    registration.version,
                )
            else:
                key = ("site",) + registration.dedupe
        else:
            if any(existing.reached for existing in self._by_site.get(site, ())):
                return self._by_site[site][0]
            key = ("standalone",) + registration.dedupe
        existing = self._keys.get(key)
        if existing is not None:
            where = f"{registration.file}:{registration.line}"
            if (existing.file, existing.line) != (registration.file, registration.line) and where not in existing.notes:
                existing.notes.append(f"registered again at {where}")
            return existing
        self._keys[key] = registration
        self._by_site.setdefault(site, []).append(registration)
        self.registrations.append(registration)
        return registration

    def apply_mounts(self) -> None:
        parents: dict = {}
        for parent, child, prefix, _node, _module, _method in self.mounts:
            for option in options(child) if child is not None else []:
                if isinstance(option, ServerV):
                    parents.setdefault(id(option), []).append((parent, prefix))

        def expand(server, name, depth=0):
            out = []
            for parent, prefix in parents.get(id(server), []):
                if depth > 8:
                    break
                mounted = f"{prefix}_{name}" if prefix and name else name
                out.append(mounted)
                out.extend(expand(parent, mounted, depth + 1))
            return out

        for registration in self.registrations:
            if registration.server_ref is not None and registration.kind in ("tool", "prompt"):
                names = expand(registration.server_ref, registration.name)
                registration.mounted_as = [n for n in names if n != registration.name]


def _flatten(value: Value) -> list:
    out = []
    for option in options(value):
        if isinstance(option, ListedV):
            out.append(option)
        elif isinstance(option, Seq):
            for item in option.items:
                out.extend(_flatten(item))
    return out


def _walk_seqs(value: Value) -> list:
    out = []
    for option in options(value):
        if isinstance(option, Seq):
            out.append(option)
            for item in option.items:
                out.extend(_walk_seqs(item))
    return out
