"""Editor latency of ``fusion-lint lsp`` (DESIGN §10: diagnostics within 300 ms of opening or
changing a 2,000-line tool module).

A generated project (the dense corpus' package: shared contracts, a service layer, tool modules)
plus one ~2,100-line tool module; the server runs as a subprocess and pygls' client plays the editor.
Measured from the moment the notification is written to the moment ``publishDiagnostics`` for that
version arrives:

* cold open: the first open, the project's other files not yet in the cache;
* open: the module opened again (close, open) with a warm cache;
* edit: one isolated change (a quick fix, a paste): linted at once;
* typing: a burst of keystrokes 40 ms apart, timed from the last one (this includes the debounce).

Usage: ``python bench/lsp_latency.py [--modules 20] [--repeat 10]``
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import PACKAGE, tool_module, write_dense_corpus  # noqa: E402

TARGET_MS = 300.0
TARGET_LINES = 2000


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

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            self.counts[key] = len(params.diagnostics)
            future = self.expect(*key)
            if not future.done():
                future.set_result(time.perf_counter())

    def expect(self, uri: str, version: int) -> asyncio.Future:
        return self.arrived.setdefault((uri, version), asyncio.get_running_loop().create_future())

    async def timed(self, uri: str, version: int, send) -> float:
        waiting = self.expect(uri, version)
        started = time.perf_counter()
        send()
        arrived = await asyncio.wait_for(waiting, timeout=120)
        return (arrived - started) * 1000


async def measure(root: Path, module: Path, text: str, repeat: int) -> dict[str, list[float]]:
    editor = Editor()
    client = editor.client
    await client.start_io(sys.executable, "-m", "fusion_lint", "lsp", cwd=str(root))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(), process_id=None))  # fmt: skip
    client.initialized(types.InitializedParams())
    uri = module.as_uri()
    version = 0
    results: dict[str, list[float]] = {"cold open": [], "open": [], "edit": [], "typing": []}

    def open_document() -> None:
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))  # fmt: skip

    def change(new_text: str) -> None:
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)]))  # fmt: skip

    version += 1
    results["cold open"].append(await editor.timed(uri, version, open_document))
    for _ in range(repeat):
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))  # fmt: skip
        version += 1
        results["open"].append(await editor.timed(uri, version, open_document))
    for round_ in range(repeat):
        await asyncio.sleep(0.4)  # an isolated edit: nothing typed just before it
        version += 1
        edited = text + f"\n# edit {round_}\n"
        results["edit"].append(await editor.timed(uri, version, lambda: change(edited)))
    for round_ in range(repeat):
        await asyncio.sleep(0.4)
        for keystroke in range(5):
            version += 1
            change(text + f"\n# typing {round_} {'x' * keystroke}\n")
            await asyncio.sleep(0.04)
        version += 1
        final = text + f"\n# typed {round_}\n"
        results["typing"].append(await editor.timed(uri, version, lambda: change(final)))
    print(f"diagnostics per publish: {editor.counts[(uri, 1)]}")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=20, help="other tool modules in the project")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fusion-lint-lsp-bench-") as directory:
        root = Path(directory)
        write_dense_corpus(root, modules=args.modules)
        text = big_tool_module()
        module = root / PACKAGE / "tools" / "big.py"
        module.write_text(text)
        print(f"module: {text.count(chr(10))} lines; project: {args.modules} other tool modules")
        results = asyncio.run(measure(root, module, text, args.repeat))
    for name, samples in results.items():
        median = statistics.median(samples)
        verdict = "ok" if name == "cold open" or median <= TARGET_MS else "over target"
        spread = f" (min {min(samples):.0f}, max {max(samples):.0f}, n={len(samples)})" if len(samples) > 1 else ""
        print(f"{name:>10}: median {median:6.0f} ms{spread}  [{verdict}; target {TARGET_MS:.0f} ms]")


if __name__ == "__main__":
    main()
