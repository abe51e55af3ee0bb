"""The numbers behind ``bench/corpus-survey.md``: what real MCP servers in ``../shared/corpus`` do.

    python bench/corpus_survey.py            # every section, with up to 3 examples (file:line) each
    python bench/corpus_survey.py --examples 6

Built on the census (``census.py``): its registrations say which functions are handlers; ``survey_facts``
reads each handler's body and the unit functions it reaches (direct callee = depth 1, up to depth 3).
Independent of fusion_lint. Test files are left out, as in the census.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import census  # noqa: E402
from survey_facts import (  # noqa: E402
    ERROR_WORD,
    FactsBuilder,
    error_key_dict,
    error_string,
    exception_text_uses,
    names_in,
    own_nodes,
)
from survey_forms import print_needs, registration_forms, server_construction  # noqa: E402

NOT_UNIT = ("not unit code", "builtin", "external library", "module")
# DESIGN §12.2's FL306 shapes (the others are counted, and listed apart)
FL306_SHAPES = (
    "string starting with an error word",
    "dict with an 'error' key",
    "json.dumps({'error': ...})",
    "[TextContent(text='Error...')]",
    "value built from the caught exception (other shape)",
    "return helper(..., e) from an except clause (an error-result builder)",
)
HANDLER_KINDS = ("tool", "resource", "prompt", "dispatcher", "resource-dispatcher", "prompt-dispatcher")
MAX_DEPTH = 3


class Examples:
    """Counts with up to N quoted examples each, spread over different units where possible."""

    def __init__(self, limit: int):
        self.limit = limit
        self.counts: Counter = Counter()
        self.examples: dict = defaultdict(list)
        self.units: dict = defaultdict(set)

    def add(self, key: str, unit: str, module, line: int, weight: int = 1) -> None:
        self.counts[key] += weight
        bucket = self.examples[key]
        if len(bucket) < self.limit and (unit not in self.units[key] or len(self.units[key]) >= 3):
            text = module.lines[line - 1].strip() if 0 < line <= len(module.lines) else ""
            bucket.append(f"{module.rel}:{line}: `{text[:110]}`")
            self.units[key].add(unit)

    def print(self, title: str, keys=None) -> None:
        print(f"\n### {title}")
        for key, count in self.counts.most_common() if keys is None else [(k, self.counts[k]) for k in keys]:
            print(f"- {key}: {count}")
            for example in self.examples.get(key, []):
                print(f"    - {example}")


class HandlerSurvey:
    def __init__(self, limit: int):
        self.ex = {
            name: Examples(limit)
            for name in (
                "raise",
                "callee_raise",
                "protocol",
                "returns",
                "text",
                "excepts",
                "suppress",
                "reach",
                "unfollowed",
                "inherit",
            )
        }
        self.handlers = 0
        self.with_success_error_body = 0
        self.with_success_error_reach = 0
        self.depth_hist = Counter()
        self.files_hist = Counter()
        self.callee_raise_sites: dict = {}
        self.handler_raise_sites: set = set()

    def run(self, results: list) -> None:
        for r in results:
            interp = r["_interpreter"]
            builder = FactsBuilder(interp)
            seen = set()
            for reg in list(interp.registrations):
                func = reg.handler_ref
                if reg.kind not in HANDLER_KINDS or func is None or id(func.node) in seen:
                    continue
                if getattr(func.node, "body", None) is None or isinstance(func.node, ast.Lambda):
                    continue
                seen.add(id(func.node))
                self.handlers += 1
                self.survey_handler(r["unit"], builder, func, reg.receiver_ref)

    def survey_handler(self, unit, builder, func, receiver) -> None:
        facts = builder.facts(func)
        module = func.module
        for raised in facts.raises:
            self.handler_raise_sites.add((module.rel, raised.node.lineno))
            self.ex["raise"].add(
                f"{raised.category} raise in the handler body, {raised.caught}", unit, module, raised.node.lineno
            )
            if raised.category in ("ToolError", "McpError"):
                self.ex["protocol"].add(
                    f"raise {raised.type_name} in the handler body", unit, module, raised.node.lineno
                )
        body_success_error = self.returns(unit, facts, "handler body")
        self.excepts(unit, facts, "handler body")
        # reach: BFS over resolved unit callees, depth 1..3, carrying the call sites' enclosing catches
        reach_error = False
        frontier = [(func, receiver, [])]
        visited = {id(func.node)}
        max_depth, files = 0, {module.rel}
        for depth in range(1, MAX_DEPTH + 1):
            next_frontier = []
            for caller, caller_receiver, catches in frontier:
                caller_facts = builder.facts(caller)
                for call, enclosing in caller_facts.calls:
                    callee, how = builder.resolve_call(call, caller, caller_receiver)
                    if how in NOT_UNIT:
                        continue
                    self.ex["reach"].add(
                        f"depth {depth}: {how}{'' if callee is not None else ' (not followed)'}",
                        unit,
                        caller.module,
                        call.lineno,
                    )
                    if callee is None:
                        self.ex["unfollowed"].add(how, unit, caller.module, call.lineno)
                        continue
                    if "inherited" in how:
                        self.ex["inherit"].add(how, unit, caller.module, call.lineno)
                    if id(callee.node) in visited or isinstance(callee.node, ast.Lambda):
                        continue
                    visited.add(id(callee.node))
                    max_depth = max(max_depth, depth)
                    files.add(callee.module.rel)
                    path_catches = catches + enclosing
                    callee_facts = builder.facts(callee)
                    self.callee_raises(unit, builder, callee, callee_facts, path_catches, depth)
                    if depth <= MAX_DEPTH and self.returns(unit, callee_facts, f"callee at depth {depth}", count=False):
                        reach_error = True
                    self.excepts(unit, callee_facts, "callee")
                    next_frontier.append((callee, None, path_catches))
            frontier = next_frontier
        self.depth_hist[max_depth] += 1
        self.files_hist[min(len(files), 4)] += 1
        if body_success_error:
            self.with_success_error_body += 1
        if body_success_error or reach_error:
            self.with_success_error_reach += 1

    def callee_raises(self, unit, builder, callee, facts, path_catches, depth) -> None:
        for raised in facts.raises:
            if raised.category in ("reraise", "unknown"):
                continue
            key = (callee.module.rel, raised.node.lineno)
            caught_on_path = any(builder.matches(types, raised) and not reraises for types, reraises in path_catches)
            status = (
                "caught in the callee"
                if raised.caught == "caught"
                else ("caught by the caller's try" if caught_on_path else "escapes to the framework")
            )
            previous = self.callee_raise_sites.get(key)
            if previous is None or (previous != "escapes to the framework" and status == "escapes to the framework"):
                if previous is None:
                    self.ex["callee_raise"].add(
                        f"{raised.category} raise in a callee (depth {depth}): {status}",
                        unit,
                        callee.module,
                        raised.node.lineno,
                    )
                self.callee_raise_sites[key] = status
            if raised.category in ("ToolError", "McpError") and previous is None:
                self.ex["protocol"].add(
                    f"raise {raised.type_name} in a callee", unit, callee.module, raised.node.lineno
                )

    def returns(self, unit, facts, where, count=True) -> bool:
        found = False
        module = facts.func.module
        local_values = {}
        for node in own_nodes(facts.func.node)[0]:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                local_values[node.targets[0].id] = node.value
        for ret, handler in facts.returns:
            value = ret.value
            if isinstance(value, ast.Name) and value.id in local_values:
                value = local_values[value.id]
            kind = self.success_error_kind(value, handler)
            if kind in FL306_SHAPES:
                found = True
            if kind:
                if count:
                    self.ex["returns"].add(f"{kind} ({where})", unit, module, ret.lineno)
            if handler is not None and handler.name:
                for use in sorted(set(exception_text_uses(ret.value, handler.name))):
                    if count:
                        self.ex["text"].add(f"{use} in a return ({where})", unit, module, ret.lineno)
        if count:
            for raised in facts.raises:
                handler = _handler_of(raised.node, facts.parents)
                if handler is not None and handler.name and raised.node.exc is not None:
                    for use in sorted(set(exception_text_uses(raised.node.exc, handler.name))):
                        self.ex["text"].add(f"{use} in a raise ({where})", unit, module, raised.node.lineno)
        return found

    @staticmethod
    def success_error_kind(value, handler) -> str:
        if isinstance(value, ast.Await):
            value = value.value
        if error_string(value):
            return "string starting with an error word"
        if error_key_dict(value):
            return "dict with an 'error' key"
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "dumps"
            and value.args
            and error_key_dict(value.args[0])
        ):
            return "json.dumps({'error': ...})"
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        for item in items:
            if isinstance(item, ast.Call) and ast.unparse(item.func).endswith("TextContent"):
                for keyword in item.keywords:
                    if keyword.arg == "text" and error_string(keyword.value):
                        return "[TextContent(text='Error...')]"
        if isinstance(value, ast.Call) and ast.unparse(value.func).endswith(("CallToolResult", "ToolResult")):
            if any(
                k.arg in ("isError", "is_error") and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in value.keywords
            ):
                return "CallToolResult(isError=True) (a proper failure)"
        if isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values):
                if (
                    isinstance(key, ast.Constant)
                    and key.value in ("success", "ok")
                    and isinstance(item, ast.Constant)
                    and item.value is False
                ):
                    return "dict with success: False (no 'error' key)"
                if (
                    isinstance(key, ast.Constant)
                    and key.value == "status"
                    and isinstance(item, ast.Constant)
                    and str(item.value).lower() in ("error", "failed", "failure")
                ):
                    return "dict with status: 'error' (no 'error' key)"
        if (
            handler is not None
            and handler.name
            and isinstance(value, ast.Call)
            and handler.name
            in {
                n.id
                for a in list(value.args) + [k.value for k in value.keywords]
                for n in ast.walk(a)
                if isinstance(n, ast.Name)
            }
        ):
            return "return helper(..., e) from an except clause (an error-result builder)"
        if handler is not None and handler.name and handler.name in names_in(value):
            return "value built from the caught exception (other shape)"
        return ""

    def excepts(self, unit, facts, where) -> None:
        module = facts.func.module
        for handler, _try, category, body_awaits in facts.handlers:
            if category == "specific":
                continue
            self.ex["excepts"].add(
                f"{category} ({where}); try body {'awaits' if body_awaits else 'does not await'}",
                unit,
                module,
                handler.lineno,
            )
        for with_node, names, body_awaits in facts.suppress:
            self.ex["suppress"].add(
                f"contextlib.suppress({', '.join(names)}) ({where}); {'awaits' if body_awaits else 'no await'}",
                unit,
                module,
                with_node.lineno,
            )


def _handler_of(node, parents):
    parent = parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.ExceptHandler):
            return parent
        parent = parents.get(parent)
    return None


def error_word_strings(results: list, ex: Examples) -> None:
    """Every string literal starting with an error word, by where it stands (false-positive traps)."""
    for r in results:
        interp = r["_interpreter"]
        handler_nodes = {id(reg.handler_node) for reg in interp.registrations if reg.handler_node is not None}
        for module in interp.modules:
            if not any(ERROR_WORD.search(line.strip().strip("'\"f")) for line in module.lines):
                continue
            parents = {}
            for node in ast.walk(module.tree):
                for child in ast.iter_child_nodes(node):
                    parents[child] = node
            for node in ast.walk(module.tree):
                if not isinstance(node, (ast.Constant, ast.JoinedStr)) or isinstance(parents.get(node), ast.JoinedStr):
                    continue
                if not error_string(node):
                    continue
                ex.add(_string_context(node, parents, handler_nodes), r["unit"], module, node.lineno)


def _string_context(node, parents, handler_nodes) -> str:
    parent = parents.get(node)
    if isinstance(parent, ast.Expr) and isinstance(
        parents.get(parent), (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)
    ):
        return "docstring"
    while parent is not None:
        if isinstance(parent, ast.keyword) and parent.arg in ("description", "title", "instructions", "help"):
            return f"{parent.arg}= (tool/field/server text)"
        if isinstance(parent, ast.Call):
            func = ast.unparse(parent.func)
            if func.split(".")[-1] in (
                "debug",
                "info",
                "warning",
                "warn",
                "error",
                "exception",
                "critical",
                "log",
            ) or func in ("print", "click.echo", "logger.opt"):
                return "log or print message"
            if isinstance(parent.func, ast.Attribute) and parent.func.attr in (
                "startswith",
                "endswith",
                "find",
                "index",
            ):
                return "compared against upstream text (startswith/in)"
        if isinstance(parent, ast.Compare):
            return "compared against upstream text (startswith/in)"
        if isinstance(parent, ast.Raise):
            return "raise message"
        if isinstance(parent, ast.Return):
            func = _enclosing_function(parent, parents)
            inside_handler = func is not None and id(func) in handler_nodes
            return "returned by a registered handler" if inside_handler else "returned by another function"
        if isinstance(parent, ast.Dict):
            return "dict value (message/error fields)"
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return "assigned to a variable or constant"
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            break
        parent = parents.get(parent)
    return "other"


def _enclosing_function(node, parents):
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = parents.get(parent)
    return parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--examples", type=int, default=3)
    args = parser.parse_args(argv)
    corpus = census.find_corpus(args.corpus)
    if corpus is None:
        print("corpus_survey: the corpus (../shared/corpus) is absent: nothing to survey")
        return 0
    results = census.run_census(corpus)
    print("## Pins (mcp/fastmcp requirements in each unit's pyproject)")
    for r in results:
        print(
            f"- {r['unit']}: {'; '.join(r['pins_found']) or '(none in the unit; README: ' + (r['pins'] or '-') + ')'}"
        )
    ex = Examples(args.examples)
    server_construction(results, ex)
    ex.print("Server construction (one per constructor site; servers built by one site count once per run)")
    forms = Examples(args.examples)
    registration_forms(results, forms)
    forms.print("Registration forms and odd cases (tools, resources, prompts; low-level handlers)")
    print_needs(results)
    survey = HandlerSurvey(args.examples)
    with census.interpreter_settings():
        survey.run(results)
    print(
        f"\n## Handlers surveyed: {survey.handlers} (unique handler functions of tools, resources, prompts, "
        f"low-level dispatchers)"
    )
    print(
        f"- failure returned as success in the handler's own body: {survey.with_success_error_body} handlers; "
        f"within {MAX_DEPTH} calls: {survey.with_success_error_reach}"
    )
    print(f"- deepest unit callee reached (0 = calls nothing in the unit): {dict(sorted(survey.depth_hist.items()))}")
    print(f"- files a handler's reach spans (4 = 4 or more): {dict(sorted(survey.files_hist.items()))}")
    escaping = Counter(survey.callee_raise_sites.values())
    print(f"- unique raise sites in callees: {len(survey.callee_raise_sites)}; {dict(escaping)}")
    titles = {
        "raise": "Raises in handler bodies",
        "callee_raise": "Raises in callees (unique sites, first path)",
        "protocol": "ToolError / McpError / MCPError raises",
        "returns": "Returns (handler bodies)",
        "text": "Exception text in returns and raises (handler bodies)",
        "excepts": "Broad except clauses (handler bodies and callees)",
        "suppress": "contextlib.suppress",
        "reach": "Calls from handlers and their callees, by form",
        "unfollowed": "Calls a static linter cannot follow (unit-looking, unresolved)",
        "inherit": "Methods found in base classes",
    }
    for key, title in titles.items():
        survey.ex[key].print(title)
    strings = Examples(args.examples + 3)
    error_word_strings(results, strings)
    strings.print("String literals starting with Error/Failed/Failure/Exception/Unable/Cannot/Could not, by context")
    return 0


if __name__ == "__main__":
    sys.exit(main())
