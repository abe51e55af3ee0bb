"""Applying fixes and suppressions to files (DESIGN §6 ``--fix/--diff/--add-noqa``, §11).

``--fix`` never loses data:

* fixes are applied in rounds: per file, the fixes whose edits do not overlap go in together
  (identical edits, such as two fixes adding the same import, count once), then the project is
  linted again, with the new texts in memory, and the fixes of that report go in, until a round
  changes nothing (at most ``MAX_ROUNDS``);
* a text that CPython's gate rejects is never kept: the fixes that broke it are dropped;
* a file keeps its encoding, BOM and line endings, and its owner, group and mode: it is written
  atomically (a temporary file in its directory, then ``os.replace``) where the new file can take
  the original's owner and group, else rewritten in place (``files.write_back``); a file the user
  may not write is left alone and reported as not fixed;
* a file whose bytes, size or mtime changed since it was read is left alone, with a message;
* fixes converge, so a second ``--fix`` changes nothing.

``--diff`` prints what ``--fix`` would change as a unified diff and writes nothing.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import io
import os
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import click

from fusion_lint.base.diagnostics import Diagnostic, Edit, Fix, apply_edits
from fusion_lint.base.files import Snapshot, read_snapshot, write_back
from fusion_lint.check.engine import Options, lint
from fusion_lint.check.report import Report
from fusion_lint.source.gate import Unreadable, decode, gate

#: Rounds of fix-then-relint before giving up on convergence (each round is one lint of the project).
MAX_ROUNDS = 10
#: Findings that no suppression comment can silence: there are no facts for the file.
UNSUPPRESSIBLE = frozenset({"FL000", "FL001"})


@dataclass
class Document:
    """One file being fixed: its original and current text, and how to write it back."""

    path: str
    original: str
    encoding: str
    bom: bool
    snapshot: Snapshot | None  # None: standard input
    text: str = ""
    fixed: int = 0  # fixes applied
    fixed_rules: dict[tuple[str, str], int] = field(default_factory=dict)  # (code, name) -> fixes applied
    noqa: int = 0  # suppression comments added
    rejected: set[tuple[Any, ...]] = field(
        default_factory=set
    )  # fixes that broke the text or made it worse: never retried
    one_at_a_time: bool = False  # a round of several fixes made it worse: each is tried alone

    def __post_init__(self) -> None:
        self.text = self.text or self.original

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def encode(self, text: str) -> bytes:
        return (b"\xef\xbb\xbf" if self.bom else b"") + text.encode(self.encoding)


Outcome = str | bytes


def apply_fixes(
    report: Report,
    options: Options,
    *,
    write: bool,
    unsafe: bool = False,
    add_noqa: bool = False,
    stdin: bool = False,
    fix: bool = True,
) -> tuple[Report, Outcome]:
    """Fix (``fix``) and/or suppress (``add_noqa``) what ``report`` found.

    Returns the report of what remains, and the outcome to print: with ``stdin`` and ``write``,
    the fixed buffer (bytes, in the buffer's encoding); otherwise (``--diff``) the unified diff
    of every change (empty when nothing would change). Files are written only when ``write``
    and not ``stdin``.
    """
    session = _Session(report, options, unsafe)
    if fix:
        session.fix_rounds()
    if add_noqa:
        session.suppress_remaining()
    if stdin:
        document = next(iter(session.documents.values()), None) if session.documents else None
        if write:
            if document is None or options.stdin is None:
                return session.report, options.stdin[1] if options.stdin else b""
            session.summarize(written=[document] if document.changed else [])
            return session.report, document.encode(document.text)
        return session.report, session.diff()
    if not write:
        return session.report, session.diff()
    written = session.write_all()
    session.summarize(written)
    return session.report, ""


def fixed_by_one(report: Report, options: Options, diagnostic: Diagnostic) -> str | None:
    """The text of ``diagnostic``'s file once its fix alone is applied — the editor's quick fix —
    or None when that fix cannot be made or would make things worse: the same codemod, the same
    parse gate and the same re-lint as ``--fix``."""
    if diagnostic.fix is None or not diagnostic.fix.edits:
        return None
    session = _Session(report, options, unsafe=True)
    document = session.document(diagnostic.path)
    if document is None or not _well_formed(diagnostic.fix, len(document.text)):
        return None
    text = document.text
    if not session._fix_round(document, [diagnostic]):
        return None
    session.relint()
    if session._undo_what_made_things_worse(report, {document.path: (text, [diagnostic])}):
        return None
    return document.text


class _Session:
    def __init__(self, report: Report, options: Options, unsafe: bool):
        self.report = report
        self.options = options
        self.unsafe = unsafe
        self.documents: dict[str, Document] = {}
        self.unusable: set[str] = set()  # files that cannot be fixed (said on stderr once)

    # ----- reading ------------------------------------------------------------------------------

    def document(self, path: str) -> Document | None:
        if path in self.documents:
            return self.documents[path]
        if path in self.unusable:
            return None
        problem, document = self._read(path)
        if document is not None:
            problem = _inconsistency(document.original, self.report, path)
        if problem is not None or document is None:
            self.unusable.add(path)
            warn(f"{_display(path)}: {problem}; left alone")
            return None
        self.documents[path] = document
        return document

    def _read(self, path: str) -> tuple[str | None, Document | None]:
        stdin = self.options.stdin
        snapshot = None
        if stdin is not None and os.path.abspath(stdin[0]) == path:
            data = stdin[1]
        else:
            try:
                data, snapshot = read_snapshot(path)
            except OSError as exc:
                return f"cannot read it: {exc.strerror or exc}", None
        decoded = decode(data)
        if isinstance(decoded, Unreadable):
            return decoded.message, None
        return None, Document(path, decoded.text, decoded.encoding, decoded.bom, snapshot)

    # ----- fix rounds ----------------------------------------------------------------------------

    def applicable(self, diagnostic: Diagnostic) -> bool:
        fix = diagnostic.fix
        return fix is not None and bool(fix.edits) and (fix.applicability == "safe" or self.unsafe)

    def documents_for(self, keep: Callable[[Diagnostic], bool]) -> Iterator[tuple[Document, list[Diagnostic]]]:
        """The report's diagnostics that ``keep`` selects, grouped by file in path order, each with
        its file's document (a file that cannot be read is skipped; ``document`` said why)."""
        by_path: dict[str, list[Diagnostic]] = {}
        for diagnostic in self.report.diagnostics:
            if keep(diagnostic):
                by_path.setdefault(diagnostic.path, []).append(diagnostic)
        for path, diagnostics in sorted(by_path.items()):
            document = self.document(path)
            if document is not None:
                yield document, diagnostics

    def fix_rounds(self) -> None:
        for _ in range(MAX_ROUNDS):
            before = self.report
            applied: dict[str, tuple[str, list[Diagnostic]]] = {}  # path -> (text before the round, fixes applied)
            for document, diagnostics in self.documents_for(self.applicable):
                text = document.text
                chosen = self._fix_round(document, diagnostics)
                if chosen:
                    applied[document.path] = (text, chosen)
            if not applied:
                return
            self.relint()
            if self._undo_what_made_things_worse(before, applied):
                self.relint()

    def _fix_round(self, document: Document, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """Apply the fixes of one round to ``document``; the ones applied."""
        # One order for every run: by rule, then position. FL201 (to ctx.fail) goes before FL301
        # (to the factory) when both rewrite the same raise, so no factory import is left unused.
        ordered = sorted(diagnostics, key=lambda d: (d.code, min(e.start for e in d.fix.edits), d.span.line))  # type: ignore[union-attr]  # every diagnostic of a fix round has a fix
        text = document.text
        chosen: list[Diagnostic] = []
        taken: list[Edit] = []
        for diagnostic in ordered:
            fix = diagnostic.fix
            assert fix is not None
            if _fix_key(fix) in document.rejected or not _well_formed(fix, len(text)):
                continue
            if any(_conflict(edit, other) for edit in fix.edits for other in taken):
                continue  # the next round, on the new text, will have it again
            chosen.append(diagnostic)
            taken.extend(fix.edits)
            if document.one_at_a_time:
                break
        if not chosen:
            return []
        new = self._rewritten(document, chosen)
        if new is None:
            chosen = self._without_breakers(document, chosen)
            new = self._rewritten(document, chosen) if chosen else None
            if new is None:
                return []
        document.text = new
        document.fixed += len(chosen)
        for diagnostic in chosen:
            key = (diagnostic.code, diagnostic.name)
            document.fixed_rules[key] = document.fixed_rules.get(key, 0) + 1
        return chosen

    def _rewritten(self, document: Document, chosen: list[Diagnostic], *, say: bool = False) -> str | None:
        """The document's text with the fixes ``chosen`` applied as libcst codemods, if that is
        code CPython's gate admits; else None (said on stderr with ``say``)."""
        from fusion_lint.fix.codemod import NotApplicable, rewrite  # libcst: only when a fix is applied

        problem = "would leave code that does not parse; not applied (please report this)"
        try:
            new = rewrite(document.text, [edit for d in chosen for edit in d.fix.edits])  # type: ignore[union-attr]  # every chosen diagnostic has a fix
        except NotApplicable as exc:
            new, problem = None, f"is not applicable: {exc}"
        except Exception as exc:  # noqa: BLE001  # a fix libcst cannot make costs that fix, never the run
            new, problem = None, f"is not applicable: libcst failed ({type(exc).__name__}: {exc})"
        if new is not None and _parses(new, document.path):
            return new
        for diagnostic in chosen if say else ():
            span = diagnostic.span
            warn(f"{_display(document.path)}:{span.line}:{span.col + 1}: the fix for {diagnostic.code} {problem}")
        return None

    def _without_breakers(self, document: Document, chosen: list[Diagnostic]) -> list[Diagnostic]:
        """The fixes that can be made on their own; the others are reported and never tried again."""
        kept = []
        for diagnostic in chosen:
            if self._rewritten(document, [diagnostic], say=True) is not None:
                kept.append(diagnostic)
            else:
                document.rejected.add(_fix_key(diagnostic.fix))  # type: ignore[arg-type]  # every chosen diagnostic has a fix
        return kept

    def _undo_what_made_things_worse(self, before: Report, applied: dict[str, tuple[str, list[Diagnostic]]]) -> bool:
        """A fix never makes things worse: where the re-lint finds a diagnostic a changed file did
        not have (one its fixes do not leave on purpose), that file's round is undone. A round of one
        fix is then skipped for good, with a message; a round of several is tried again one fix at a
        time. Whether anything was undone."""
        undone = False
        for path, (text, chosen) in applied.items():
            introduced = _introduced(before, self.report, path, {code for d in chosen for code in d.fix.leaves})  # type: ignore[union-attr]  # every chosen diagnostic has a fix
            if not introduced:
                continue
            document = self.documents[path]
            document.text = text
            document.fixed -= len(chosen)
            for diagnostic in chosen:
                key = (diagnostic.code, diagnostic.name)
                document.fixed_rules[key] -= 1
                if not document.fixed_rules[key]:
                    del document.fixed_rules[key]
            if len(chosen) == 1:
                diagnostic = chosen[0]
                document.rejected.add(_fix_key(diagnostic.fix))  # type: ignore[arg-type]  # every chosen diagnostic has a fix
                warn(
                    f"{_display(path)}:{diagnostic.span.line}:{diagnostic.span.col + 1}: {diagnostic.code} fix skipped: "
                    f"would introduce {', '.join(introduced)}"
                )
            else:
                document.one_at_a_time = True
            undone = True
        return undone

    def relint(self) -> None:
        """Lint again with the texts changed so far in place of the files."""
        overrides: dict[str, bytes] = {}
        stdin = self.options.stdin
        for document in self.documents.values():
            if document.changed:
                try:
                    overrides[document.path] = document.encode(document.text)
                except UnicodeEncodeError as exc:  # a fix added a character the encoding lacks
                    warn(
                        f"{_display(document.path)}: cannot encode the fixed text as {document.encoding} ({exc.reason}); left alone"
                    )
                    document.text = document.original
        if stdin is not None:
            stdin_path = os.path.abspath(stdin[0])
            stdin = (stdin[0], overrides.pop(stdin_path, stdin[1]))
        options = dataclasses.replace(self.options, overrides={**self.options.overrides, **overrides}, stdin=stdin)
        self.report = lint(options)

    # ----- suppressions ---------------------------------------------------------------------------

    def suppress_remaining(self) -> None:
        changed = False
        for document, diagnostics in self.documents_for(lambda d: d.code not in UNSUPPRESSIBLE):
            path = document.path
            edits, unplaced = noqa_edits(document.text, diagnostics)
            for diagnostic in unplaced:
                warn(
                    f"{_display(path)}:{diagnostic.span.line}:{diagnostic.span.col + 1}: no line of this statement "
                    f"can carry a '# noqa: {diagnostic.code}' (a multi-line string or a backslash continuation)"
                )
            if not edits:
                continue
            new = apply_edits(document.text, edits)
            if not _parses(new, path) or not comments_only(document.text, new):
                warn(f"{_display(path)}: adding '# noqa' comments would break the file; left alone")
                continue
            document.text = new
            document.noqa += len(edits)
            changed = True
        if changed:
            self.relint()

    # ----- output ----------------------------------------------------------------------------------

    def diff(self) -> str:
        return "".join(
            unified_diff(document.original, document.text, _display(path))
            for path, document in sorted(self.documents.items())
            if document.changed
        )

    def write_all(self) -> list[Document]:
        written: list[Document] = []
        left_alone = False
        for path, document in sorted(self.documents.items()):
            if not document.changed or document.snapshot is None:
                continue
            problem = write_back(path, document.encode(document.text), document.snapshot)
            if problem is None:
                written.append(document)
            else:
                left_alone = True
                warn(f"{_display(path)}: {problem}; left alone")
        if left_alone:  # the report assumed every fixed text was written: lint what is on disk
            self.report = lint(self.options)
        return written

    def summarize(self, written: list[Document]) -> None:
        fixed = sum(d.fixed for d in written)
        noqa = sum(d.noqa for d in written)
        self.report.fixed = fixed  # what --exit-non-zero-on-fix asks about
        self.report.fixed_rules = {d.path: dict(d.fixed_rules) for d in written if d.fixed}  # --show-fixes
        if fixed:
            files = len({d.path for d in written if d.fixed})
            warn(
                f"Fixed {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}.",
                prefix=False,
            )
        if noqa:
            warn(f"Added {noqa} noqa comment{'s' if noqa != 1 else ''}.", prefix=False)


# ----- edits ----------------------------------------------------------------------------------------


def _introduced(before: Report, after: Report, path: str, allowed: set[str]) -> list[str]:
    """The codes ``after`` reports in ``path`` more often than ``before`` did, but for ``allowed``."""
    counts: Counter[str] = Counter(d.code for d in before.diagnostics if d.path == path)
    counts.subtract(d.code for d in after.diagnostics if d.path == path)
    return sorted(code for code, count in counts.items() if count < 0 and code not in allowed)


def _fix_key(fix: Fix) -> tuple[Any, ...]:
    return tuple((e.start, e.end, e.content) for e in fix.edits)


def _well_formed(fix: Fix, length: int) -> bool:
    edits = sorted(fix.edits, key=lambda e: (e.start, e.end))
    if any(not 0 <= e.start <= e.end <= length for e in edits):
        return False
    return all(a.end <= b.start and (a.start, a.end) != (b.start, b.end) for a, b in zip(edits, edits[1:]))


def _conflict(edit: Edit, other: Edit) -> bool:
    """Two edits conflict when their ranges overlap or touch, unless they are the same edit.
    Touching counts: two insertions at one point have no defined order."""
    if (edit.start, edit.end, edit.content) == (other.start, other.end, other.content):
        return False
    return edit.start <= other.end and other.start <= edit.end


def comments_only(old: str, new: str) -> bool:
    """Whether ``new`` differs from ``old`` in comments and layout alone (the same syntax tree): what
    adding ``# noqa`` may change, and nothing else (a comment must never swallow code)."""
    try:
        return ast.dump(ast.parse(old)) == ast.dump(ast.parse(new))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _parses(text: str, path: str) -> bool:
    """The gate a fixed text passes before it may be written: CPython's, as every lint's."""
    return gate(text, path) is None


def _inconsistency(text: str, report: Report, path: str) -> str | None:
    """Why the text just read is not the one the report's spans point into, if it is not:
    the file changed between the lint and this read."""
    linted = report.texts.get(path)
    if linted is not None and linted != text:
        return "changed on disk since it was linted"
    starts = [0]
    for match in re.finditer(r"\n", text):
        starts.append(match.end())
    for diagnostic in report.diagnostics:
        span = diagnostic.span
        if diagnostic.path != path or diagnostic.code in UNSUPPRESSIBLE or span.line < 1:
            continue  # per-file problems carry a line but no offset
        if span.line > len(starts) or starts[span.line - 1] + span.col != span.start:
            return "changed on disk since it was linted"
    return None


# ----- files ------------------------------------------------------------------------------------------


# ----- --diff ---------------------------------------------------------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _lines(text: str) -> list[str]:
    """Lines with their endings, split on line endings only (not on form feeds, as splitlines would)."""
    return _LINE.findall(text)


def unified_diff(old: str, new: str, display: str) -> str:
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), f"a/{display}", f"b/{display}"):
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:  # the file's last line has no line ending: say so, as diff(1) does
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


