"""Which files a lint reads and parses, and why it parses each (the counting half of ``corpus_bench``).

The linter is run in this process once, through its engine (``fusion_lint.check.engine.analyse``, then the
project resolution every lint performs), so every file it handles can be named:

* *discovered*: the files the walk yields (every one is read, for the pre-scan);
* *parsed*: the files handed to libcst: admitted by the pre-scan, by its second look (a file that
  imports a project module re-exporting the runtime or binding a server), or loaded on demand while
  the project is resolved (a service, a shared contract module);
* of the parsed files, the ones that *define* a tool, resource or prompt (or bind a contract), the
  ones *reached* from a definition (its handler's reach, the files its contract is written in), the
  ones *consulted* while a definition was resolved (its server's module, a re-export, a constant:
  every lookup of the project index is made on behalf of a definition), and the ones that are
  *neither*: parsed for nothing. Issue 19 asks for none of those.

Consultations are seen by wrapping ``ProjectIndex.module_facts`` on the run's own index (every
cross-file lookup goes through it); the files loaded on demand are ``Analysis.loaded``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fusion_lint.base.memory import gc_paused
from fusion_lint.check.engine import Analysis, Options, analyse, configure
from fusion_lint.facts.model import ConcatExpr, Entry, EntryItem, FileFacts, ListExpr
from fusion_lint.source.pipeline import mentions_runtime, read_source

PRESCAN, SECOND_LOOK, ON_DEMAND = "pre-scan", "second look", "loaded on demand"


@dataclass
class FileCounts:
    discovered: int
    read: int  # distinct files whose bytes were read: the walk's, plus any loaded from outside it
    skipped: int  # read and left by the pre-scan
    unreadable: list[str]  # FL001: not read, or not decodable
    parsed: list[str]  # distinct files parsed and read for facts
    parse_operations: int  # files parsed, a file parsed twice counted twice
    admitted: dict[str, str]  # parsed file -> PRESCAN, SECOND_LOOK or ON_DEMAND
    failed: dict[str, str]  # parsed file -> FL000/FL999 (parsed, or tried to, without facts)
    defines: list[str]
    reached: list[str]  # reached and defining nothing
    consulted: list[str]  # consulted only
    neither: list[str]
    dynamic: list[str]  # of ``defines``: files whose every registration is dynamic (unnamed statically)
    definitions: dict[str, int]  # kind -> count (a low-level server's call_tool handler is a "dispatcher")
    by_framework: dict[str, dict[str, int]]  # framework -> kind -> count
    # Each file parsed for nothing, with what it is (``nothing_kind``): why the pre-scan could not tell.
    nothing: dict[str, str]
    lines_parsed: int
    seconds: dict[str, float] = field(default_factory=dict)  # in-process phases (for the record)

    def as_json(self) -> dict:
        return asdict(self)


def binds_contract(facts: FileFacts) -> bool:
    """A module-level contract: one ``ErrorContract(...)``/dict entry, or a list (or sum) holding one."""

    def holds_entry(binding: object) -> bool:
        if isinstance(binding, Entry):
            return True
        if isinstance(binding, ListExpr):
            return any(isinstance(item, EntryItem) for item in binding.items)
        if isinstance(binding, ConcatExpr):
            return any(holds_entry(part) for part in binding.parts)
        return False

    return any(holds_entry(binding) for binding in facts.bindings.values())


def count_files(tree: Path, jobs: int | None = None) -> FileCounts:
    """Lint ``tree`` in this process (no cache: nothing is written) and name what it read and parsed."""
    options = Options(paths=[str(tree)], jobs=jobs, use_cache=False)
    config, settings = configure(options)
    started = time.perf_counter()
    with gc_paused():
        analysis = analyse(options, config, settings)
        analysed = time.perf_counter()
        consulted = _recording_lookups(analysis)
        view = analysis.resolved()
    resolved = time.perf_counter()

    unreadable = [r.path for r in analysis.results if r.problem is not None and r.problem.code == "FL001"]
    main_parsed = [r for r in analysis.results if not r.skipped and r.path not in unreadable]
    runtime_modules = tuple(settings.runtime_modules)
    admitted: dict[str, str] = {}
    for result in main_parsed:
        data = read_source(result.path)
        first_look = isinstance(data, bytes) and mentions_runtime(data, runtime_modules)
        admitted[result.path] = PRESCAN if first_look else SECOND_LOOK
    failed = {r.path: r.problem.code for r in main_parsed if r.facts is None and r.problem is not None}
    for path in analysis.loaded:
        admitted.setdefault(path, ON_DEMAND)
        if path not in analysis.files:
            failed[path] = "FL000"  # the index got no facts for it: it could not be parsed
    consulted.update(analysis.loaded)

    defines = {d.path for d in view.definitions}
    defines |= {path for path, facts in analysis.files.items() if path in admitted and binds_contract(facts)}
    # A file whose registrations are all dynamic (``mcp.prompt(name=f._name)(obj)`` in a loop over
    # imported functions) defines tools or prompts the linter cannot name: it registers, so it
    # counts as defining, and is listed on its own.
    # (Only among files nothing else accounts for; a helper's own registration is a template.)
    reached = {r.path for d in view.definitions for r in d.reach}
    reached |= {path for d in view.definitions for path in d.contract.files}
    dynamic = {
        path
        for path, facts in analysis.files.items()
        if path in admitted
        and path not in defines | reached | consulted
        and any(d.template is None for d in facts.definitions)
    }
    defines |= dynamic
    parsed = sorted(admitted)
    walked = {r.path for r in analysis.results}
    kinds: dict[str, int] = {}
    frameworks: dict[str, dict[str, int]] = {}
    for definition in view.definitions:
        kind = "dispatcher" if definition.definition.dispatcher else definition.kind
        kinds[kind] = kinds.get(kind, 0) + 1
        per = frameworks.setdefault(definition.definition.framework, {})
        per[kind] = per.get(kind, 0) + 1
    neither = sorted(p for p in parsed if p not in defines | reached | consulted)
    return FileCounts(
        discovered=len(analysis.results),
        read=len(walked | set(analysis.loaded)) - len(unreadable),
        skipped=sum(1 for r in analysis.results if r.skipped),
        unreadable=sorted(unreadable),
        parsed=parsed,
        parse_operations=len(main_parsed) + len(analysis.loaded),
        admitted=admitted,
        failed=failed,
        defines=sorted(p for p in parsed if p in defines),
        reached=sorted(p for p in parsed if p in reached and p not in defines),
        consulted=sorted(p for p in parsed if p in consulted and p not in defines | reached),
        neither=neither,
        dynamic=sorted(dynamic),
        definitions=dict(sorted(kinds.items())),
        by_framework={name: dict(sorted(per.items())) for name, per in sorted(frameworks.items())},
        nothing={p: nothing_kind(p, analysis.files.get(p)) for p in neither},
        lines_parsed=sum(_lines(p) for p in parsed),
        seconds={"analyse": round(analysed - started, 3), "resolve": round(resolved - analysed, 3)},
    )


#: Why a file parsed for nothing was parsed, in the order they are tested (``nothing_kind``).
TEST_FILE = "a test file"
BINDS_SERVER = "binds a server (its tools registered elsewhere, or none)"
REGISTERS = "mentions a registration it does not make (a helper taking a server, a client, a docstring)"
IMPORTS_ONLY = "imports a framework or a server hub for other names (types, errors, Context, run())"


def nothing_kind(path: str, facts: FileFacts | None) -> str:
    """What a file parsed for nothing is: the pre-scan reads text, so each of these imports a
    framework (or a project module binding a server) and only the parse can tell it defines nothing."""
    if is_test(path):
        return TEST_FILE
    if facts is not None and facts.servers:
        return BINDS_SERVER
    data = read_source(path)
    if isinstance(data, bytes) and _REGISTRATION.search(data):
        return REGISTERS
    return IMPORTS_ONLY


_REGISTRATION = re.compile(rb"\.(?:tool|resource|prompt|add_tool|add_resource|add_prompt|from_function|call_tool)\b")


def is_test(path: str) -> bool:
    parts = Path(path).parts
    name = parts[-1]
    return (
        "tests" in parts
        or "test" in parts
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def _recording_lookups(analysis: Analysis) -> set[str]:
    """The files the index hands out from now on (every cross-file lookup asks ``module_facts``)."""
    index = analysis.index
    seen: set[str] = set()
    lookup = index.module_facts

    def recorded(module: str) -> FileFacts | None:
        facts = lookup(module)
        if facts is not None:
            seen.add(facts.path)
        return facts

    index.module_facts = recorded  # type: ignore[method-assign]  (this run's index only)
    return seen


def _lines(path: str) -> int:
    data = read_source(path)
    return data.count(b"\n") if isinstance(data, bytes) else 0


def count_in_subprocess(tree: Path) -> FileCounts:
    """``count_files`` in a fresh interpreter: the benchmark's own process stays small, so the peak
    memory ``wait4`` reports for the linter runs it starts is theirs (Linux keeps a process's peak
    across ``exec``: a child forked from a 1 GB parent would report 1 GB)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "counts.json"
        subprocess.run([sys.executable, __file__, str(tree), str(out)], check=True)
        return FileCounts(**json.loads(out.read_text(encoding="utf-8")))


if __name__ == "__main__":
    tree_arg, out_arg = sys.argv[1:3]
    Path(out_arg).write_text(json.dumps(count_files(Path(tree_arg)).as_json()), encoding="utf-8")
