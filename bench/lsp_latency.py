"""Editor latency of ``fusion-lint lsp`` (DESIGN §10: diagnostics within 300 ms of opening or
changing a 2,000-line tool module; within 500 ms of the last keystroke of a typing burst; the
server and its workers within 500 MB).

A generated project (the dense corpus' package: shared contracts, a service layer, tool modules)
plus one ~2,100-line tool module; the server runs as a subprocess and pygls' client plays the editor.
Measured from the moment the notification is written to the moment ``publishDiagnostics`` for that
version arrives:

* cold open: the first open, the project's other files not yet in the cache;
* open: the module opened again (close, open) with a warm cache;
* edit: one isolated change (a quick fix, a paste): linted at once;
* typing: a burst of keystrokes 40 ms apart, timed from the last one (this includes the debounce).

Memory is the largest resident set of the server plus its processes (workers, fork server) seen
after each publish.

``--before DIR`` runs the same session first with the server's code taken from ``DIR`` (e.g. a
``git archive main`` copy, put first on ``PYTHONPATH``), then with this checkout's, on the same
project, back to back: the two columns come from one run on one machine.

Usage: ``python bench/lsp_latency.py [--modules 20] [--repeat 10] [--before /tmp/lsp-before]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import PACKAGE, tool_module, write_dense_corpus  # noqa: E402

TARGET_MS = {"open": 300.0, "edit": 300.0, "typing": 500.0}
TARGET_MB = 500.0
TARGET_LINES = 2000
COLD_TIMEOUT_S = 900  # the first open reads the whole project (3,000 modules: a minute on 2 busy cores)


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and every process below it (Linux /proc; 0 elsewhere)."""
    return sum(tree_rss_by_process(pid))


def tree_rss_by_process(pid: int) -> list[float]:
    """The resident memory of ``pid`` and of each process below it, in MB (``pid`` first)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, ()))
        try:
            with open(f"/proc/{current}/status") as handle:
                found.append(next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:")) / 1024)
        except (OSError, StopIteration):
            pass
    return found


def big_tool_module(lines: int = TARGET_LINES) -> str:
    """Generated tool modules joined until ``lines`` is reached (later ``__future__`` imports dropped:
    they are only legal at the top)."""
    parts = [tool_module(0)]
    index = 1000
    while sum(part.count("\n") for part in parts) < lines:
        parts.append(tool_module(index).replace("from __future__ import annotations\n", ""))
        index += 1
    return "".join(parts)


class Editor:
    """A pygls client that remembers when each (uri, version) got its diagnostics."""

    def __init__(self) -> None:
        self.client = LanguageClient("lsp-latency-bench", "1")
        self.arrived: dict[tuple[str, int], asyncio.Future] = {}
        self.counts: dict[tuple[str, int], int] = {}
        self.peak_mb = 0.0
        self.peak_by_phase: dict[str, list[float]] = {}  # phase -> each process's MB at its largest total

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            self.counts[key] = len(params.diagnostics)
            future = self.expect(*key)
            if not future.done():
                future.set_result(time.perf_counter())

    def expect(self, uri: str, version: int) -> asyncio.Future:
        return self.arrived.setdefault((uri, version), asyncio.get_running_loop().create_future())

    async def timed(self, uri: str, version: int, send, timeout: float = 120, phase: str = "") -> float:
        waiting = self.expect(uri, version)
        started = time.perf_counter()
        send()
        arrived = await asyncio.wait_for(waiting, timeout=timeout)
        server = getattr(self.client, "_server", None)
        if server is not None:
            processes = tree_rss_by_process(server.pid)
            self.peak_mb = max(self.peak_mb, sum(processes))
            if sum(processes) > sum(self.peak_by_phase.get(phase, [])):
                self.peak_by_phase[phase] = processes
        return (arrived - started) * 1000


async def measure(root: Path, module: Path, text: str, repeat: int, code: str | None = None) -> dict[str, list[float]]:
    """One editor session; ``code``: a directory put first on the server's ``PYTHONPATH``."""
    editor = Editor()
    client = editor.client
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [code, env.get("PYTHONPATH")]))
    await client.start_io(sys.executable, "-m", "fusion_lint", "lsp", cwd=str(root), env=env)
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri(), process_id=None)
    )
    client.initialized(types.InitializedParams())
    uri = module.as_uri()
    version = 0
    results: dict[str, list[float]] = {"cold open": [], "open": [], "edit": [], "typing": []}

    def open_document() -> None:
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            )
        )

    def change(new_text: str) -> None:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )

    version += 1
    results["cold open"].append(await editor.timed(uri, version, open_document, COLD_TIMEOUT_S, phase="cold open"))
    for _ in range(repeat):
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        version += 1
        results["open"].append(await editor.timed(uri, version, open_document, phase="open"))
    for round_ in range(repeat):
        await asyncio.sleep(0.4)  # an isolated edit: nothing typed just before it
        version += 1
        edited = text + f"\n# edit {round_}\n"
        results["edit"].append(await editor.timed(uri, version, lambda: change(edited), phase="edit"))
    for round_ in range(repeat):
        await asyncio.sleep(0.4)
        for keystroke in range(5):
            version += 1
            change(text + f"\n# typing {round_} {'x' * keystroke}\n")
            await asyncio.sleep(0.04)
        version += 1
        final = text + f"\n# typed {round_}\n"
        results["typing"].append(await editor.timed(uri, version, lambda: change(final), phase="typing"))
    print(f"diagnostics per publish: {editor.counts[(uri, 1)]}")
    # Where the memory is: the server first, then the processes below it (fork server, workers).
    print(
        "memory at each phase's largest (MB, the server + each process below it): "
        + "; ".join(
            f"{phase} {sum(mb):.0f} = " + " + ".join(f"{one:.0f}" for one in mb)
            for phase, mb in editor.peak_by_phase.items()
        )
    )
    results["memory MB"] = [editor.peak_mb]
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return results


