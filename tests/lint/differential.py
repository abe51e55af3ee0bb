"""The differential harness (issue 29, DESIGN §13.1): warm equals cold, checked by random edits.

A seeded generator builds a small MCP project (tools on ``mcp_fusion``, on FastMCP under a project
decorator that wraps the handler in ``try/except``, services in other files, a shared contract
module, a config) and edits it at random: tools renamed, reasons and messages changed, raises moved
into services across files, contract entries added and removed, imports added, modules added,
deleted and renamed, files touched without change, configs changed (select, per-file-ignores,
exclude), a syntax error introduced and removed, and a rule module dropped into the linter that
reads a field of the project no other rule reads (``PROBE_RULE``).

After every edit it runs, each in a process of its own as users do:

* the CLI with the cache (the same cache directory all along: what CI and pre-commit run), once per
  output format;
* the CLI with ``--no-cache``, once per output format;
* the language server's lint of one file's buffer (``differential_driver.py``: one long-lived
  process keeping what the server keeps between lints), against ``--no-cache`` on that one file;

and reports every difference. The linter runs from a copy of its own source (``LinterCopy``), so a
rule module can be dropped in without touching the checkout, and an older checkout can be run
instead (``linter=``): the harness is checked to catch the defects it was built for on the code
that had them.
"""

from __future__ import annotations

import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fusion_lint.memo.stat_index import RACY_S

FORMATS = ("text", "json", "sarif", "github", "junit")
HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]
DRIVER = HERE / "differential_driver.py"

#: A rule added as CONTRIBUTING.md says, reading what no other rule reads: the parameters of the
#: handler of each definition holding an entry (another file's, for a shared entry).
PROBE_RULE = '''\
"""FL950 probe-invalid-params-without-arguments: an INVALID_PARAMS entry on a tool taking no arguments."""

from __future__ import annotations

from fusion_lint.rules import Finding, Rule, register


@register
class ProbeInvalidParamsWithoutArguments(Rule):
    code, name, severity = "FL950", "probe-invalid-params-without-arguments", "warning"
    summary = "An INVALID_PARAMS entry held by a tool whose handler takes no arguments."
    why = "No argument can be invalid."

    def check_entry(self, entry, project):
        if entry.code != "INVALID_PARAMS":
            return
        for holder in entry.holders:
            handler = holder.handler
            if handler is not None and not [p for p in handler.function.params if p != "ctx"]:
                yield Finding(entry.entry.span, f"probe: {holder.label} takes no arguments", entry.path)
'''
PROBE_MODULE = "fl950_probe_invalid_params_without_arguments.py"

CODES = ("INVALID_PARAMS", "NOT_FOUND", "INTERNAL_ERROR", "CONFLICT", "SERVICE_UNAVAILABLE")
WORDS = ("widget", "gadget", "order", "invoice", "ledger", "sprocket", "report", "user", "file", "ticket")


# ----- the project, as a model rendered to files ---------------------------------------------------


@dataclass
class Entry:
    reason: str
    code: str
    when: str
    recovery: str


@dataclass
class Tool:
    name: str
    style: str  # "fusion" (mcp_fusion's ``tool``), "fastmcp" (``@mcp.tool()`` under ``@guarded``)
    params: list[str]
    entries: list[Entry] = field(default_factory=list)
    shared: bool = False  # holds the shared contract
    raises: list[tuple[str, str]] = field(default_factory=list)  # ("fail", reason) / ("ValueError", message)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (service module, function)


