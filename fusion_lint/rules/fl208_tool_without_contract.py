"""FL208 tool-without-contract: a tool that can fail declares no contract (opt-in)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from fusion_lint.base.diagnostics import Edit, Fix, Span
from fusion_lint.facts.model import Definition, Except, FileFacts, Raise, Return, Shape
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import line_start, newline_of, python_string, valid_span
from fusion_lint.rules._returned import ERROR_RESULTS, built_from_caught, error_text, failure, is_error_result
from fusion_lint.rules._shared import caught_by, escapes_to, snake_case
from mcp_fusion import FACTORY_CODES

# Programming-error guards: a bug in the caller's code, not a failure mode to declare (DESIGN §12.2).
GUARDS = frozenset({"TypeError", "AssertionError", "NotImplementedError"})
# The code a builtin exception's failure is when its message says nothing more precise.
BUILTIN_CODES = {
    "KeyError": "NOT_FOUND",
    "LookupError": "NOT_FOUND",
    "IndexError": "NOT_FOUND",
    "FileNotFoundError": "NOT_FOUND",
    "PermissionError": "FORBIDDEN",
    "TimeoutError": "TIMEOUT",
    "ConnectionError": "SERVICE_UNAVAILABLE",
    "OSError": "SERVICE_UNAVAILABLE",
    "IOError": "SERVICE_UNAVAILABLE",
}
# What no argument can fix: a missing environment variable, credentials or setting (checked first:
# "API key not set" is the server's configuration, not the caller's authorization or arguments).
CONFIGURATION = re.compile(
    r"environment variable|\benv(ironment)?\b|not (been )?configured|\bconfigur|no credentials|credentials? (not|are not|is not|missing)|"
    r"\b(api[_ ]?key|token|secret|password)s? (is |are )?(not set|missing|required|not configured|not provided)|"
    r"(?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b).{0,40}\b(not set|missing|required|must be set)|not initiali[sz]ed|\bnot installed\b|"
    r"please (set|configure|install)",
    re.I,
)
# Words of a message or of an exception class's name that say which code it is, in this order.
WORD_CODES = (
    (CONFIGURATION, "CONFIGURATION_ERROR"),
    (re.compile(r"not.?found|no such|does not exist|doesn't exist|\bunknown\b|no \w+ (found|with)", re.I), "NOT_FOUND"),
    (
        re.compile(
            r"unauthori[sz]ed|unauthenticated|not authenticated|authentication|invalid (api.?key|token|credentials)|"
            r"\b(sign|log)\s?in\b",
            re.I,
        ),
        "UNAUTHORIZED",
    ),
    (re.compile(r"forbidden|permission|access denied|not allowed|not permitted|read.only mode", re.I), "FORBIDDEN"),
    (re.compile(r"timed? ?out|timeout", re.I), "TIMEOUT"),
    (re.compile(r"rate.?limit|too many requests|throttl", re.I), "RATE_LIMITED"),
    (re.compile(r"conflict|already exists|duplicate|\blocked\b", re.I), "CONFLICT"),
    (
        re.compile(
            r"\binvalid\b|must be|must not|required|\bprovide\b|malformed|validation|cannot be empty|"
            r"should be|expected|out of range|not supported|unsupported|missing",
            re.I,
        ),
        "INVALID_PARAMS",
    ),
    (re.compile(r"unavailable|connection|connect\b|network|unreachable", re.I), "SERVICE_UNAVAILABLE"),
)
DRAFT_NAMES = ("ErrorContract", "JsonRpcErrorCode", "contract")  # the names a draft needs
REASON_WORDS = 4  # a reason names the failure in at most this many words
# Words that carry no meaning in a reason, and words a reason may not end with (a fragment).
FILLER = frozenset(
    "the a an is are was were be been being must should please error errors exception the this that "
    "it its your you our we has have had does do did occurred occur during while".split()
)
DANGLING = frozenset("to of for with and or in on at by from as if when than into via non not no per".split())
# Words naming where a value goes rather than which: a quoted name near them says more.
CONTAINERS = frozenset("list field parameter argument value input string array dict key option".split())
# A reason of one of these words alone says nothing about what failed.
GENERIC = frozenset(
    "failure error failed invalid value data request response tool result input issue problem unknown "
    "missing operation runtime internal exception os client value_error".split()
)
# Exceptions whose name says nothing of what failed: their reason comes from the message or the tool.
PLAIN_EXCEPTIONS = frozenset(
    {"Exception", "RuntimeError", "McpError", "MCPError", "ToolError", "ValueError", "BaseException"}
)


@dataclass(frozen=True)
class Site:
    """Where a failure is made, and how the draft makes it ``raise fail(reason, <the same text>)``.

    ``kind``: ``call`` (``raise Exc(message)``: the callee becomes ``fail`` and the reason its first
    argument), ``return`` (a returned error text: the statement becomes ``raise fail(...)``, ``from``
    the caught exception in an except clause), or ``left`` (no safe rewrite: ``where`` says what it is).
    """

    kind: str
    where: str
    span: Span | None = None
    value_span: Span | None = None
    cause: str | None = None


@dataclass(frozen=True)
class Draft:
    """One failure found in the tool's reach, as the contract entry that would declare it."""

    reason: str
    code: str
    when: str
    site: Site | None = None


