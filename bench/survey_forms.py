"""Survey sections about servers and registrations (``corpus_survey.py``): how servers are built, every
registration form and odd case, how the receiver is written at the site, and what reading each tool
definition statically takes beyond DESIGN §12.1-§12.2's forms.
"""

from __future__ import annotations

import ast
from collections import Counter, defaultdict


def statement_of(module, line: int):
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.stmt)
            and node.lineno == line
            and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ):
            return node
    return None


def server_construction(results: list, ex) -> None:
    for r in results:
        interp = r["_interpreter"]
        by_rel = {m.rel: m for m in interp.modules}
        for server in interp.servers:
            if server.inferred:
                ex.add("unannotated receiver (register(self, mcp) / setup(mcp))", r["unit"], *_site(server, by_rel))
                continue
            if server.label.startswith("parameter"):
                ex.add("parameter annotated with a server type", r["unit"], *_site(server, by_rel))
                continue
            if server.label.startswith("returned by"):
                ex.add("returned by a function annotated -> FastMCP", r["unit"], *_site(server, by_rel))
                continue
            rel, _, line = server.label.rpartition(":")
            module = by_rel.get(rel)
            if module is None or not line.isdigit():
                continue
            line = int(line)
            kind = "opaque (proxy / OpenAPI)" if server.opaque else f"{server.framework}"
            if server.cls is not None:
                kind += f" subclass defined in the unit ({server.cls.qualname})"
            stmt = statement_of(module, line)
            where = _binding_form(stmt, module, line)
            ex.add(f"{kind}: {where}", r["unit"], module, line)


def _site(server, by_rel):
    module, line = getattr(server, "site", (next(iter(by_rel.values())), 0))
    return module, line


def _binding_form(stmt, module, line) -> str:
    scope = "module level"
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            scope = "in a function"
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= node.end_lineno and scope == "module level":
            scope = "class body"
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" for t in targets
        ):
            return "self.<attr> = Server(...)"
        if scope == "class body":
            return "class attribute"
        return f"name = Server(...) {scope}"
    if isinstance(stmt, ast.Return):
        return "return Server(...) (factory)"
    return f"inside another expression {scope}"


REGISTRATION_ATTRS = {
    "tool",
    "resource",
    "prompt",
    "add_tool",
    "add_resource",
    "add_prompt",
    "add_template",
    "call_tool",
    "list_tools",
    "read_resource",
    "get_prompt",
}


def _site_attribute(module, line: int):
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Attribute) and node.attr in REGISTRATION_ATTRS and node.lineno == line:
            return node
    return None