@dataclass
class Service:
    name: str
    raises: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Project:
    tools: dict[str, list[Tool]] = field(default_factory=dict)  # module -> its tools
    services: dict[str, list[Service]] = field(default_factory=dict)
    shared: list[Entry] = field(default_factory=list)
    select: list[str] | None = None
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    broken: set[str] = field(default_factory=set)  # modules with a syntax error appended
    extra_imports: dict[str, list[str]] = field(default_factory=dict)  # module -> "import x" lines

    def render(self) -> dict[str, str]:
        files = {"pyproject.toml": self._config(), "contracts.py": self._contracts(), "decorators.py": DECORATORS}
        for module, services in self.services.items():
            files[f"{module}.py"] = self._services(module, services)
        for module, tools in self.tools.items():
            files[f"{module}.py"] = self._tools(module, tools)
        return files

    def _config(self) -> str:
        lines = ["[tool.fusion-lint]"]
        if self.select is not None:
            lines.append(f"select = {json.dumps(self.select)}")
        if self.exclude:
            lines.append(f"extend-exclude = {json.dumps(self.exclude)}")
        if self.per_file_ignores:
            lines.append("[tool.fusion-lint.per-file-ignores]")
            lines += [f'"{path}" = {json.dumps(codes)}' for path, codes in sorted(self.per_file_ignores.items())]
        return "\n".join(lines) + "\n"

    def _contracts(self) -> str:
        body = "".join(f"    {_entry(entry)},\n" for entry in self.shared)
        return f"from mcp_fusion import ErrorContract, JsonRpcErrorCode\n\nSHARED = [\n{body}]\n"

    def _services(self, module: str, services: list[Service]) -> str:
        text = "from mcp_fusion import fail\n\n"
        for service in services:
            text += f"\ndef {service.name}(value: str) -> dict:\n"
            for kind, what in service.raises:
                text += f"    if value == {what!r}:\n        {_raise(kind, what)}\n"
            text += '    return {"value": value}\n\n'
        return self._tail(module, text)

    def _tools(self, module: str, tools: list[Tool]) -> str:
        head = ["from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail, tool"]
        if any(t.style == "fastmcp" for t in tools):
            head += ["from mcp.server.fastmcp import FastMCP", "", "from decorators import guarded"]
        if any(t.shared for t in tools):
            head.append("from contracts import SHARED")
        for service_module, function in sorted({call for t in tools for call in t.calls}):
            head.append(f"from {service_module} import {function}")
        head += self.extra_imports.get(module, [])
        text = "\n".join(head) + "\n\n"
        if any(t.style == "fastmcp" for t in tools):
            text += f'mcp = FastMCP("{module}")\n\n'
        for t in tools:
            entries = ("    *SHARED,\n" if t.shared else "") + "".join(f"    {_entry(e)},\n" for e in t.entries)
            if t.style == "fusion":
                text += f'\n@tool("{t.name}", errors=[\n{entries}])\n'
            else:
                text += f"\n@mcp.tool()\n@guarded\n@contract(errors=[\n{entries}])\n"
            params = ", ".join(f"{p}: str" for p in t.params)
            text += f"async def {t.name}({params}) -> dict:\n"
            argument = t.params[0] if t.params else '"x"'
            for kind, what in t.raises:
                text += f"    if {argument} == {what!r}:\n        {_raise(kind, what)}\n"
            for _, function in t.calls:
                text += f"    {function}({argument})\n"
            text += '    return {"ok": True}\n\n'
        return self._tail(module, text)

    def _tail(self, module: str, text: str) -> str:
        return text + ("\ndef broken(:\n    pass\n" if module in self.broken else "")


DECORATORS = """\
import functools


def guarded(handler):
    @functools.wraps(handler)
    async def wrapper(*args, **kwargs):
        try:
            return await handler(*args, **kwargs)
        except LookupError as error:
            raise RuntimeError(f"lookup failed: {error}") from error

    return wrapper
"""


def _entry(entry: Entry) -> str:
    return (
        f"ErrorContract(reason={entry.reason!r}, code=JsonRpcErrorCode.{entry.code}, when={entry.when!r}, "
        f"recovery={entry.recovery!r})"
    )


def _raise(kind: str, what: str) -> str:
    return f"raise fail({what!r})" if kind == "fail" else f"raise {kind}({what!r})"


# ----- random projects and edits ------------------------------------------------------------------