# A message about what an upstream service answered is no argument guard, whatever words it uses.
UPSTREAM = re.compile(r"\b(response|returned|result|server said|status code)\b", re.I)


def _code_from_words(*texts: str | None) -> str | None:
    for text in texts:
        for pattern, code in WORD_CODES if text else ():
            if pattern.search(text):  # type: ignore[arg-type]  # text is not None: the loop runs only then
                return "INTERNAL_ERROR" if code == "INVALID_PARAMS" and UPSTREAM.search(text) else code  # type: ignore[arg-type]  # text is not None, as above
    return None


def _flat(text: str) -> str:
    """A message without its ``Error:`` lead and placeholders (``<name>``)."""
    text = re.sub(r"^\s*(error|failed|failure)\s*[:\-]\s*", "", text, flags=re.I)
    return re.sub(r"<[^<>]*>", " ", text)


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w.lower() not in FILLER]


def _tidy(words: list[str]) -> list[str]:
    """At most ``REASON_WORDS`` words, none dangling at the end."""
    words = words[:REASON_WORDS]
    while words and words[-1].lower() in DANGLING:
        words.pop()
    return words


_WORD = r"[A-Za-z][A-Za-z0-9_]*"
# (pattern, how the words it names become the reason), first match wins.
_REASON_FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), form)
    for pattern, form in (
        (rf"\bno\s+(?:such\s+)?((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:was\s+|were\s+)?found", "{}_not_found"),
        (rf"\bno\s+((?:{_WORD}\s+){{0,1}}{_WORD}\s+(?:generated|returned|available|created|produced))", "no_{}"),
        (
            rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:is |are )?(?:required and )?(?:cannot|must not|should not) be empty|"
            rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:is|are) empty",
            "empty_{}",
        ),
        (
            rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:cannot exceed|exceeds|(?:is\s+)?too long|(?:is\s+)?too large)",
            "{}_too_long",
        ),
        (r"\b(?:sign|log)\s?in\b", "sign_in_required"),
        (rf"more than\s+\d+\s+((?:{_WORD}\s*){{1,2}})", "too_many_{}"),
        (
            rf"(?:length|number|count) of\s+(?:the\s+)?((?:['\"`]?{_WORD}['\"`]?\s*){{1,2}}).*?must (?:match|equal|be equal)",
            "{}_count_mismatch",
        ),
        (
            rf"(?:no|missing|provide|specify)\s+(?:an?\s+|the\s+)?((?:{_WORD}\s*){{1,2}}?)(?:\s+(?:is|was|for|to|in|provided|specified|given|found)\b|[.,:;!]|$)",
            "missing_{}",
        ),
        (
            rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:is|are)?\s*(?:required|mandatory|must be (?:provided|specified|set|given))",
            "missing_{}",
        ),
        (
            rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:environment variable\s+)?(?:is\s+|are\s+)?(?:not set|not configured)",
            "{}_not_configured",
        ),
        (rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:is\s+|was\s+)?not found", "{}_not_found"),
        (rf"(?:unknown|unsupported)\s+((?:{_WORD}\s*){{1,2}})", "unknown_{}"),
        (rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:does not|doesn't) exist", "{}_not_found"),
        (rf"invalid\s+((?:{_WORD}\s*){{1,2}})", "invalid_{}"),
        (
            rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:is |are )?(?:invalid|must be|must not|should be|cannot be|has to be)",
            "invalid_{}",
        ),
        (rf"((?:{_WORD}\s+){{0,1}}{_WORD})\s+(?:is |are )?not (?:allowed|permitted|supported)", "{}_not_allowed"),
        (
            rf"(?:failed|unable|could not|couldn't|cannot|can't|error)\s+(?:to\s+|while\s+|when\s+|in\s+|during\s+)?((?:{_WORD}\s*){{1,4}})",
            "{}_failed",
        ),
    )
)


