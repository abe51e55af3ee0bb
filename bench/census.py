"""Census of MCP tool, resource and prompt registrations in ``../shared/corpus``, independent of the linter.

    python bench/census.py                          # per-unit table against the corpus README's counts
    python bench/census.py --json /tmp/census.json  # and every registration, one record each
    python bench/census.py --unit redis/mcp-redis   # one unit (substring of the unit name)
    python bench/census.py --corpus PATH            # another copy of the corpus

It is the ground truth the linter's recognition is measured against (issue 19), so it shares nothing with
``fusion_lint``: plain ``ast`` and a small abstract interpreter (``census_interp``) that runs each unit's
import-time code the way the frameworks see it at run time (module top levels, console-script entry
points, helpers, handler classes, loops over literal lists, both branches of every ``if``), recognising
mcp 1.x ``FastMCP``, mcp 2.x ``MCPServer``, ``fastmcp`` 2.x-4.x and the low-level ``Server`` by what they
are, however imported, aliased or subclassed. It never imports or runs the corpus's code.

The units are the rows of the corpus README's table. Test files (``tests/``, ``test/``, ``test_*.py``,
``*_test.py``, ``conftest.py``) are left out unless ``--include-tests`` is given; they are servers' tests,
not servers. Exit status: 0 (also when the corpus is absent: a message says so and nothing is counted).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from census_interp import UnitInterpreter, module_framework  # noqa: E402
from census_model import Frame, Module  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TOOL_KINDS = ("tool", "listed-tool")
RESOURCE_KINDS = ("resource", "listed-resource")
PROMPT_KINDS = ("prompt", "listed-prompt")
DISPATCHER_KINDS = ("dispatcher", "resource-dispatcher", "prompt-dispatcher")
_SHAPE_TOKENS = (".tool", ".resource", ".prompt", ".add_", ".call_tool", ".list_tools")
SHAPE_ATTRS = {"tool", "resource", "prompt", "add_tool", "add_resource", "add_prompt", "call_tool", "list_tools"}


def find_corpus(explicit: str | None) -> Path | None:
    # ../shared/corpus from the repository, also from a worktree one level further down (wt/<name>).
    candidates = (
        [Path(explicit)] if explicit else [REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus"]
    )
    for candidate in candidates:
        if (candidate / "README.md").is_file():
            return candidate.resolve()
    return None


def read_units(corpus: Path) -> list:
    """The rows of the corpus README's table: unit, folder, framework, pins, tools."""
    units = []
    for line in (corpus / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or cells[0] in ("unit", "") or set(cells[0]) <= {"-"}:
            continue
        unit, folder, _commit, framework, pins, tools = cells
        units.append(
            {
                "unit": unit,
                "folder": folder,
                "framework": framework,
                "pins": pins,
                "readme_tools": int(tools) if tools.isdigit() else None,
            }
        )
    return units


def is_test_file(relative: Path) -> bool:
    name = relative.name
    return (
        any(part in ("tests", "test") for part in relative.parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def module_names(relative_to_repo: Path) -> list:
    """Every dotted name the file can be imported as (each suffix of its path made of identifiers)."""
    parts = list(relative_to_repo.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    names = []
    for start in range(len(parts) - 1, -1, -1):
        suffix = parts[start:]
        if not all(p.isidentifier() for p in suffix):
            break
        names.append(".".join(suffix))
    return names


def load_modules(corpus: Path, folder: Path, include_tests: bool) -> tuple:
    repo = corpus / folder.parts[0]
    modules, skipped, broken = [], 0, []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder)
        if not include_tests and is_test_file(relative):
            skipped += 1
            continue
        source = path.read_bytes()
        try:
            tree = ast.parse(source, filename=str(path))
        except (SyntaxError, ValueError) as error:
            broken.append(f"{path.relative_to(corpus)}: {error}")
            continue
        text = source.decode("utf-8", "replace")
        module = Module(
            path=path,
            rel=str(path.relative_to(corpus)),
            tree=tree,
            lines=text.splitlines(),
            names=module_names(path.relative_to(repo)),
            framework=module_framework(text),
        )
        module.frame = Frame(module, "module")
        modules.append(module)
    return modules, skipped, broken


def pyproject_pins(corpus: Path, folder: Path) -> tuple:
    """mcp/fastmcp requirements and console scripts from the unit's pyproject files (or the nearest above)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore
    files = sorted(folder.rglob("pyproject.toml"))
    if not files:
        above = folder
        while above != corpus and above.parent != above:
            above = above.parent
            if (above / "pyproject.toml").is_file():
                files = [above / "pyproject.toml"]
                break
    pins, scripts = [], []
    for file in files:
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        project = data.get("project", {})
        deps = list(project.get("dependencies", []))
        for group in project.get("optional-dependencies", {}).values():
            deps.extend(group)
        for dep in deps:
            if re.match(r"^\s*(mcp|fastmcp)\b", dep):
                pins.append(dep.replace(" ", ""))
        for target in list(project.get("scripts", {}).values()) + list(
            data.get("tool", {}).get("poetry", {}).get("scripts", {}).values()
        ):
            if isinstance(target, str) and ":" in target:
                module_name, func = target.split(":", 1)
                scripts.append((module_name.strip(), func.strip().split(".")[0]))
    return sorted(set(pins)), scripts


def mark_request_time(registrations: list) -> None:
    """A registration made inside a registered handler's body happens while that tool runs (a tool that
    adds a tool, or a resource per note). It is served, so it counts; the flag says when it appears."""
    spans: dict = {}
    for r in registrations:
        node = r.handler_node
        if node is not None and not isinstance(node, ast.Lambda) and not r.kind.startswith("listed-"):
            spans.setdefault(r.handler_file, []).append((node.body[0].lineno, node.end_lineno, r.name))
    for r in registrations:
        if r.kind.startswith("listed-"):
            continue
        for start, end, name in spans.get(r.file, ()):
            if start <= r.line <= end:
                r.request_time = True
                r.notes.append(f"registered while the handler of {name!r} runs")


def registration_shapes(modules: list) -> list:
    """Syntactic sites that look like registrations (``@x.tool``, ``x.tool(...)(f)``, ``x.add_tool(f)``)."""
    sites = []
    for module in modules:
        if not any(token in line for line in module.lines for token in _SHAPE_TOKENS):
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if isinstance(target, ast.Attribute) and target.attr in SHAPE_ATTRS:
                        sites.append((module.rel, decorator.lineno, ast.unparse(target)))
            elif isinstance(node, ast.Call):
                func = node.func
                if (
                    isinstance(func, ast.Call)
                    and isinstance(func.func, ast.Attribute)
                    and func.func.attr in SHAPE_ATTRS
                    and node.args
                ):
                    sites.append((module.rel, func.lineno, ast.unparse(func.func)))
                elif (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("add_tool", "add_prompt", "add_resource")
                    and node.args
                ):
                    sites.append((module.rel, node.lineno, ast.unparse(func)))
    return sites


def census_unit(corpus: Path, unit: dict, include_tests: bool = False) -> dict:
    folder = corpus / unit["folder"]
    started = time.perf_counter()
    if not folder.is_dir():
        return {**unit, "error": f"folder missing: {unit['folder']}", "registrations": []}
    modules, skipped, broken = load_modules(corpus, folder, include_tests)
    pins, scripts = pyproject_pins(corpus, folder)
    interpreter = UnitInterpreter(modules, scripts)
    frameworks = Counter(m.framework for m in modules if m.framework not in (None, "mcp"))
    interpreter.default_framework = frameworks.most_common(1)[0][0] if frameworks else None
    interpreter.run()
    mark_request_time(interpreter.registrations)
    registrations = interpreter.registrations
    found_sites = {(r.file, r.line) for r in interpreter.registrations} | interpreter.lister_sites
    unrecognised = [
        f"{rel}:{line} {text}" for rel, line, text in registration_shapes(modules) if (rel, line) not in found_sites
    ]
    counts = Counter(r.kind for r in registrations)
    tools = sum(counts[k] for k in TOOL_KINDS)
    return {
        **unit,
        "files": len(modules),
        "test_files_skipped": skipped,
        "parse_errors": broken,
        "pins_found": pins,
        "entry_points": [f"{m}:{f}" for m, f in scripts],
        "tools": tools,
        "tool_registrations": counts["tool"],
        "listed_tools": counts["listed-tool"],
        "dispatchers": counts["dispatcher"],
        "other_dispatchers": counts["resource-dispatcher"] + counts["prompt-dispatcher"],
        "resources": sum(counts[k] for k in RESOURCE_KINDS),
        "prompts": sum(counts[k] for k in PROMPT_KINDS),
        "frameworks_found": sorted({r.framework for r in registrations if r.kind in TOOL_KINDS + DISPATCHER_KINDS}),
        "servers": [
            {
                "framework": s.framework,
                "label": s.label,
                "name": s.name,
                "opaque": s.opaque,
                "inferred": s.inferred,
                "mask_error_details": s.mask_error_details,
                "subclass": s.cls.qualname if s.cls is not None else None,
            }
            for s in interpreter.servers
        ],
        "mounts": [
            {
                "parent": p.label,
                "child": [c.label for c in _servers(child)],
                "prefix": prefix,
                "site": f"{module.rel}:{node.lineno}",
                "method": method,
            }
            for p, child, prefix, node, module, method in interpreter.mounts
        ],
        "unrecognised_shapes": unrecognised,
        "budget_exhausted": interpreter.budget_exhausted,
        "seconds": round(time.perf_counter() - started, 3),
        "registrations": [r.as_json() for r in registrations],
        "_interpreter": interpreter,
    }


def _servers(value) -> list:
    from census_values import ServerV, options

    return [o for o in options(value) if isinstance(o, ServerV)] if value is not None else []


@contextlib.contextmanager
def interpreter_settings(freeze: bool = False):
    """A deeper recursion limit for the interpreter (nested expressions, call chains), and no cyclic
    collector: syntax trees are many small objects that live for the whole run, and the collector would
    rescan them on every parse (3x the parse time). Both restored afterwards: tests import this module."""
    limit, enabled = sys.getrecursionlimit(), gc.isenabled()
    sys.setrecursionlimit(max(limit, 20000))
    gc.disable()
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            if freeze:  # the command line: what the run built is never rescanned before exit
                gc.freeze()
            gc.enable()


def run_census(corpus: Path, unit_filter: str | None = None, include_tests: bool = False) -> list:
    units = [u for u in read_units(corpus) if not unit_filter or unit_filter in u["unit"]]
    with interpreter_settings():
        return [census_unit(corpus, unit, include_tests) for unit in units]


def print_table(results: list, out=None) -> None:
    """unit, README's count, tools (registered + listed by low-level servers), registrations, listed,
    low-level tool dispatchers, resources, prompts, frameworks found."""
    out = out if out is not None else sys.stdout
    header = ("unit", "README", "tools", "regs", "listed", "disp", "res", "prompts", "framework found")
    rows = [header]
    for r in results:
        if "error" in r:
            rows.append((r["unit"], str(r.get("readme_tools")), "-", "-", "-", "-", "-", "-", r["error"]))
            continue
        mark = "" if r["tools"] == r["readme_tools"] else " *"
        rows.append(
            (
                r["unit"],
                str(r["readme_tools"]),
                str(r["tools"]) + mark,
                str(r["tool_registrations"]),
                str(r["listed_tools"]),
                str(r["dispatchers"]),
                str(r["resources"]),
                str(r["prompts"]),
                ",".join(r["frameworks_found"]) or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for index, row in enumerate(rows):
        print(
            "  ".join(
                cell.ljust(widths[i]) if i in (0, 8) else cell.rjust(widths[i]) for i, cell in enumerate(row)
            ).rstrip(),
            file=out,
        )
        if index == 0:
            print("  ".join("-" * w for w in widths), file=out)
    ok = [r for r in results if "error" not in r]
    total = sum(r["tools"] for r in ok)
    readme = sum(r["readme_tools"] or 0 for r in ok)
    print(
        f"\n{len(ok)} units, {sum(r['files'] for r in ok)} files read ({sum(r['test_files_skipped'] for r in ok)} "
        f"test files left out): {total} tools = {sum(r['tool_registrations'] for r in ok)} registrations + "
        f"{sum(r['listed_tools'] for r in ok)} listed by low-level servers; {sum(r['dispatchers'] for r in ok)} "
        f"low-level call_tool dispatchers; {sum(r['resources'] for r in ok)} resources; "
        f"{sum(r['prompts'] for r in ok)} prompts. README: {readme} tools",
        file=out,
    )
    differing = [r for r in ok if r["tools"] != r["readme_tools"]]
    if differing:
        print(f"* {len(differing)} units differ from the README's count (bench/corpus-survey.md says why)", file=out)
    for r in ok:
        if r["unrecognised_shapes"]:
            print(
                f"  {r['unit']}: {len(r['unrecognised_shapes'])} registration-shaped sites not counted, e.g. "
                f"{r['unrecognised_shapes'][0]}",
                file=out,
            )
        if r["budget_exhausted"]:
            print(f"  {r['unit']}: statement budget exhausted (counts may be low)", file=out)
        if r["parse_errors"]:
            print(f"  {r['unit']}: {len(r['parse_errors'])} files do not parse: {r['parse_errors'][0]}", file=out)


def markdown_table(results: list) -> str:
    lines = [
        "| unit | README | tools | registrations | listed (low-level) | call_tool dispatchers | resources | prompts |"
        " framework found |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        if "error" in r:
            continue
        mark = "" if r["tools"] == r["readme_tools"] else " **≠**"
        lines.append(
            f"| {r['unit']} | {r['readme_tools']} | {r['tools']}{mark} | {r['tool_registrations']} | "
            f"{r['listed_tools']} | {r['dispatchers']} | {r['resources']} | {r['prompts']} | "
            f"{', '.join(r['frameworks_found']) or '-'} |"
        )
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="the corpus folder (default: ../shared/corpus)")
    parser.add_argument("--json", metavar="PATH", help="write every unit and registration as JSON")
    parser.add_argument("--unit", help="only units whose name contains this")
    parser.add_argument("--include-tests", action="store_true", help="also read test files")
    parser.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    args = parser.parse_args(argv)
    corpus = find_corpus(args.corpus)
    if corpus is None:
        print("census: the corpus (../shared/corpus with its README.md) is absent: nothing to count")
        return 0
    started = time.perf_counter()
    with interpreter_settings(freeze=True):
        return _report(args, corpus, started)


def _report(args, corpus: Path, started: float) -> int:
    results = run_census(corpus, args.unit, args.include_tests)
    elapsed = time.perf_counter() - started
    print_table(results)
    if args.markdown:
        print("\n" + markdown_table(results))
    print(f"census: {elapsed:.2f} s")
    if args.json:
        payload = {
            "corpus": str(corpus),
            "seconds": round(elapsed, 3),
            "units": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
        }
        Path(args.json).write_text(json.dumps(payload, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
