"""The language server (DESIGN §9): ``fusion-lint lsp`` speaks LSP on stdio with pygls 2.

* Diagnostics come from the same engine as the CLI, through its stdin path: the unsaved buffer is
  linted as if it were the file on disk, so the file's configuration applies and the rest of its
  project (read from disk) resolves shared contracts, services and tool names.
* Linting runs in worker threads, never on the event loop, and edits are debounced; a result
  for a text the editor no longer shows is dropped, never published (its ranges would be wrong).
  A newer text never waits for an older one's lint: told so, that stops at its next stage.
* A buffer is parsed with the CLI's isolation, always: in a worker process (``session.Lent.deadline_s``)
  given ``BUFFER_DEADLINE_S``, so a pathological buffer (megabytes, a deep chain) costs a worker and
  an FL000 saying it did not finish, never the server's memory or its other documents: each
  document lints in its own thread.
* After ``shutdown``, requests are answered with InvalidRequest, as the specification says.
* Columns are converted from the model's code points to the negotiated position encoding
  (UTF-16 unless the client offers another), computed from the line's own text.
* Code actions (DESIGN §12.4): each fix attached to a diagnostic is a quick fix (its edits are
  offsets into the linted text, turned into ranges the same way); each diagnostic also offers
  "Disable FLxxx for this line", the ``# noqa`` that ``--add-noqa`` would add; and a document with
  safe fixes offers ``source.fixAll`` (or ``source.fixAll.fusion-lint``, when the client names that
  kind, as ``codeActionsOnSave`` does), the text ``fusion-lint --fix`` makes of the buffer;
  ``workspace/executeCommand`` ``fusion-lint.applyAutofix`` applies that text through
  ``workspace/applyEdit``.
* Pull diagnostics (``textDocument/diagnostic``): a client that declares them gets its diagnostics
  by asking (with ``resultId``: an unchanged text's answer is "unchanged") and none are pushed, as
  ruff's server does; other clients get ``publishDiagnostics``.
* Hover on a diagnostic shows its rule's page (what ``fusion-lint rule FLxxx`` prints).
* ``workspace/didChangeWatchedFiles`` (registered with the client when it can): a config file, a
  ``.gitignore``, the lockfile or a project file changed on disk re-lints every open buffer, no
  edit needed (a pull client is asked to refresh).

Only the ``lsp`` subcommand imports this module, so pygls never slows the CLI down.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import io
import logging
import os
import threading
import time
import tokenize
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.workspace import TextDocument

import fusion_lint.discovery.kept_walk as kept_walk
import fusion_lint.project.kept_resolution as kept_resolution
from fusion_lint import __version__
from fusion_lint.base.diagnostics import Diagnostic, apply_edits
from fusion_lint.base.memory import gc_paused
from fusion_lint.check.abandon import AfterFreed, Superseded, free
from fusion_lint.check.engine import Options, UsageError, configure_tree, lint
from fusion_lint.check.report import Report
from fusion_lint.check.session import Lent
from fusion_lint.config.settings import ConfigError
from fusion_lint.config.watched import relevant
from fusion_lint.fix.apply import apply_fixes, comments_only, fixed_by_one, noqa_edits

# Positions and edits in the client's units, named here too (the server's API).
from fusion_lint.lsp.text import SOURCE, SourceLines, code_units, diagnostic_range, replacement, to_lsp, to_text_edits  # noqa: F401
from fusion_lint.output.docs import PER_FILE_RULES
from fusion_lint.source.gate import Decoded, decode
from fusion_lint.source.runner import KeptFacts, close_kept_pools, facts_kept_in, start_fork_server

log = logging.getLogger("fusion_lint.lsp.server")

#: Quiet time after the last edit before a lint starts: typing does not queue a lint per keystroke.
DEBOUNCE_S = 0.15
#: How long a code-action request waits for the lint of an edit it arrived right after.
PENDING_LINT_WAIT_S = 10.0
#: What parsing one buffer (or a project file the cache does not hold) may take in its worker before
#: it is stopped and reported as FL000: the editor's answer comes within this plus the rules' time.
BUFFER_DEADLINE_S = 10.0
LINT_THREADS = 4  # lints at the same time (a document's newer text does not wait for its older one)
PYTHON_SUFFIXES = (".py", ".pyi")
#: The code-action kind of fix-all for this server only (VS Code's ``codeActionsOnSave`` names it).
FIX_ALL_KIND = "source.fixAll.fusion-lint"
APPLY_AUTOFIX = "fusion-lint.applyAutofix"
#: What a change on disk re-lints the open buffers for (``.toml``: a base an ``extend`` names).
WATCHED_GLOBS = ("**/*.py", "**/*.pyi", "**/*.toml", "**/.gitignore", "**/fusion-contracts.lock")


# ----- linting a buffer ------------------------------------------------------------------------------


def buffer_bytes(text: str) -> bytes:
    """The editor's text as the file would store it: a coding cookie (PEP 263) still decodes it."""
    head = "".join(text.splitlines(keepends=True)[:2]).encode("utf-8", "surrogatepass")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
        codecs.lookup(encoding)
        return text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    except (SyntaxError, LookupError, UnicodeEncodeError):
        # A cookie the text cannot honour: plain UTF-8, and the engine reports what it cannot decode.
        return text.encode("utf-8", "surrogatepass")