def _reason(words: str) -> str:
    """``words`` as a snake_case reason of at most ``REASON_WORDS`` parts (``Hyper3D`` stays one
    word; of a longer one, ``update_instance_vector_optimization_failed``, the last parts)."""
    reason = snake_case(re.sub(r"([0-9])([A-Z])", lambda m: m.group(1) + m.group(2).lower(), words))
    parts = reason.split("_")
    return "_".join(parts[-REASON_WORDS:]) if len(parts) > REASON_WORDS else reason


def reason_from_form(text: str) -> str:
    """The reason a message's form names (``url is required`` is ``missing_url``, ``Failed to
    fetch logs`` ``fetch_logs_failed``), or ""."""
    flat = _flat(text).strip()
    for pattern, form in _REASON_FORMS:
        match = pattern.search(flat)
        if match is None:
            continue
        if "{}" not in form:
            return form  # the form alone names the failure ("Please sign in": sign_in_required)
        subject = _content(re.findall(_WORD, next(group for group in match.groups() if group is not None)))
        quoted = re.search(r"['\"`]([A-Za-z_][A-Za-z0-9_]*)['\"`]", flat)
        if quoted is not None and subject and subject[-1].lower() in CONTAINERS:
            subject = [quoted.group(1)]  # "The 'ids' list is required": the ids, not a list
        words = _tidy(subject)
        if form == "{}_failed":  # what failed: the words up to the first that starts a phrase
            cut = next((i for i, w in enumerate(words) if w.lower() in DANGLING), len(words))
            # "Error adding to stream": what was added to, when the verb alone would be all
            words = words[:cut] if cut > 1 else [w for w in words if w.lower() not in DANGLING][:3]
            if len(words) > 3 and words[0].lower().endswith("ing"):
                words = words[1:]  # "Error getting model import job": the job failed, not the getting
        words = _tidy(words[: REASON_WORDS - 1])
        if words and not (len(words) == 1 and words[0].lower() in GENERIC):
            return _reason(form.format(" ".join(words)))
    return ""


def reason_from_text(text: str) -> str:
    """A snake_case name of the failure a message describes: by its form, else its first content
    words; "" when the message names nothing."""
    by_form = reason_from_form(text)
    if by_form:
        return by_form
    words = _tidy(_content(re.findall(_WORD, _flat(text).strip())))
    if not words or (len(words) == 1 and words[0].lower() in GENERIC):
        return ""
    return _reason(" ".join(words))


def _first_sentence(text: str) -> str:
    """The message's first sentence, whole: never cut inside a word or a placeholder."""
    text = re.sub(r"^\s*(error|failure)\s*[:\-]\s*", "", text.strip(), flags=re.I).strip()
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z])", text)
    return text[: match.start()] if match else text


def _when(text: str | None, fallback: str) -> str:
    text = _first_sentence(text or "").rstrip(" :-,")
    said = _flat(text).strip(" .:;,-")  # a text of placeholders only (``<e>``) says nothing
    return (text[:1].upper() + text[1:]) if said else fallback


def _class_base(exception: str) -> str:
    """An exception class's name without its ``Error``/``Exception`` suffix (``InvoiceLocked``)."""
    return re.sub(r"(Error|Exception)$", "", exception)