def verdict(name: str, value: float) -> str:
    if name == "memory MB":
        return "ok" if value <= TARGET_MB else "over target"
    target = TARGET_MS.get(name)
    return "" if target is None else ("ok" if value <= target else "over target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=20, help="other tool modules in the project")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--before", help="a copy of the code to compare with (put first on the server's PYTHONPATH)")
    args = parser.parse_args()
    sessions: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="fusion-lint-lsp-bench-") as directory:
        root = Path(directory)
        write_dense_corpus(root, modules=args.modules)
        text = big_tool_module()
        module = root / PACKAGE / "tools" / "big.py"
        module.write_text(text)
        print(f"module: {text.count(chr(10))} lines; project: {args.modules} other tool modules")
        if args.before:
            sessions["before"] = asyncio.run(measure(root, module, text, args.repeat, os.path.abspath(args.before)))
        sessions["after" if args.before else "this checkout"] = asyncio.run(measure(root, module, text, args.repeat))
    names = list(next(iter(sessions.values())))
    print(f"{'':>10}  " + "  ".join(f"{label:>34}" for label in sessions))
    for name in names:
        cells = []
        for results in sessions.values():
            samples = results[name]
            median = statistics.median(samples)
            unit = " MB" if name == "memory MB" else " ms"
            spread = f" ({min(samples):.0f}-{max(samples):.0f})" if len(samples) > 1 else ""
            cells.append(f"{median:6.0f}{unit}{spread} {verdict(name, median)}".rjust(34))
        print(f"{name:>10}: " + "  ".join(cells))
    targets = ", ".join(f"{name} {ms:.0f} ms" for name, ms in TARGET_MS.items())
    print(f"medians (min-max, n={args.repeat}); targets: {targets}, memory {TARGET_MB:.0f} MB")


if __name__ == "__main__":
    main()