def buffer_options(path: str, text: str) -> Options:
    """Lint ``text`` as the file ``path`` (its config, its project; the cache serves the other files)."""
    return Options(paths=[path], stdin=(path, buffer_bytes(text)), jobs=1, use_cache=True)


PROJECT_FACTS = KeptFacts()
PROJECT_WALKS = kept_walk.KeptWalk()
PROJECT_RESOLUTION = kept_resolution.KeptResolution()


@contextlib.contextmanager
def lent_what_is_kept(superseded: Callable[[], bool] | None = None, freed: list[Any] | None = None) -> Iterator[Lent]:
    """What the server lends the runs of this block: the project's facts and folder listings kept
    between lints, parsing in worker processes under ``BUFFER_DEADLINE_S`` (a buffer that hangs the
    parser costs one FL000, never the server), ``superseded`` and ``freed`` (``session.Lent``)."""
    with facts_kept_in(PROJECT_FACTS) as facts, kept_walk.walks_kept_in(PROJECT_WALKS) as walks:
        yield Lent(facts, walks, PROJECT_RESOLUTION, BUFFER_DEADLINE_S, superseded, freed)


def lint_buffer(
    path: str, text: str, superseded: Callable[[], bool] | None = None, freed: list[Any] | None = None
) -> Report:
    """The buffer's lint, lent what is kept (``lent_what_is_kept``): the project's facts stay here
    between lints (``runner.KeptFacts``), and a lint parses the buffer (begun while the project is
    walked and stat'ed, as the CLI does) and what moved."""
    with lent_what_is_kept(superseded, freed) as lent:
        options = replace(buffer_options(path, text), lent=lent)
        configured = None  # the configs are read once per lint: for the early analysis and the lint
        with contextlib.suppress(ConfigError, UsageError):  # (``lint`` reports them)
            configured = configure_tree(options)
            assert lent.facts is not None
            lent.facts.analyse_early(path, buffer_bytes(text), configured[2].runtime_modules, BUFFER_DEADLINE_S)
        return lint(options, configured)


def lint_unless_superseded(
    path: str, text: str, superseded: threading.Event, freed: list[Any] | None = None
) -> Report | None:
    with contextlib.suppress(Superseded):
        return lint_buffer(path, text, superseded.is_set, freed)
    return None


def lint_freeing_later(garbage: list[Any], path: str, text: str, superseded: threading.Event) -> Report | None:
    """``lint_unless_superseded``, leaving in ``garbage`` what is to be freed once its diagnostics
    are published (``session.Lent.freed``): freeing a resolved project is no part of the answer. Cyclic
    collection stays paused until then too: resumed as the lint returns, its first allocation began a
    full collection scanning the project still kept (~160 ms at 3,000 modules, before the publish)."""
    paused = gc_paused()
    paused.__enter__()
    garbage.append(AfterFreed(lambda: paused.__exit__(None, None, None)))
    return lint_unless_superseded(path, text, superseded, garbage)