def _class_reason(exception: str) -> str:
    """The reason an exception class names: ``InvoiceLocked`` is ``invoice_locked``, ``ClientError``
    ``client_error`` (its base alone would be one generic word); "" for the plain classes."""
    if not exception or exception in PLAIN_EXCEPTIONS or exception in BUILTIN_CODES or exception in GUARDS:
        return ""
    base = _class_base(exception)
    return snake_case(base) if "_" in snake_case(base) else snake_case(exception)


def _humane(function: str) -> str:
    """``Tools.get_connection`` as words: ``get connection``."""
    return function.rpartition(".")[2].replace("_", " ").strip()


def _failed(function: str) -> str:
    """The reason of last resort: what the tool did, failed (``get_connection_failed``)."""
    return f"{snake_case(_humane(function))}_failed"


def _fails(function: str, exception: str = "") -> str:
    """The ``when`` of last resort: ``Get connection fails (RedisError)``."""
    return f"{_humane(function).capitalize()} fails" + (f" ({exception})" if exception else "")


def _code_for(exception: str, text: str = "", guard: bool = False) -> str:
    """The code a failure is by what its message (first) or its exception's name says; a
    ``ValueError`` with nothing more precise is an argument guard (``INVALID_PARAMS``) where the
    handler raised it, else an internal failure."""
    found = _code_from_words(text, exception)
    if found is not None:
        return found
    if exception == "ValueError" and guard:
        return "INVALID_PARAMS"
    return BUILTIN_CODES.get(exception) or "INTERNAL_ERROR"


def draft_for_raise(site: Raise, function: str, in_handler: bool) -> Draft:
    exception = (site.exception or "").rpartition(".")[2]
    message = site.sentence or site.text or ""
    if site.kind == "factory" and site.factory in FACTORY_CODES:
        code = FACTORY_CODES[site.factory].name  # type: ignore[index]  # a str: in FACTORY_CODES
    elif site.kind == "mcp_error" and site.code:
        code = site.code
    else:
        code = _code_for(exception, message, guard=in_handler and not site.clauses)  # in an except: no guard
    reason = (
        reason_from_form(message)  # what the message says failed is more precise than the exception's class
        or _class_reason(exception)
        or site.data_reason
        or reason_from_text(message)
        or _failed(function)
    )
    return Draft(reason, code, _when(message, _fails(function, exception)), _raise_site(site, function, in_handler))


def _raise_site(site: Raise, function: str, in_handler: bool) -> Site:
    exception = (site.exception or "").rpartition(".")[2] or "an exception"
    where = f"{exception} raised in {function} (line {site.span.line})"
    clause = site.clauses[0] if site.clauses else None
    rewritable = (
        in_handler
        and site.kind == "call"
        and site.sentence is not None  # ``Exc(<one text argument>)``
        and not caught_by(site.tries, "McpError")  # a try around it would catch fail()'s error
        and (clause is None or site.has_cause or bool(clause.name))  # in an except clause: ``from`` what it caught
    )
    if not rewritable:
        return Site("left", where)
    cause = clause.name if clause is not None and not site.has_cause else None
    return Site("call", where, span=site.span, cause=cause)


def draft_for_text(text: str, function: str, site: Site | None = None) -> Draft:
    reason = reason_from_text(text) or _failed(function)
    return Draft(reason, _code_from_words(text) or "INTERNAL_ERROR", _when(text, _fails(function)), site)