class Editor:
    """A seeded source of projects and of edits on them; ``step()`` names the edit it made."""

    def __init__(self, seed: int, modules: int = 4):
        self.rng = random.Random(seed)
        self.counter = 0
        self.project = Project()
        self.probe = False  # the probe rule is dropped into the linter
        for _ in range(2):
            self.project.services[self._fresh("svc")] = [self._service() for _ in range(2)]
        self.project.shared = [self._entry() for _ in range(2)]
        for _ in range(modules):
            self.project.tools[self._fresh("tools")] = [self._tool() for _ in range(self.rng.randint(1, 3))]

    def _fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def _word(self) -> str:
        return self.rng.choice(WORDS)

    def _reason(self) -> str:
        # Now and then a reason FL107 rejects (its fix renames the reason at every raise).
        return self._fresh(self._word()) if self.rng.random() > 0.15 else f"Bad{self._word().title()}{self.counter}"

    def _entry(self, reason: str | None = None) -> Entry:
        word = self._word()
        recovery = self.rng.choice(
            [
                f"Call list_{word}s to find a valid id, then try again.",
                "Wait a minute, then call ping again.",
                "Retry.",
                f"Call {self._word()}_lookup_{self.counter} with the id.",
            ]
        )
        return Entry(reason or self._reason(), self.rng.choice(CODES), f"The {word} is gone", recovery)

    def _service(self) -> Service:
        service = Service(self._fresh("fetch"))
        for _ in range(self.rng.randint(0, 2)):
            service.raises.append(self._raise())
        return service

    def _raise(self, entries: list[Entry] | None = None) -> tuple[str, str]:
        if entries and self.rng.random() < 0.6:
            return ("fail", self.rng.choice(entries).reason)
        kind = self.rng.choice(["ValueError", "KeyError", "fail"])
        return (kind, self._reason() if kind == "fail" else f"no such {self._word()}")

    def _tool(self) -> Tool:
        tool = Tool(
            self._fresh(self._word()),
            self.rng.choice(["fusion", "fastmcp"]),
            self.rng.choice([[], ["item_id"], ["item_id", "page"]]),
            shared=self.rng.random() < 0.6,
        )
        tool.entries = [self._entry() for _ in range(self.rng.randint(0, 2))]
        tool.raises = [self._raise(tool.entries) for _ in range(self.rng.randint(0, 2))]
        if self.project.services and self.rng.random() < 0.7:
            module = self.rng.choice(sorted(self.project.services))
            if self.project.services[module]:
                tool.calls.append((module, self.rng.choice(self.project.services[module]).name))
        return tool

    def _all_tools(self) -> list[tuple[str, Tool]]:
        return [(module, tool) for module, tools in sorted(self.project.tools.items()) for tool in tools]

    def step(self) -> str:
        """One random edit of the model; the name of what it did."""
        edits = [name for name in dir(self) if name.startswith("edit_")]
        while True:
            name = self.rng.choice(sorted(edits))
            done = getattr(self, name)()
            if done:
                return done

    # Each edit returns what it did, or "" when it does not apply to the project as it is.

    def edit_rename_tool(self) -> str:
        module, tool = self.rng.choice(self._all_tools())
        old, tool.name = tool.name, self._fresh(self._word())
        return f"rename tool {old} -> {tool.name} in {module}"

    def edit_change_reason(self) -> str:
        entries = [e for _, t in self._all_tools() for e in t.entries] + self.project.shared
        if not entries:
            return ""
        entry = self.rng.choice(entries)
        old, entry.reason = entry.reason, self._reason()
        return f"reason {old} -> {entry.reason}"

    def edit_change_message(self) -> str:
        entries = [e for _, t in self._all_tools() for e in t.entries] + self.project.shared
        entry = self.rng.choice(entries) if entries else None
        if entry is None:
            return ""
        if self.rng.random() < 0.5:
            entry.recovery = self.rng.choice(["Retry.", f"Call list_{self._word()}s, then try again with its id."])
        else:
            entry.code = self.rng.choice(CODES)
        return f"entry {entry.reason}: recovery/code changed"

    def edit_change_params(self) -> str:
        module, tool = self.rng.choice(self._all_tools())
        tool.params = [] if tool.params else ["item_id"]
        return f"params of {tool.name} in {module} -> {tool.params}"

    def edit_move_raise_into_service(self) -> str:
        candidates = [(m, t) for m, t in self._all_tools() if t.raises]
        if not candidates or not self.project.services:
            return ""
        module, tool = self.rng.choice(candidates)
        moved = tool.raises.pop(self.rng.randrange(len(tool.raises)))
        service_module = self.rng.choice(sorted(self.project.services))
        service = Service(self._fresh("moved"), [moved])
        self.project.services[service_module].append(service)
        tool.calls.append((service_module, service.name))
        return f"raise {moved} of {tool.name} moved into {service_module}.{service.name}"

    def edit_add_entry(self) -> str:
        module, tool = self.rng.choice(self._all_tools())
        if self.rng.random() < 0.3:
            self.project.shared.append(self._entry())
            return "shared entry added"
        tool.entries.append(self._entry())
        return f"entry added to {tool.name}"

    def edit_remove_entry(self) -> str:
        if self.rng.random() < 0.3 and self.project.shared:
            self.project.shared.pop(self.rng.randrange(len(self.project.shared)))
            return "shared entry removed"
        candidates = [t for _, t in self._all_tools() if t.entries]
        if not candidates:
            return ""
        tool = self.rng.choice(candidates)
        tool.entries.pop(self.rng.randrange(len(tool.entries)))
        return f"entry removed from {tool.name}"

    def edit_toggle_shared(self) -> str:
        _, tool = self.rng.choice(self._all_tools())
        tool.shared = not tool.shared
        return f"{tool.name} shared={tool.shared}"

    def edit_add_import(self) -> str:
        module = self.rng.choice(sorted(self.project.tools))
        other = self.rng.choice(sorted(self.project.services) + ["json", "contracts"])
        self.project.extra_imports.setdefault(module, []).append(f"import {other}")
        return f"import {other} added to {module}"

    def edit_add_module(self) -> str:
        if self.rng.random() < 0.3:
            name = self._fresh("svc")
            self.project.services[name] = [self._service()]
            return f"service module {name} added"
        name = self._fresh("tools")
        self.project.tools[name] = [self._tool()]
        return f"tool module {name} added"

    def edit_delete_module(self) -> str:
        if len(self.project.tools) <= 1:
            return ""
        name = self.rng.choice(sorted(self.project.tools))
        del self.project.tools[name]
        self.project.extra_imports.pop(name, None)
        self.project.broken.discard(name)
        return f"tool module {name} deleted"

    def edit_delete_service_module(self) -> str:
        # Its importers now import a module that is not there (an unresolved import), as real edits do.
        if len(self.project.services) <= 1:
            return ""
        name = self.rng.choice(sorted(self.project.services))
        del self.project.services[name]
        return f"service module {name} deleted"

    def edit_rename_module(self) -> str:
        old = self.rng.choice(sorted(self.project.tools))
        new = self._fresh("tools")
        self.project.tools[new] = self.project.tools.pop(old)
        if old in self.project.extra_imports:
            self.project.extra_imports[new] = self.project.extra_imports.pop(old)
        if old in self.project.broken:
            self.project.broken.discard(old)
            self.project.broken.add(new)
        return f"module {old} renamed {new}"

    def edit_touch(self) -> str:
        return "touch"  # the runner touches a random file without changing it

    def edit_config(self) -> str:
        choice = self.rng.randrange(4)
        if choice == 0:
            wider = ["FL", "FL950"] if self.probe else ["FL"]  # (a code no rule has is a config error)
            self.project.select = None if self.project.select else self.rng.choice([["FL1", "FL2"], wider])
        elif choice == 1:
            module = self.rng.choice(sorted(self.project.tools))
            codes = self.rng.choice([["FL107"], ["FL2"], ["FL401", "FL950"] if self.probe else ["FL401"]])
            if f"{module}.py" in self.project.per_file_ignores:
                del self.project.per_file_ignores[f"{module}.py"]
            else:
                self.project.per_file_ignores[f"{module}.py"] = codes
        elif choice == 2:
            module = self.rng.choice(sorted(self.project.tools))
            self.project.exclude = [] if self.project.exclude else [f"{module}.py"]
        else:
            return ""
        return f"config: select={self.project.select} ignores={self.project.per_file_ignores} exclude={self.project.exclude}"

    def edit_syntax_error(self) -> str:
        if self.project.broken:
            fixed = self.rng.choice(sorted(self.project.broken))
            self.project.broken.discard(fixed)
            return f"syntax error removed from {fixed}"
        module = self.rng.choice(sorted(self.project.tools) + sorted(self.project.services))
        self.project.broken.add(module)
        return f"syntax error in {module}"

    def edit_drop_in_probe_rule(self) -> str:
        if self.probe:
            return ""
        self.probe = True
        return "probe rule dropped into the linter"