@contextlib.contextmanager
def fixing_a_buffer(path: str, text: str) -> Iterator[Options]:
    """The options of fixing a buffer, and what it runs under: lent what is kept (parsing isolated
    under ``BUFFER_DEADLINE_S``, the project's kept facts and walks), the CLI's messages (a fix not
    applied) sent to the log, not stderr."""
    messages = io.StringIO()
    with contextlib.redirect_stderr(messages), lent_what_is_kept() as lent:
        yield replace(buffer_options(path, text), lent=lent)
    for message in messages.getvalue().splitlines():
        if message.startswith(SOURCE + ":"):  # a fix that was not applied (the summary line is not)
            log.warning("%s: %s", path, message)


def quick_fix_buffer(path: str, text: str, diagnostic: Diagnostic) -> str | None:
    """What the buffer becomes with ``diagnostic``'s fix alone (None: it cannot be made, or it would
    introduce a diagnostic): ``--fix``'s codemod and checks, on the buffer."""
    with fixing_a_buffer(path, text) as options:
        report = lint(options)
        key = diagnostic.sort_key()
        found = next((d for d in report.diagnostics if d.sort_key() == key and d.fix is not None), None)
        return fixed_by_one(report, options, found) if found is not None else None


def fix_buffer(path: str, text: str) -> str:
    """The text ``fusion-lint --fix --stdin-filename PATH -`` prints for this buffer: every safe fix,
    applied in rounds with the same checks (a fix that breaks the parse is dropped)."""
    with fixing_a_buffer(path, text) as options:
        _, fixed = apply_fixes(lint(options), options, write=True, stdin=True)
    decoded = decode(fixed if isinstance(fixed, bytes) else fixed.encode("utf-8"))
    if not isinstance(decoded, Decoded):
        return text
    # The decoder drops a byte-order mark the editor keeps as the text's first character.
    return ("\ufeff" if text.startswith("\ufeff") and not decoded.text.startswith("\ufeff") else "") + decoded.text


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether the client's ``only`` filter admits ``kind`` (hierarchical: ``source`` admits ``source.fixAll``)."""
    return only is None or any(kind == allowed or kind.startswith(allowed + ".") for allowed in only)


@dataclass
class Linted:
    """What was published for one text of a document, kept to answer code-action requests."""

    text: str
    version: int | None
    lines: SourceLines
    path: str
    items: list[tuple[lsp.Diagnostic, Diagnostic]] = field(default_factory=list)
    fixed_text: str | None = None  # what source.fixAll makes of ``text``, once asked
    result_id: str = ""  # pull diagnostics: names this answer (``previousResultId`` asks if it still holds)

    @property
    def has_safe_fix(self) -> bool:
        return any(
            found.fix is not None and found.fix.edits and found.fix.applicability == "safe" for _, found in self.items
        )


def overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(position: lsp.Position) -> tuple[int, int]:
        return (position.line, position.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def hover_markdown(found: list[Diagnostic]) -> str:
    """The rule pages of the diagnostics under the cursor, once per rule."""
    return hover_markdown_for_codes(list(dict.fromkeys(d.code for d in found)))


def hover_markdown_for_codes(codes: list[str]) -> str:
    from fusion_lint.output.docs import find_rule, heading, rule_markdown

    pages = []
    for code in codes:
        rule = find_rule(code)
        pages.append(
            "\n".join([f"### {heading(rule)}", "", *rule_markdown(rule), "", f"[Documentation]({rule.url()})"])
        )
    return "\n\n---\n\n".join(pages)


# ----- the server ------------------------------------------------------------------------------------


class _Protocol(LanguageServerProtocol):
    """pygls drops every message after ``shutdown``; the specification wants a request answered with
    InvalidRequest (notifications other than ``exit`` are still dropped)."""

    def handle_message(self, message) -> None:  # type: ignore[no-untyped-def]  # pygls's message objects are untyped
        method = getattr(message, "method", "")
        if self._shutdown and method != lsp.EXIT and isinstance(message, RPCRequest):
            error = JsonRpcInvalidRequest(f"the server is shutting down: '{method}' arrived after 'shutdown'")
            self._send_response(message.id, None, error.to_response_error())
            return
        super().handle_message(message)


class FusionLintServer(LanguageServer):
    def __init__(self, debounce: float = DEBOUNCE_S) -> None:
        super().__init__(
            "fusion-lint",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=_Protocol,
        )
        self.debounce = debounce
        # Lints run off the event loop, each buffer parsed in its thread's worker process.
        self.linter = ThreadPoolExecutor(max_workers=LINT_THREADS, thread_name_prefix="fusion-lint")
        self.in_flight: dict[str, tuple[Future[Any], threading.Event]] = {}  # uri -> its lint, "superseded"
        self.scheduled: dict[str, asyncio.Task[Any]] = {}
        self.last_edit: dict[str, float] = {}
        self.linted: dict[str, Linted] = {}
        self.shown_errors: set[str] = set()
        self.shutdown_requested = False
        self.answers = 0  # pull diagnostics: each publish's result id

    # -- which documents -------------------------------------------------------------------------

    def open_document(self, uri: str) -> TextDocument | None:
        """The open document, or None (pygls would otherwise make one up from the disk). pygls
        keys documents by the unquoted URI; clients percent-encode (a space, a drive colon)."""
        found: TextDocument | None = self.workspace.text_documents.get(unquote(uri))
        return found

    @staticmethod
    def is_python(document: TextDocument) -> bool:
        return document.language_id == "python" or document.path.endswith(PYTHON_SUFFIXES)

    # -- scheduling ------------------------------------------------------------------------------

    def schedule(self, uri: str, delay: float) -> None:
        """(Re)start the lint of ``uri`` after ``delay``; a newer request replaces a pending one."""
        previous = self.scheduled.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.scheduled[uri] = asyncio.get_running_loop().create_task(self._lint_later(uri, delay))

    def edited(self, uri: str) -> None:
        now = time.monotonic()
        quiet = now - self.last_edit.get(uri, 0.0) > self.debounce and uri not in self.scheduled
        self.last_edit[uri] = now
        running = self.in_flight.get(uri)
        if running is not None and not running[0].done():
            running[1].set()  # its text is gone: it stops at its next stage, not while the debounce runs
        # An isolated edit (a quick fix, a paste) is linted at once; a burst of typing waits for a pause.
        self.schedule(uri, 0.0 if quiet else self.debounce)

    async def _lint_later(self, uri: str, delay: float) -> None:
        garbage: list[Any] = []  # what the lint leaves, freed after the publish (not before it, not here)
        try:
            if delay:
                await asyncio.sleep(delay)
            document = self.open_document(uri)
            if document is None or not self.is_python(document) or not document.uri.startswith("file:"):
                return
            text, version, path = document.source, document.version, os.path.abspath(document.path)
            running = self.in_flight.get(uri)
            if running is not None and not running[0].done():
                running[1].set()  # not waited for: it stops at its next stage (the debounce spares most)
            superseded = threading.Event()
            job = self.linter.submit(lint_freeing_later, garbage, path, text, superseded)
            self.in_flight[uri] = (job, superseded)
            try:
                report = await asyncio.wrap_future(job)
            except (ConfigError, UsageError) as exc:  # a broken config: say so once, show nothing stale
                self.show_once(str(exc))
                report = None
            current = self.open_document(uri)
            if current is None or current.source != text or superseded.is_set():
                return  # superseded by a newer text (its own lint is running) or closed
            self.publish(uri, text, version, report, path)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug must not kill the server: log it and keep serving
            log.exception("linting %s failed", uri)
        finally:
            if self.scheduled.get(uri) is asyncio.current_task():
                del self.scheduled[uri]
            if garbage:
                try:
                    self.linter.submit(free, garbage)
                except RuntimeError:  # shut down
                    free(garbage)

    @property
    def pulls(self) -> bool:
        """Whether the client asks for diagnostics (``textDocument/diagnostic``) instead of being sent them."""
        capabilities = getattr(self.protocol, "client_capabilities", None)  # None before ``initialize``
        document = capabilities.text_document if capabilities is not None else None
        return bool(document and document.diagnostic)

    def publish(self, uri: str, text: str, version: int | None, report: Report | None, path: str) -> None:
        lines = SourceLines(text, self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)
        linted = Linted(text, version, lines, path)
        for diagnostic in report.diagnostics if report is not None else ():
            if diagnostic.path == path:
                linted.items.append((to_lsp(diagnostic, lines), diagnostic))
        self.answers += 1
        linted.result_id = str(self.answers)
        self.linted[uri] = linted
        if self.pulls:
            return  # the client asks (``pull``)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[item for item, _ in linted.items])
        )

    def clear(self, uri: str) -> None:
        task = self.scheduled.pop(uri, None)
        if task is not None:
            task.cancel()
        if (running := self.in_flight.pop(uri, None)) is not None:
            running[1].set()  # its result would be dropped: it need not finish
        self.linted.pop(uri, None)
        self.last_edit.pop(uri, None)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def show_once(self, message: str) -> None:
        if message not in self.shown_errors:
            self.shown_errors.add(message)
            self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"fusion-lint: {message}")
            )

    # -- code actions ----------------------------------------------------------------------------

    async def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        """Quick fixes and "Disable ... for this line" for the diagnostics in the range, then
        ``source.fixAll``; nothing for a text that is not the one the diagnostics were made for."""
        only = params.context.only
        uri = params.text_document.uri
        linted = await self.current_after_pending_lint(uri)
        if linted is None:
            return []  # the offsets belong to an older text; the next publish brings new ones
        actions: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix, only):
            shown = [(item, found) for item, found in linted.items if overlaps(item.range, params.range)]
            for item, found in shown:
                action = await self.quick_fix(uri, linted, item, found) if found.fix is not None else None
                if action is not None:
                    actions.append(action)
            actions += self.disable_actions(uri, linted, shown)
        # A client asking on its own (VS Code's light bulb, at every cursor move) gets no fixAll
        # unless it names the kind: it would cost a lint per round.
        automatic = params.context.trigger_kind == lsp.CodeActionTriggerKind.Automatic and only is None
        # Asked for by name (``source.fixAll.fusion-lint``), it is of that kind; else ``source.fixAll``.
        named = only is not None and FIX_ALL_KIND in only
        kind = FIX_ALL_KIND if named else lsp.CodeActionKind.SourceFixAll
        if (named or wanted(lsp.CodeActionKind.SourceFixAll, only)) and not automatic and linted.has_safe_fix:
            edit = await self.fix_all_edit(uri, linted)
            if edit is None and self.current(uri) is not linted:
                return []  # the text moved on while the fixes were computed
            if edit is not None:
                actions.append(lsp.CodeAction(title=f"{SOURCE}: fix all safely fixable problems", kind=kind, edit=edit))
        return actions

    async def fix_all_edit(self, uri: str, linted: Linted) -> lsp.WorkspaceEdit | None:
        """The edit that makes the linted text what ``--fix`` makes of it; None when nothing changes
        or the text moved on meanwhile."""
        if linted.fixed_text is None:
            fixed = await asyncio.get_running_loop().run_in_executor(self.linter, fix_buffer, linted.path, linted.text)
            if self.current(uri) is not linted:
                return None
            linted.fixed_text = fixed
        edit = replacement(linted.lines, linted.fixed_text)
        if edit is None:
            return None
        return self.workspace_edit(uri, linted.version, to_text_edits([edit], linted.lines))

    async def apply_autofix(self, arguments: list[Any] | None) -> None:
        """``fusion-lint.applyAutofix`` with ``[{"uri": ..., "version": ...}]`` (ruff's shape) or
        ``[uri]``: every safe fix of the document, sent back as ``workspace/applyEdit``."""
        for argument in arguments or []:
            uri = argument if isinstance(argument, str) else getattr(argument, "uri", None)
            if uri is None and isinstance(argument, dict):
                uri = argument.get("uri")
            if not isinstance(uri, str):
                continue
            linted = await self.current_after_pending_lint(uri)
            edit = await self.fix_all_edit(uri, linted) if linted is not None and linted.has_safe_fix else None
            if edit is not None:  # the client's answer is not waited for (a client may never give one)
                self.workspace_apply_edit(
                    lsp.ApplyWorkspaceEditParams(edit=edit, label=f"{SOURCE}: fix all safely fixable problems")
                )

    # -- pull diagnostics, hover, files changed on disk -------------------------------------------

    async def pull(self, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
        uri = params.text_document.uri
        document = self.open_document(uri)
        if document is not None and self.current(uri) is None and uri not in self.scheduled:
            self.schedule(uri, 0.0)  # asked before any lint of this text began
        linted = await self.current_after_pending_lint(uri)
        if linted is None:
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        if params.previous_result_id == linted.result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=linted.result_id)
        items = [item for item, _ in linted.items]
        return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=linted.result_id)

    async def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        linted = await self.current_after_pending_lint(params.text_document.uri)
        if linted is None:
            return None
        at = lsp.Range(start=params.position, end=params.position)
        under = [(item, found) for item, found in linted.items if overlaps(item.range, at)]
        if not under:
            return self.hover_on_directive(params)
        markdown = hover_markdown([found for _, found in under])
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown), range=under[0][0].range
        )

    def hover_on_directive(self, params: lsp.HoverParams) -> lsp.Hover | None:
        """Over a code in a suppression comment (``# noqa: FL300``): that rule's page, as ``ruff
        server`` shows for its own codes. Another linter's code, or an unknown one, shows nothing."""
        from fusion_lint.check.suppression import directive_token_at
        from fusion_lint.output.docs import UnknownRule, find_rule

        document = self.open_document(params.text_document.uri)
        if document is None:
            return None
        encoding = self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        token = directive_token_at(*SourceLines(document.source, encoding).column(params.position))
        if token is None:
            return None
        try:
            rule = find_rule(token)
        except UnknownRule:
            return None
        markdown = hover_markdown_for_codes([rule.code])
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown))

    def files_changed(self, uris: list[str]) -> None:
        """Files changed on disk (a config, a ``.gitignore``, the lockfile, a project module): every
        open buffer is linted again, as the CLI would now see it."""
        paths = [unquote(uri.removeprefix("file://")) for uri in uris]
        if not any(relevant(path) or path.endswith(".toml") for path in paths):
            return
        self.shown_errors.clear()  # a config broken again is said again
        tasks = []
        for document in list(self.workspace.text_documents.values()):
            if self.is_python(document):
                self.schedule(document.uri, self.debounce)
                tasks.append(self.scheduled[document.uri])
        if tasks and self.pulls and self.refreshes:
            asyncio.get_running_loop().create_task(self._refresh_after(tasks))

    @property
    def refreshes(self) -> bool:
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)

    async def _refresh_after(self, tasks: list[asyncio.Task[Any]]) -> None:
        await asyncio.wait(tasks)
        with contextlib.suppress(Exception):
            await self.workspace_diagnostic_refresh_async(None)

    def register_watchers(self) -> None:
        """Ask the client to report changes of what the lint reads, where it can register them."""
        workspace = self.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        if not (watched and watched.dynamic_registration):
            return
        options = lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[lsp.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED_GLOBS]
        )
        registration = lsp.Registration(
            id="fusion-lint-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
        )
        self.client_register_capability(lsp.RegistrationParams(registrations=[registration]))

    def current(self, uri: str) -> Linted | None:
        """What was published for the document's present text, or None."""
        linted, document = self.linted.get(uri), self.open_document(uri)
        if linted is None or document is None or document.source != linted.text:
            return None
        return linted

    async def current_after_pending_lint(self, uri: str) -> Linted | None:
        """``current``, once the lint of the present text has run: a client may ask for actions
        right after an edit (an applied fix, then the next one), before its diagnostics arrive."""
        deadline = time.monotonic() + PENDING_LINT_WAIT_S
        while self.current(uri) is None and uri in self.scheduled and time.monotonic() < deadline:
            await asyncio.wait([self.scheduled[uri]], timeout=deadline - time.monotonic())
        return self.current(uri)

    async def quick_fix(
        self, uri: str, linted: Linted, item: lsp.Diagnostic, found: Diagnostic
    ) -> lsp.CodeAction | None:
        """The fix of one diagnostic as ``--fix`` would make it (a libcst codemod, re-linted): not
        offered when it cannot be made or would introduce a diagnostic the buffer did not have."""
        fix = found.fix
        assert fix is not None
        loop = asyncio.get_running_loop()
        fixed = await loop.run_in_executor(self.linter, quick_fix_buffer, linted.path, linted.text, found)
        edit = replacement(linted.lines, fixed) if fixed is not None else None
        if edit is None or self.current(uri) is not linted:
            return None
        unsafe = "" if fix.applicability == "safe" else " (unsafe)"
        return lsp.CodeAction(
            title=f"{fix.message}{unsafe} ({item.code})",
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[item],
            is_preferred=fix.applicability == "safe",
            edit=self.workspace_edit(uri, linted.version, to_text_edits([edit], linted.lines)),
        )

    def disable_actions(
        self, uri: str, linted: Linted, shown: list[tuple[lsp.Diagnostic, Diagnostic]]
    ) -> list[lsp.CodeAction]:
        """One "Disable FLxxx for this line" per code and line: the ``# noqa: FLxxx`` that
        ``--add-noqa`` would add (merged into a ``# noqa:`` list already there, other linters' codes
        kept; on the statement's first line when the diagnostic's line ends inside a string)."""
        actions: list[lsp.CodeAction] = []
        offered: set[tuple[Any, ...]] = set()
        for item, found in shown:
            if found.code in PER_FILE_RULES:
                continue  # about the whole file: no line comment reaches it
            edits, _ = noqa_edits(linted.text, [found])
            key = (found.code, *((e.start, e.end, e.content) for e in edits))
            if not edits or key in offered or not comments_only(linted.text, apply_edits(linted.text, edits)):
                continue
            offered.add(key)
            actions.append(
                lsp.CodeAction(
                    title=f"Disable {found.code} for this line",
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[item],
                    edit=self.workspace_edit(uri, linted.version, to_text_edits(edits, linted.lines)),
                )
            )
        return actions

    def workspace_edit(self, uri: str, version: int | None, edits: list[lsp.TextEdit]) -> lsp.WorkspaceEdit:
        capabilities = self.client_capabilities.workspace
        versioned = bool(capabilities and capabilities.workspace_edit and capabilities.workspace_edit.document_changes)
        if versioned:  # the client refuses the edit if the document moved on meanwhile
            identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=edits)])
        return lsp.WorkspaceEdit(changes={uri: edits})

    # -- lifecycle -------------------------------------------------------------------------------

    def shutdown(self) -> None:
        self.linter.shutdown(wait=False, cancel_futures=True)
        super().shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated


def create_server(debounce: float = DEBOUNCE_S) -> FusionLintServer:
    server = FusionLintServer(debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, 0.0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        server.edited(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        saved = unquote(params.text_document.uri)
        # What other open files see of this one (a shared contract, a service) came from the disk:
        # re-lint them too, after the saved one.
        for document in list(server.workspace.text_documents.values()):
            server.schedule(document.uri, 0.0 if unquote(document.uri) == saved else server.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        server.clear(params.text_document.uri)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
            resolve_provider=False,
        ),
    )
    async def code_action(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return await server.code_actions(params)

    @server.feature(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.DiagnosticOptions(identifier="fusion-lint", inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def diagnostic(params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
        return await server.pull(params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        return await server.hover(params)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: lsp.DidChangeWatchedFilesParams) -> None:
        server.files_changed([change.uri for change in params.changes])

    @server.feature(lsp.INITIALIZED)
    def initialized(_params: lsp.InitializedParams) -> None:
        server.register_watchers()

    @server.command(APPLY_AUTOFIX)
    # ``object``, not ``Any``: pygls tests the first parameter's annotation with issubclass(),
    # which ``typing.Any`` only survives from Python 3.11 on.
    async def apply_autofix(*arguments: object) -> None:
        await server.apply_autofix(
            list(arguments[0]) if len(arguments) == 1 and isinstance(arguments[0], list) else list(arguments)
        )

    @server.feature(lsp.SHUTDOWN)
    def shutdown(_params: None) -> None:
        server.shutdown_requested = True
        server.linter.shutdown(wait=False, cancel_futures=True)
        close_kept_pools()

    return server


def serve() -> int:
    """Serve on stdio until the client says exit; the LSP exit code (0 after a shutdown request, else 1)."""
    logging.basicConfig(level=logging.WARNING, format="fusion-lint lsp: %(levelname)s %(name)s: %(message)s")
    server = create_server()
    threading.Thread(target=start_fork_server, name="fusion-lint-fork-server", daemon=True).start()
    server.start_io()
    return 0 if server.shutdown_requested else 1