def failures(definition: ResolvedDefinition, project: ProjectView) -> Iterator[Draft]:
    """What in the tool's reach can fail (DESIGN §12.2 "Scopes, settled"): a raise that escapes to
    its boundary (a bare re-raise included; guards aside), and its own failures returned as
    success or as an error result."""
    handler = definition.handler.function if definition.handler is not None else None
    for reached in definition.reach:
        view = project.function_view(reached.function)
        in_handler = reached.function is handler
        for site in reached.function.raises:
            if site.kind in ("fail", "other"):
                continue
            if site.kind == "reraise":
                exception = _caught(site.clauses)
            else:
                exception = (site.exception or site.kind).rpartition(".")[2]
            if exception in GUARDS or caught_by(site.tries, exception):
                continue
            if view is not None and not any(found is definition for found in escapes_to(view, exception)):
                continue  # a caller catches it into a normal value
            if site.kind == "reraise":
                function = reached.function.qualname
                clause = site.clauses[0] if site.clauses else None
                where = f"{exception} re-raised in {function} (line {site.span.line})"
                rewritable = in_handler and clause is not None and clause.name and not caught_by(site.tries, "McpError")
                yield Draft(
                    _class_reason(exception) or _failed(function),
                    _code_for(exception),
                    _fails(function, exception if exception != "Exception" else ""),
                    Site("reraise", where, span=site.span, cause=clause.name) if rewritable else Site("left", where),  # type: ignore[union-attr]  # clause is not None when rewritable
                )
            else:
                yield draft_for_raise(site, reached.function.qualname, in_handler)
    if handler is None:
        return
    for returned in handler.returns:
        value = returned.value
        callee = (value.callee or "").rpartition(".")[2] if value.kind == "call" else ""
        where = f"the error returned by {handler.qualname} (line {returned.span.line})"
        if is_error_result(value):
            texts = [error_text(s) for s in _texts(value)]
            yield draft_for_text(next((t for t in texts if t), "") or "", handler.qualname, Site("left", where))
        elif callee in ERROR_RESULTS:
            pass  # a plain ToolResult is a success
        elif failure(value) is not None:
            text = (
                returned.text.sentence
                if returned.text
                else next((t for s in _texts(value) if (t := error_text(s))), "")
            )
            yield draft_for_text(text, handler.qualname, _return_site(returned, where))
        elif built_from_caught(returned) is not None:  # FL306's other form: the caught exception returned
            exception = _caught(returned.clauses)
            function = handler.qualname
            said = returned.text.sentence if returned.text else None
            yield Draft(
                _class_reason(exception) or _failed(function),
                _code_for(exception, said or ""),
                _when(said, _fails(function, exception)),  # a text of placeholders only falls back
                _return_site(returned, where),
            )


def _return_site(returned: Return, where: str) -> Site:
    """A returned error text becomes ``raise fail(reason, <the text>)``, ``from`` the caught exception."""
    text = returned.text
    if text is None or caught_by(text.tries, "McpError"):
        return Site("left", where)  # not text, or a try around it would catch the failure raised instead
    clause = returned.clauses[0] if returned.clauses else None
    return Site("return", where, span=returned.span, value_span=text.span, cause=clause.name if clause else None)


def _caught(clauses: tuple[Except, ...]) -> str:
    """The class the innermost except clause catches, when it names one (else ``Exception``)."""
    types = clauses[0].types if clauses else ()
    return types[0].rpartition(".")[2] if len(types) == 1 else "Exception"


def _texts(shape: Shape) -> Iterator[Shape]:
    """The strings a returned value is made of, a level or two deep."""
    yield shape
    for _, inner in shape.keys:
        yield from _texts(inner)
    for inner in shape.items:
        yield from _texts(inner)


def distinct(drafts: Iterable[Draft]) -> list[tuple[Draft, list[Site]]]:
    """One entry per reason, with the sites that make it: drafts of one reason are one failure
    (the code the most precise of theirs, an ``INTERNAL_ERROR`` only when none says more)."""
    found: dict[str, tuple[Draft, list[Site]]] = {}
    for draft in drafts:
        kept, sites = found.setdefault(draft.reason, (draft, []))
        if kept.code == "INTERNAL_ERROR" and draft.code != "INTERNAL_ERROR":
            found[draft.reason] = (Draft(kept.reason, draft.code, kept.when), sites)
        if draft.site is not None and draft.site not in sites:
            sites.append(draft.site)
    return [(Draft(draft.reason, draft.code, draft.when), sites) for draft, sites in found.values()]