# ----- running the linter three ways -------------------------------------------------------------


class LinterCopy:
    """The linter's and the runtime's source copied into a folder of their own, run with it first
    on ``PYTHONPATH``: a rule module can be dropped in without touching the checkout."""

    def __init__(self, root: Path, source: Path = CHECKOUT):
        self.path = root / "linter"
        for package in ("fusion_lint", "mcp_fusion"):
            shutil.copytree(source / package, self.path / package, ignore=shutil.ignore_patterns("__pycache__"))

    def drop_in(self, name: str, text: str) -> None:
        (self.path / "fusion_lint" / "rules" / name).write_text(text)

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.path)
        env.pop("FUSION_LINT_OUTPUT_FORMAT", None)
        env["NO_COLOR"] = "1"
        return env


def cli(linter: LinterCopy, project: Path, args: list[str]) -> tuple[int, str]:
    """One run of the console script, as a user runs it, in the project's folder."""
    done = subprocess.run(
        [sys.executable, "-m", "fusion_lint", "check", *args],
        cwd=project,
        env=linter.environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr


def shown(outcome: tuple[int, str]) -> str:
    return f"exit {outcome[0]}\n{outcome[1]}"


@dataclass
class Difference:
    step: int
    edit: str
    what: str
    expected: str
    got: str

    def __str__(self) -> str:
        lines = difflib.unified_diff(
            self.expected.splitlines(), self.got.splitlines(), "expected", "got", lineterm="", n=1
        )
        return f"step {self.step} ({self.edit}): {self.what}\n" + "\n".join(list(lines)[:60])


class Runner:
    """A project on disk under ``work`` edited step by step, checked three ways after each edit."""

    def __init__(self, work: Path, seed: int, modules: int = 4, linter: Path = CHECKOUT, formats=FORMATS):
        self.work, self.seed, self.formats = work, seed, formats
        self.editor = Editor(seed, modules)
        self.linter = LinterCopy(work, linter)
        self.project = work / "project"
        self.project.mkdir()
        self.written: dict[str, str] = {}
        self.clock = 1_600_000_000  # mtimes in the past, one apart per write: never "racy"
        self.probe_dropped = False
        self.written_at = 0.0  # when a file of the project was last written (its ctime)
        self.server = subprocess.Popen(
            [sys.executable, str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.linter.environment(),
            text=True,
            cwd=self.project,
        )
        self.steps = 0

    def close(self) -> None:
        if self.server.poll() is None:
            self.server.stdin.close()  # type: ignore[union-attr]
            self.server.wait(timeout=30)

    def _write(self) -> None:
        files = self.editor.project.render()
        for name in sorted(set(self.written) - set(files)):
            (self.project / name).unlink()
        for name, text in sorted(files.items()):
            if self.written.get(name) != text:
                path = self.project / name
                path.write_text(text)
                self.clock += 2
                os.utime(path, (self.clock, self.clock))
                self.written_at = time.time()
        self.written = files

    def _touch(self) -> None:
        name = self.editor.rng.choice(sorted(self.written))
        self.clock += 2
        os.utime(self.project / name, (self.clock, self.clock))
        self.written_at = time.time()

    def _lsp(self, path: Path) -> tuple[int, str]:
        assert self.server.stdin is not None and self.server.stdout is not None
        if self.probe_dropped and not getattr(self, "_server_restarted", False):
            # The editor restarts the server when the linter is upgraded (a new rule is new code).
            self.close()
            self.server = subprocess.Popen(
                [sys.executable, str(DRIVER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self.linter.environment(),
                text=True,
                cwd=self.project,
            )
            self._server_restarted = True
        self.server.stdin.write(json.dumps({"path": str(path), "text": path.read_text()}) + "\n")
        self.server.stdin.flush()
        answer = json.loads(self.server.stdout.readline())
        return answer["status"], answer["output"]

    def _settle(self) -> None:
        """Wait until every write is older than the linter's racy window: a stat taken within it is
        never trusted, so without the wait a fast machine never exercises the run snapshot (a
        slower one does: CI found the probe rule's defect where this machine did not)."""
        time.sleep(max(0.0, self.written_at + RACY_S + 0.1 - time.time()))

    def check(self, edit: str) -> list[Difference]:
        """The three runs after the current state was written; every difference among them."""
        self._settle()
        found = []
        # JSON (every field of every finding, fixes included) and one more format, another each step:
        # the first run after the edit is each format in turn.
        other = self.formats[self.steps % len(self.formats)]
        rotation = [other, "json"] if other != "json" else ["json"]
        for output_format in rotation:
            args = ["--output-format", output_format, "."]
            warm = cli(self.linter, self.project, args)
            cold = cli(self.linter, self.project, [*args[:2], "--no-cache", "."])
            if warm != cold:
                found.append(
                    Difference(self.steps, edit, f"warm CLI != --no-cache ({output_format})", *map(shown, (cold, warm)))
                )
            if warm[0] not in (0, 1):
                found.append(Difference(self.steps, edit, f"exit {warm[0]}", "exit 0 or 1", warm[1]))
        python = sorted(name for name in self.written if name.endswith(".py"))
        name = self.editor.rng.choice(python)
        alone = cli(self.linter, self.project, ["--output-format", "json", "--no-cache", name])
        warm_alone = cli(self.linter, self.project, ["--output-format", "json", name])
        if warm_alone != alone:
            found.append(
                Difference(self.steps, edit, f"one file warm != --no-cache ({name})", *map(shown, (alone, warm_alone)))
            )
        server = self._lsp(self.project / name)
        if server != alone:
            found.append(
                Difference(self.steps, edit, f"language server != --no-cache ({name})", *map(shown, (alone, server)))
            )
        return found

    def apply(self, edit: str, change) -> list[Difference]:
        """A chosen edit (``change(project)``), written and checked: a regression case's step."""
        self.steps += 1
        change(self.editor.project)
        if edit.startswith("probe rule") and not self.probe_dropped:
            self.linter.drop_in(PROBE_MODULE, PROBE_RULE)
            self.probe_dropped = self.editor.probe = True
        self._write()
        return self.check(edit)

    def run(self, steps: int) -> list[Difference]:
        """The first state, then ``steps`` random edits, checked after each; the differences."""
        found = []
        self._write()
        found += self.check("the first run")
        for _ in range(steps if not found else 0):
            self.steps += 1
            edit = self.editor.step()
            if edit == "touch":
                self._touch()
            elif edit.startswith("probe rule") and not self.probe_dropped:
                self.linter.drop_in(PROBE_MODULE, PROBE_RULE)
                self.probe_dropped = True
            self._write()
            found += self.check(edit)
            if found:
                break  # the first difference is the useful one: later steps rest on it
        return found


def differences(seed: int, steps: int, modules: int = 4, linter: Path = CHECKOUT, formats=FORMATS, edits=None):
    """Run one seeded sequence in a temporary folder; its differences (empty: warm equals cold)."""
    with tempfile.TemporaryDirectory(prefix="fusion-differential-") as work:
        runner = Runner(Path(work), seed, modules, linter, formats)
        try:
            if edits is not None:
                return edits(runner)
            return runner.run(steps)
        finally:
            runner.close()


# ----- corpus units, edited in text ------------------------------------------------------------------

CORPUS = CHECKOUT.parent / "shared" / "corpus"
STRING = re.compile(r"""(["'])([A-Za-z][^"'\\\n]{2,60})\1""")
REASON = re.compile(r"""reason=(["'])([a-z_]+)\1""")


def corpus_units() -> list[Path]:
    """The units of ``../shared/corpus`` (its README's table: one folder per unit)."""
    readme = CORPUS / "README.md"
    if not readme.is_file():
        return []
    folders = [line.split("|")[2].strip() for line in readme.read_text().splitlines() if line.count("|") > 6]
    return [CORPUS / folder for folder in folders if (CORPUS / folder).is_dir()]


class CorpusEdits:
    """A copy of a real server edited at random, in text: a message, a reason, a line shift above
    everything, a raise turned into a bare call, a syntax error (repaired at the next step), a file
    deleted, a file touched; each step checked warm CLI against ``--no-cache``."""

    def __init__(self, unit: Path, work: Path, seed: int, linter: Path):
        self.rng = random.Random(seed)
        self.project = work / "project"
        shutil.copytree(unit, self.project)
        self.linter = LinterCopy(work, linter)
        self.clock = 1_600_000_000
        self.broken: Path | None = None
        self.steps = 0

    def _files(self) -> list[Path]:
        return sorted(self.project.rglob("*.py"))

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text)
        self.clock += 2
        os.utime(path, (self.clock, self.clock))

    def edit(self) -> str:
        if self.broken is not None:
            path, self.broken = self.broken, None
            self._write(path, path.read_text().replace("\ndef broken(:\n", "\n"))
            return f"syntax error removed from {path.name}"
        path = self.rng.choice(self._files())
        text = path.read_text(errors="replace")
        kind = self.rng.choice(("message", "reason", "shift", "raise", "syntax", "delete", "touch"))
        if kind == "message" and (found := list(STRING.finditer(text))):
            hit = self.rng.choice(found)
            text = text[: hit.start(2)] + "edited " + text[hit.start(2) :]
        elif kind == "reason" and (found := list(REASON.finditer(text))):
            hit = self.rng.choice(found)
            text = text[: hit.end(2)] + "_edited" + text[hit.end(2) :]
        elif kind == "raise" and "    raise " in text:
            text = text.replace("    raise ", "    ", 1)
        elif kind == "syntax":
            text, self.broken = text + "\ndef broken(:\n", path
        elif kind == "delete" and len(self._files()) > 1:
            path.unlink()
            return f"{path.name} deleted"
        elif kind == "touch":
            self.clock += 2
            os.utime(path, (self.clock, self.clock))
            return f"{path.name} touched"
        else:
            kind, text = "shift", "# edited above everything\n" + text
        self._write(path, text)
        return f"{kind} in {path.relative_to(self.project)}"

    def check(self, edit: str) -> list[Difference]:
        time.sleep(RACY_S + 0.1)  # every write older than the racy window: the snapshot is used
        found = []
        other = FORMATS[self.steps % len(FORMATS)]
        for output_format in dict.fromkeys((other, "json")):
            args = ["--output-format", output_format, "."]
            warm = cli(self.linter, self.project, args)
            cold = cli(self.linter, self.project, [*args[:2], "--no-cache", "."])
            if warm != cold:
                found.append(
                    Difference(self.steps, edit, f"warm != --no-cache ({output_format})", shown(cold), shown(warm))
                )
            if warm[0] not in (0, 1):
                found.append(Difference(self.steps, edit, f"exit {warm[0]}", "exit 0 or 1", warm[1]))
        return found

    def run(self, steps: int) -> list[Difference]:
        found = self.check("the first run")
        while not found and self.steps < steps:
            self.steps += 1
            found = self.check(self.edit())
        return found
