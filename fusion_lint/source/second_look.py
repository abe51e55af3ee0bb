"""The pre-scan's second look (DESIGN §10, §12.2): files the pre-scan skipped that use a project
module passing the runtime on (a re-export hub, a server, a registration helper) are analysed after all."""

from __future__ import annotations

import re
from pathlib import Path

from fusion_lint.base.modules import module_of
from fusion_lint.config.settings import Settings
from fusion_lint.source.pipeline import (
    FileResult,
    calls_one_of,
    hub_of,
    import_tails,
    imports_module,
    package_folder,
    read_source,
    registers_on,
)
from fusion_lint.source.runner import FactsLease, run_files

_WORD = re.compile(rb"\w+")


def admit_reexport_users(
    results: list[FileResult],
    settings: Settings,
    use_cache: bool,
    root: Path,
    overrides: dict[str, bytes],
    isolate: bool = True,
    lease: FactsLease | None = None,
    deadline: float | None = None,
) -> list[FileResult]:
    """The pre-scan's second look (DESIGN §10, §12.2): a file that never names the runtime or a
    framework but imports a project module re-exporting the runtime (``from myapp.api import tool``),
    registers on a server another module builds (``from myapp.server import mcp`` then
    ``@mcp.tool()``), or calls a registration helper another module defines (``from myapp.audit
    import audited_tool`` then ``audited_tool(mcp, "x")(fn)``), is analysed after all.

    Re-export hubs are the modules that bind runtime names and define no tool themselves (tool
    modules import the runtime to use it, not to pass it on): any use of theirs counts. Server hubs
    bind a server at module level: a file importing one is admitted only if it spells a
    registration on one of those names (``registers_on``; on any name for a module the pre-scan
    left because it only builds a server, which the project index reads when a definition names
    its server) — the tests, entry points and clients
    that import a server to run, test or call it define nothing. Helper hubs hold a registration
    helper: a file importing one is admitted only if it calls it. Keeping to them keeps this look
    to a few long needles, so a large tree that never mentions the runtime still costs one read.
    ``lease``, ``deadline``: the run's (``run_files``)."""
    # A file inside the hub's top-level package may import it relatively (``from ...common.server
    # import mcp``), so there its last name part is enough of a needle.
    # Per hub: its module, its package's folder, and what a file importing it must also spell: None
    # (nothing more), else the servers it binds (None: any name) and the helpers it defines.
    hubs: list[tuple[str, str, tuple[tuple[str, ...] | None, tuple[str, ...]] | None]] = []
    for r in results:
        hub = hub_of(r)
        if hub is not None:
            hubs.append(hub)
    for r in results:
        module = module_of(r.path)[0] if r.builds_server else ""
        if module:  # a server module the pre-scan left: its names are not known yet
            hubs.append((module, package_folder(r.path, module), (None, ())))
    skipped = [r.path for r in results if r.skipped]
    if not hubs or not skipped:
        return results
    # A file names a hub on an import line only if that line holds the last part of the hub's
    # module as a word: each file is tried on the hubs its import lines name, not on all of them.
    by_word: dict[bytes, list[tuple[str, str, tuple[tuple[str, ...] | None, tuple[str, ...]] | None]]] = {}
    for hub in hubs:
        by_word.setdefault(hub[0].rpartition(".")[2].encode(), []).append(hub)
    admitted = []
    for path in skipped:
        data = overrides.get(path)
        if data is None:
            read = read_source(path)
            if not isinstance(read, bytes):
                continue
            data = read
        tails = import_tails(data)  # once per file, not once per hub
        if not tails:
            continue  # no import statement: no hub reached
        folders = {str(folder) for folder in Path(path).parents}
        answers: dict[tuple[tuple[str, ...] | None, tuple[str, ...]], bool] = {}  # many hubs ask the same

        def uses(spelled: tuple[tuple[str, ...] | None, tuple[str, ...]], data: bytes = data) -> bool:
            if spelled not in answers:
                answers[spelled] = registers_on(data, spelled[0]) or calls_one_of(data, spelled[1])
            return answers[spelled]

        named = [hub for word in sorted(by_word.keys() & set(_WORD.findall(tails))) for hub in by_word[word]]
        if any(
            imports_module(data, module, package in folders, tails) and (spelled is None or uses(spelled))
            for module, package, spelled in named
        ):
            admitted.append(path)
    if not admitted:
        return results
    second = {
        r.path: r
        for r in run_files(
            admitted,
            settings,
            jobs=1,
            use_cache=use_cache,
            cache_root=root,
            prescan=False,
            overrides=overrides,
            isolate=isolate,
            lease=lease,
            deadline=deadline,
        )
    }
    return [second.get(r.path, r) for r in results]