def draft_contract(
    text: str, *, drafts: list[tuple[Draft, list[Site]]], handler_name_offset: int, facts: FileFacts
) -> Fix | None:
    """One edit per tool: ``@contract(errors=[...])`` just above the handler's ``def`` (below every
    decorator, so the framework registers the contracted function), each failure the handler makes
    itself rewritten to ``raise fail("<reason>", <its text>)``, and the import of what they name."""
    names = facts.names
    if names is None or not drafts or not 0 <= handler_name_offset <= len(text):
        return None
    start = line_start(text, handler_name_offset)
    before = text[start:handler_name_offset]
    match = re.fullmatch(r"([ \t]*)(async[ \t]+)?def[ \t]+", before)
    if match is None:
        return None
    indent, newline = match.group(1), newline_of(text)
    imported = {local: qname for local, qname in facts.imports.items() if qname.startswith("mcp_fusion")}
    rewrites: list[Edit] = []
    left: list[str] = []
    declared: list[Draft] = []
    fail_free = not names.bound.get("fail", 0) or imported.get("fail") == "mcp_fusion.fail"
    for draft, sites in drafts:
        made = [_rewrite(text, site, draft.reason) if fail_free else None for site in sites]
        if sites and all(edits is not None for edits in made):
            declared.append(draft)
            rewrites.extend(edit for edits in made for edit in edits)  # type: ignore[union-attr]  # every edits is not None: tested by all() above
        else:  # declared but still raised as before, it would be masked: not declared, and said
            left.extend(site.where for site, edits in zip(sites, made) if edits is None)
    if not declared:
        return None
    needed = DRAFT_NAMES + ("fail",)
    missing = [name for name in needed if imported.get(name) not in (f"mcp_fusion.{name}",)]
    if any(names.bound.get(name, 0) for name in missing):
        return None  # the name means something else in this file
    entries = "".join(
        f"{indent}    ErrorContract(reason={python_string(d.reason)}, code=JsonRpcErrorCode.{d.code}, "
        f'when={python_string(d.when)}, recovery=""),{newline}'
        for d in declared
    )
    edits = [Edit(start, start, f"{indent}@contract(errors=[{newline}{entries}{indent}]){newline}"), *rewrites]
    if missing:
        at = names.import_end
        lead = newline if at and at == len(text) and not text.endswith(("\n", "\r")) else ""
        imports = tuple(("mcp_fusion", name) for name in sorted(missing))
        edits.insert(0, Edit(at, at, f"{lead}from mcp_fusion import {', '.join(sorted(missing))}{newline}", imports))
    message = f"Draft a @contract declaring {len(declared)} failure{'s' if len(declared) != 1 else ''}, each raised with fail() and its text"
    if left:
        message += (
            f"; not declared (no safe rewrite: raise fail() for them where they happen): "
            f"{', '.join(left[:3])}{' ...' if len(left) > 3 else ''}"
        )
    return Fix(message, edits, "unsafe", leaves=("FL111", "FL112"))


_RAISED_CALL = re.compile(r"raise\s+(?P<callee>[A-Za-z_][\w.]*)\s*\(")


def _rewrite(text: str, site: Site, reason: str) -> list[Edit] | None:
    """The edits that make ``site`` ``raise fail(reason, <its text>)``, or None."""
    literal = python_string(reason)
    cause = f" from {site.cause}" if site.cause else ""
    if site.kind == "call" and site.span is not None and valid_span(text, site.span):
        # ``raise Exc(<message>)``: the callee becomes ``fail`` and the reason comes first, laid out
        # like the message (on its own line when the message is). The codemod re-parses the result.
        match = _RAISED_CALL.match(text, site.span.start, site.span.end)
        if match is None:
            return None
        after = match.end()
        newline = re.match(r"[ \t]*(\r\n|\r|\n)([ \t]*)", text[after : site.span.end])
        argument = f"{literal},{newline.group(1)}{newline.group(2)}" if newline else f"{literal}, "
        at = after + newline.end() if newline else after
        edits = [Edit(match.start("callee"), match.end("callee"), "fail"), Edit(at, at, argument)]
        return [*edits, Edit(site.span.end, site.span.end, cause)] if cause else edits
    if site.kind == "reraise" and site.span is not None and valid_span(text, site.span):
        # The declared ``when`` is the message: the caught exception's own text is a library's (FL307),
        # and stays chained as the cause, for the log.
        return [Edit(site.span.start, site.span.end, f"raise fail({literal}){cause}")]
    if site.kind == "return" and site.span is not None and site.value_span is not None:
        if not valid_span(text, site.span) or not valid_span(text, site.value_span):
            return None
        value = text[site.value_span.start : site.value_span.end]
        return [Edit(site.span.start, site.span.end, f"raise fail({literal}, {value}){cause}")]
    return None