# ----- --add-noqa -------------------------------------------------------------------------------------

_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_NOQA_CODES = re.compile(r"#\s*noqa:\s*[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*", re.IGNORECASE)


def noqa_edits(text: str, diagnostics: list[Diagnostic]) -> tuple[list[Edit], list[Diagnostic]]:
    """Edits adding ``  # noqa: CODE[, CODE]`` for each diagnostic, and the diagnostics no line
    could take. A suppression counts on the diagnostic's line or its statement's first line
    (DESIGN §5), and after the closing quotes of a multi-line string for each of its lines (ruff's
    convention); a line ending inside a multi-line string or in a backslash continuation cannot
    carry a comment, so another line is used, or none."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline=None).readline))
    except (tokenize.TokenError, SyntaxError):
        return [], list(diagnostics)
    lines = _PHYSICAL_LINE.findall(text)  # numbered as the spans number them (a lone "\r" ends one)
    blocked, comments, closing = _comment_map(tokens, lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    wanted: dict[int, set[str]] = {}
    unplaced = []
    for diagnostic in diagnostics:
        candidates = (diagnostic.span.line, diagnostic.span.stmt_line, closing.get(diagnostic.span.line, 0))
        line = next((n for n in candidates if 1 <= n <= len(lines) and n not in blocked), None)
        if line is None:
            unplaced.append(diagnostic)
        else:
            wanted.setdefault(line, set()).add(diagnostic.code)
    edits = []
    for number, codes in sorted(wanted.items()):
        line = lines[number - 1]
        content = line.rstrip("\r\n")
        comment = comments.get(number)
        if comment is not None:
            existing = _NOQA_CODES.search(content, comment)
            if existing is not None:
                present = {c.strip().upper() for c in existing.group(0).split(":", 1)[1].split(",")}
                missing = sorted(codes - present)
                if missing:
                    at = starts[number - 1] + existing.end()
                    edits.append(Edit(at, at, ", " + ", ".join(missing)))
                continue
        end = len(content.rstrip())
        listed = ", ".join(sorted(codes))
        edits.append(Edit(starts[number - 1] + end, starts[number - 1] + len(content), f"  # noqa: {listed}"))
    return edits, unplaced


def _comment_map(tokens: list[tokenize.TokenInfo], lines: list[str]) -> tuple[set[int], dict[int, int], dict[int, int]]:
    """Lines that cannot end with a comment, the column where each line's comment starts, and
    for each line of a multi-line string, the line its closing quotes are on."""
    blocked: set[int] = set()
    comments: dict[int, int] = {}
    closing: dict[int, int] = {}
    fstring_starts: list[int] = []
    fstring_start = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    for token in tokens:
        if token.type == tokenize.STRING and token.start[0] < token.end[0]:
            blocked.update(range(token.start[0], token.end[0]))
            closing.update(dict.fromkeys(range(token.start[0], token.end[0]), token.end[0]))
        elif fstring_start is not None and token.type == fstring_start:
            fstring_starts.append(token.start[0])
        elif fstring_end is not None and token.type == fstring_end and fstring_starts:
            first = fstring_starts.pop()
            blocked.update(range(first, token.end[0]))
            closing.update(dict.fromkeys(range(first, token.end[0]), token.end[0]))
        elif token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
    for number, line in enumerate(lines, start=1):
        if line.rstrip("\r\n").endswith("\\") and number not in comments:
            blocked.add(number)  # a backslash continuation: nothing may follow it
    return blocked, comments, closing


# ----- messages ----------------------------------------------------------------------------------------


def _display(path: str) -> str:
    from fusion_lint.base.diagnostics import display_path

    return display_path(path)


def warn(message: str, prefix: bool = True) -> None:
    click.echo(f"fusion-lint: {message}" if prefix else message, err=True)