def _enclosing_functions(module, line: int) -> list:
    """The functions whose body holds ``line``, innermost first."""
    found = [
        node
        for node in ast.walk(module.tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno < line <= node.end_lineno
    ]
    return sorted(found, key=lambda n: n.lineno, reverse=True)


def _params(func) -> dict:
    return {a.arg: a for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}


def _assigned_in(func, name: str) -> bool:
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def receiver_form(module, line: int) -> str:
    """How the receiver of the registration at ``line`` is written, as a linter reading the file sees it."""
    attribute = _site_attribute(module, line)
    if attribute is None:
        return "no receiver (standalone decorator or constructor keyword)"
    receiver = attribute.value
    enclosing = _enclosing_functions(module, line)
    if isinstance(receiver, ast.Name):
        name = receiver.id
        if name == "self":
            return "self (a server subclass)"
        for level, func in enumerate(enclosing):
            params = _params(func)
            where = "" if level == 0 else " of an enclosing function (closure)"
            if name in params:
                annotated = params[name].annotation is not None
                imports = "module imports a framework" if module.framework else "module imports no framework"
                return f"annotated parameter{where}" if annotated else f"unannotated parameter{where}; {imports}"
            if _assigned_in(func, name):
                return f"local variable{where}"
        for node in module.tree.body:
            if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
                return "module-level name imported from another module"
        return "module-level name of the same module"
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
        if receiver.value.id == "self":
            return "self.<attribute>"
        return "<name>.<attribute> (class attribute or module attribute)"
    return f"other expression ({type(receiver).__name__})"


def linter_needs(module, reg) -> list:
    """What reading this registration takes beyond DESIGN §12.1-§12.2's basic forms (empty: nothing more)."""
    needs = []
    receiver = receiver_form(module, reg.line)
    if "module imports no framework" in receiver:
        needs.append("receiver: an unannotated parameter in a module that imports no framework")
    attribute = _site_attribute(module, reg.line)
    enclosing = _enclosing_functions(module, reg.line)
    call = None
    if attribute is not None:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and node.func is attribute:
                call = node
                break
    handler_expr = None
    if call is not None and reg.form.endswith("(fn)") or reg.form.startswith(("add_", "tool(fn)", "prompt(fn)")):
        outer = None
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and node.func is call:
                outer = node
        if outer is not None and outer.args:
            handler_expr = outer.args[0]
        elif call is not None and call.args:
            handler_expr = call.args[0]
    loops = [
        node
        for node in ast.walk(module.tree)
        if isinstance(node, (ast.For, ast.AsyncFor)) and node.lineno < reg.line <= node.end_lineno
    ]
    loop_targets = {n.id: loop for loop in loops for n in ast.walk(loop.target) if isinstance(n, ast.Name)}

    def param_of_enclosing(name):
        return any(name in _params(func) for func in enclosing)

    if handler_expr is not None:
        if isinstance(handler_expr, ast.Call) and ast.unparse(handler_expr.func) == "getattr":
            needs.append(
                "handler: getattr(module, name) over module.__all__"
                if any("__all__" in ast.unparse(loop.iter) for loop in loops)
                else "handler: getattr(...)"
            )
        elif isinstance(handler_expr, ast.Name) and handler_expr.id in loop_targets:
            loop = loop_targets[handler_expr.id]
            literal = isinstance(loop.iter, (ast.List, ast.Tuple, ast.Set))
            needs.append(
                "handler: loop over a literal list (in §12.2)"
                if literal
                else "handler: loop over a list built elsewhere (a name, a filtered copy)"
            )
        elif (
            isinstance(handler_expr, ast.Attribute)
            and isinstance(handler_expr.value, ast.Name)
            and handler_expr.value.id in loop_targets
        ):
            needs.append("handler: tool.fn of Tool.from_function objects in a loop over a derived list")
        elif isinstance(handler_expr, ast.Attribute) and handler_expr.attr == "fn":
            needs.append("handler: tool.fn of a Tool.from_function object (add_tool(tool.fn, tool.name))")
        elif isinstance(handler_expr, ast.Name) and param_of_enclosing(handler_expr.id):
            needs.append("helper: the handler is a parameter of the registering function (call-site expansion)")
        elif (
            isinstance(handler_expr, ast.Name)
            and enclosing
            and any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == handler_expr.id
                for n in ast.walk(enclosing[0])
            )
            and any(
                param_of_enclosing(n.id)
                for n in ast.walk(enclosing[0])
                if isinstance(n, ast.Name) and n.id != handler_expr.id
            )
        ):
            needs.append("helper: the handler is a wrapper of a parameter (call-site expansion)")
        elif (
            isinstance(handler_expr, ast.Call)
            and ast.unparse(handler_expr.func) not in ("functools.partial", "partial")
            and not ast.unparse(handler_expr.func).endswith("from_function")
        ):
            needs.append("handler: built by a call (a factory returning a function)")
    if call is not None:
        name_expr = next((k.value for k in call.keywords if k.arg == "name"), None)
        if name_expr is not None and not isinstance(name_expr, ast.Constant):
            if isinstance(name_expr, ast.Name) and param_of_enclosing(name_expr.id):
                needs.append("name: a parameter of the registering function (call-site expansion)")
            elif isinstance(name_expr, ast.Name) and name_expr.id in loop_targets:
                needs.append("name: a loop variable")
            elif isinstance(name_expr, (ast.BinOp, ast.JoinedStr)):
                needs.append("name: computed (prefix + literal)")
    return needs