@register
class ToolWithoutContract(Rule):
    code, name, severity = "FL208", "tool-without-contract", "warning"
    reads_callers = True  # what the handler reaches escapes to it only if no caller above catches it
    default_enabled = False
    summary = "A tool or resource that can fail declares no contract (opt-in)."
    why = (
        "A tool with no contract has no declared failure modes: the model cannot tell a missing invoice from "
        "a broken server, gets no code it can switch on and no recovery naming a next step. Every tool whose "
        "reach raises (or returns an error) has failure modes; declaring them is what makes them recoverable. "
        "Opt-in: a contract-less tool is a choice the framework allows; enable it with `--extend-select FL208` "
        "when adopting contracts."
    )
    fix = (
        "One edit per tool, made with libcst: a `@contract(errors=[...])` draft just above the handler's `def` "
        "(below the registration decorator), and each failure it declares raised where the handler makes it "
        'as `raise fail("<reason>", <the original text>)` (`raise ValueError(msg)`, a returned error text; '
        'a bare re-raise in `except ... as e` becomes `raise fail("<reason>") from e`, the declared `when` '
        "its message), so the model gets the same text plus "
        "a code, a reason and a recovery slot. Reasons name the failure in 1-4 snake_case words "
        "(`url is required` is `missing_url`); codes follow the message (argument guards `INVALID_PARAMS`, "
        "a missing setting or environment variable `CONFIGURATION_ERROR`, not-found, permission, "
        "authentication, timeout and rate-limit words their codes); `when` is the message's first sentence "
        "with f-string placeholders as `<name>`. `recovery` stays empty for you to write (FL111). A failure "
        "the draft cannot raise with `fail()` (an exception from a callee, an error result, a message that "
        "is not text) is not declared, so it is not masked either: the fix's message lists it. Imports go "
        "into the leading import block. Unsafe: a draft to review, and the contract changes what failures "
        "look like on the wire."
    )
    fix_safety = "unsafe"
    limits = (
        "Counts a raise that escapes to the boundary (a bare re-raise included), a failure returned as success "
        "(FL306's forms) and a returned error result (`isError=True`; a plain fastmcp `ToolResult` is a success). Guards (`TypeError`, `AssertionError`, `NotImplementedError`) "
        "and raises the handler catches into a normal value do not count. A tool with `fail()` but no contract "
        "is FL205 instead. The fix is offered for framework handlers defined in the registering file; "
        "`mcp_fusion` tools take `errors=` on their decorator. A low-level dispatcher (`@server.call_tool()` in "
        "mcp 1.x, `on_call_tool=` in 2.x) is reported like any tool, but with no draft and other advice: one "
        "function serves every tool of the server, and a contract (like `fail()`, which raises outside a "
        "contracted handler) is one tool's, so `@contract` on it would describe no tool. Its tools get contracts "
        "by being served one handler each: mcp_fusion's `@tool(name, errors=[...])` on a `FusionServer`, or "
        "`@contract(errors=[...])` below a FastMCP, MCPServer or fastmcp tool decorator."
    )
    prelude = "from mcp.server.fastmcp import FastMCP\n"
    VALID = (
        """
from mcp_fusion import contract, fail, ErrorContract, JsonRpcErrorCode

mcp = FastMCP("billing")


@mcp.tool()
def add(a: int, b: int) -> int:
    return a + b


@mcp.tool()
@contract(errors=[ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                                recovery="Call list_invoices to find a valid invoice id.")])
def get_invoice(invoice_id: str) -> dict:
    raise fail("no_match")


@mcp.tool()
def parse(count: str) -> int:
    if not isinstance(count, str):
        raise TypeError("count must be a string")
    try:
        return int(count)
    except ValueError:
        return 0
""",
        """
from fastmcp import FastMCP
from fastmcp.tools.tool import ToolResult

mcp = FastMCP("echo")


@mcp.tool
def echo(text: str) -> ToolResult:
    return ToolResult(content=f"Echoed: {text}", structured_content={"length": len(text)})
""",
    )
    INVALID = (
        Example(
            """
import json

mcp = FastMCP("billing")


@mcp.tool()  # error: FL208 "2 failure modes"
def get_invoice(invoice_id: str) -> str:
    if not invoice_id:
        raise ValueError("Invoice id is required")
    if invoice_id not in INVOICES:
        return "Error: invoice not found"
    return json.dumps(INVOICES[invoice_id])
""",
            fixed="""
import json
from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail

mcp = FastMCP("billing")


@mcp.tool()  # error: FL208 "2 failure modes"
@contract(errors=[
    ErrorContract(reason="missing_invoice_id", code=JsonRpcErrorCode.INVALID_PARAMS, when="Invoice id is required", recovery=""),
    ErrorContract(reason="invoice_not_found", code=JsonRpcErrorCode.NOT_FOUND, when="Invoice not found", recovery=""),
])
def get_invoice(invoice_id: str) -> str:
    if not invoice_id:
        raise fail("missing_invoice_id", "Invoice id is required")
    if invoice_id not in INVOICES:
        raise fail("invoice_not_found", "Error: invoice not found")
    return json.dumps(INVOICES[invoice_id])
""",
        ),
        Example(
            """
from mcp.server.lowlevel import Server

server = Server("billing")


@server.call_tool()  # error: FL208 "a low-level dispatcher takes no @contract"
async def call_tool(name: str, arguments: dict) -> list:
    if name != "get_invoice":
        raise ValueError(f"Unknown tool: {name}")
    return []
"""
        ),
        Example(
            """
mcp = FastMCP("billing")


@mcp.tool()  # error: FL208 "1 failure mode found: read_statement_failed"
def read_statement(path: str) -> str:
    try:
        return open(path).read()
    except OSError as e:
        return str(e)
""",
            fixed="""
from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract, fail
mcp = FastMCP("billing")


@mcp.tool()  # error: FL208 "1 failure mode found: read_statement_failed"
@contract(errors=[
    ErrorContract(reason="read_statement_failed", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="Read statement fails (OSError)", recovery=""),
])
def read_statement(path: str) -> str:
    try:
        return open(path).read()
    except OSError as e:
        raise fail("read_statement_failed", str(e)) from e
""",
        ),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        facts = definition.definition
        if definition.kind == "prompt" or definition.handler is None or definition.contract.declared:
            return
        if facts.contract_span is not None:
            return  # an @contract that never runs is FL118's
        if any(site.method == "fail" for reached in definition.reach for site in reached.function.fail_sites):
            return  # fail() with no contract is FL205
        drafts = distinct(failures(definition, project))
        if not drafts:
            return
        count = f"{len(drafts)} failure mode{'s' if len(drafts) != 1 else ''}"
        handler = definition.handler
        fix = None
        if facts.server is not None and not facts.dispatcher and handler.path == definition.path:
            fix = partial(
                draft_contract,
                drafts=drafts,
                handler_name_offset=handler.function.span.start,
                facts=project.files[definition.path],
            )
        yield Finding(
            facts.span,
            f"can fail ({count} found: {', '.join(d.reason for d, _ in drafts[:4])}{', ...' if len(drafts) > 4 else ''}) "
            f"but declares no contract, so the model gets no reason, code or recovery; {advice(facts)}",
            definition.path,
            fix,
        )


def advice(definition: Definition) -> str:
    """What the author can do: a contract where the definition can take one. A low-level dispatcher
    serves every tool of its server from one function, which no ``@contract`` describes (a contract
    is one tool's, and ``fail()`` outside a contracted handler raises): its tools get contracts by
    being served one handler each."""
    if definition.dispatcher:
        return (
            "a low-level dispatcher takes no @contract (a contract is one tool's): serve each tool it "
            "dispatches from its own handler with errors=[ErrorContract(...)] (mcp_fusion's @tool on a "
            "FusionServer) or under @contract(errors=[...]) on a FastMCP, MCPServer or fastmcp server"
        )
    if definition.server is not None:
        return "declare them with @contract(errors=[...]) below the tool decorator"
    return "declare them with errors=[ErrorContract(...)] on the definition"