def registration_forms(results: list, ex) -> None:
    for r in results:
        interp = r["_interpreter"]
        by_rel = {m.rel: m for m in interp.modules}
        for reg in interp.registrations:
            module = by_rel[reg.file]
            unit = r["unit"]
            kind = reg.kind
            ex.add(f"{kind}: {reg.framework}: {reg.form}", unit, module, reg.line)
            if kind.startswith("listed-"):
                continue
            ex.add(f"receiver: {receiver_form(module, reg.line)}", unit, module, reg.line)
            if kind in ("tool", "dispatcher"):
                needs = linter_needs(module, reg)
                NEEDS[unit][tuple(sorted(set(needs)))] += 1
            if kind not in ("tool", "resource", "prompt"):
                continue
            flags = []
            if reg.scope != "<module>":
                flags.append(
                    "registered inside a function/method"
                    + (" reached from main()/an entry point" if any("main" in v for v in reg.via) else "")
                )
            if reg.conditional:
                flags.append("conditional (under an if/try)")
            if reg.loop:
                flags.append("in a loop (unrolled over a literal list)")
            if reg.decorators:
                flags.append("stacked with other decorators")
            if reg.handler_form in ("self.method", "wrapped self.method"):
                flags.append("class-based handler (self.method)")
            if reg.handler_form == "bound method":
                flags.append("bound method of a module-level instance (mcp.tool()(obj.method))")
            if reg.handler_form.startswith("partial"):
                flags.append("functools.partial handler")
            if "wrapped" in reg.handler_form:
                flags.append("handler wrapped by a unit decorator (functools.wraps)")
            if any("without functools.wraps" in n for n in reg.notes):
                flags.append("decorator without functools.wraps (the tool is named after the wrapper)")
            if not reg.reached:
                flags.append(
                    "never called in the unit (read standalone: create_server()/register(mcp) called by tests or not at all)"
                )
            if reg.request_time:
                flags.append("registered while another tool runs")
            if reg.mounted_as:
                flags.append("on a server mounted with a prefix")
            if reg.name and "{?}" in reg.name:
                flags.append("name computed (prefix + literal)")
            if reg.version:
                flags.append("fastmcp version= (one name, several versions)")
            if any("TypeError" in n for n in reg.notes):
                flags.append("bare @mcp.tool on mcp 1.x/2.x (TypeError at import)")
            if reg.server_ref is not None and reg.server_ref.inferred:
                flags.append("receiver is an unannotated parameter")
            for flag in flags:
                ex.add(f"{flag}", unit, module, reg.line)


NEEDS: dict = defaultdict(Counter)
# Found by the basic forms all the same: §12.2 already unrolls literal lists; a computed name leaves the
# definition found, with a partial name.
BASIC_NEEDS = ("handler: loop over a literal list (in §12.2)", "name: computed (prefix + literal)")


def print_needs(results: list) -> None:
    print("\n### What reading each tool definition takes, per unit (registrations + low-level dispatchers)")
    print("A definition needs nothing beyond DESIGN §12.1-§12.2's forms unless listed; each unit's share of basic")
    print("definitions is what a linter implementing only those forms would recognise.")
    total_basic = total = 0
    for r in results:
        counts = NEEDS.get(r["unit"], Counter())
        n = sum(counts.values())
        basic = sum(v for k, v in counts.items() if all(need in BASIC_NEEDS for need in k))
        total += n
        total_basic += basic
        extra = {"; ".join(k): v for k, v in counts.items() if k}
        if extra or n == 0:
            print(f"- {r['unit']}: {basic}/{n} basic" + (f"; {extra}" if extra else ""))
    print(
        f"- all other units: every definition basic. Overall: {total_basic}/{total} "
        f"({100 * total_basic / max(total, 1):.1f}%)"
    )
