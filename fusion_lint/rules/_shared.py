"""What several rules share: how entries and values are named in messages, the reach of a
definition, the snake_case form of a reason, and the preludes of the examples."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fusion_lint.facts.model import FailSite, Raise, Try, Value
from fusion_lint.project.view import UNRESOLVED_KINDS, FunctionView, ResolvedDefinition, ResolvedEntry
from fusion_lint.rules import Finding
from mcp_fusion import BASELINE_CODES, FACTORY_CODES, JsonRpcErrorCode

BASELINE = frozenset(code.name for code in BASELINE_CODES)
FACTORY_FOR_CODE = {code.name: name for name, code in FACTORY_CODES.items()}
CODED_RAISES = ("mcp_error", "factory", "tool_error")
REASON_FORMAT = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")

# ----- the preludes the harness puts before every example (hidden in the docs) --------------------

SHAPE_PRELUDE = "from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode\n"
HANDLER_PRELUDE = (
    "import asyncio\n"
    "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context, McpError, not_found, conflict\n"
    'ENTRIES = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice", '
    'recovery="Call list_invoices to find a valid id.")]\n'
)
RECOVERY_PRELUDE = (
    "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context\n"
    '@tool("list_invoices")\nasync def list_invoices(customer_id: str) -> list:\n    return []\n'
)


# ----- how things are named in messages ----------------------------------------------------------


def entry_label(entry: ResolvedEntry) -> str:
    """``entry 'no_match'``, or ``entry #2`` (its place in the first contract that holds it) when
    it has no literal reason."""
    reason = entry.entry.get("reason")
    if reason is not None and reason.value.kind == "str" and reason.value.value:
        return f"entry '{reason.value.value}'"
    index = 0
    if entry.holders:
        index = next((i for i, held in enumerate(entry.holders[0].contract.entries) if held is entry), 0)
    return f"entry #{index + 1}"


def kind_phrase(value: Value) -> str:
    """A value's kind as a message says it: 'a string', 'an int', 'None', 'a dict'."""
    return {
        "str": "a string",
        "fstring": "an f-string",
        "bytes": "bytes",
        "int": "an int",
        "float": "a float",
        "bool": "a bool",
        "none": "None",
        "code": "a code",
        "collection": str(value.value),
    }.get(value.kind, str(value.value))


def recovery(entry: ResolvedEntry) -> Value | None:
    """The entry's recovery when it is a text that says something (constants resolved)."""
    value = entry.get("recovery")
    return value if value is not None and value.kind == "str" and str(value.value).strip() else None


def code_spelling(code: str) -> str:
    """How a contract writes a code it names: ``JsonRpcErrorCode.NOT_FOUND``, or ``"SERVER_BUSY"``
    for a canonical or custom string code (DESIGN §3.1)."""
    return f"JsonRpcErrorCode.{code}" if code in JsonRpcErrorCode.__members__ else f'"{code}"'


def listing(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def snake_case(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text.strip())
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    text = re.sub(r"_+", "_", text)
    if not text or not text[0].isalpha():
        text = "reason_" + text
    return text


def text_required(entry: ResolvedEntry, field_name: str, what: str) -> Iterator[Finding]:
    """A text field (``when``, ``recovery``) that is missing or not a string."""
    value = entry.get(field_name)
    if value is None:
        if not entry.entry.opaque:
            yield Finding(
                entry.entry.span, f'{entry_label(entry)} has no {field_name}; add {field_name}="{what}"', entry.path
            )
    elif value.kind not in ("str", "fstring", *UNRESOLVED_KINDS):
        yield Finding(
            value.span, f"{entry_label(entry)}: {field_name} must be a string, got {kind_phrase(value)}", entry.path
        )


# ----- what a definition's handler reaches --------------------------------------------------------


def fail_sites(definition: ResolvedDefinition, depth: int | None = None) -> Iterator[tuple[FailSite, str]]:
    for reached in definition.reach:
        if depth is None or reached.depth == depth:
            for site in reached.function.fail_sites:
                yield site, reached.path


def raises(definition: ResolvedDefinition, depth: int | None = None) -> Iterator[tuple[Raise, str]]:
    for reached in definition.reach:
        if depth is None or reached.depth == depth:
            for site in reached.function.raises:
                yield site, reached.path


def named_reasons(definition: ResolvedDefinition) -> set[str]:
    """Reasons something in reach names: literal ``ctx.fail``/``recovery_for``, or a raise's data."""
    named = {site.reason for site, _ in fail_sites(definition) if site.reason is not None}
    named |= {site.data_reason for site, _ in raises(definition) if site.data_reason is not None}
    return named


def handler_checkable(definition: ResolvedDefinition) -> bool:
    """§5.2 scope: a handler to compare, and a contract that resolved with its reasons and codes."""
    return definition.handler is not None and definition.contract.checkable


# ----- what a raise reaches: the try statements around it, its callers, the framework -------------


def _builtin(name: str) -> type | None:
    import builtins

    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def catches(types: tuple[str, ...], raised: str) -> bool:
    """Whether an except clause naming ``types`` catches an exception of class ``raised`` (a bare
    ``except`` catches everything; a builtin is caught by its bases; a class of the project is
    taken to be an ``Exception``)."""
    if not types:
        return True
    raised_class = _builtin(raised)
    for name in types:
        if name == raised:
            return True
        caught = _builtin(name)
        if caught is None:
            continue
        if raised_class is not None and issubclass(raised_class, caught):
            return True
        if raised_class is None and caught in (Exception, BaseException):
            return True
    return False


def caught_by(tries: tuple[Try, ...], raised: str) -> bool:
    """Whether the try statements around a raise or a call (innermost first) stop ``raised``: the
    first clause that catches it, in each, decides; one that re-raises lets it go on outward."""
    for statement in tries:
        clause = next((c for c in statement.handlers if catches(c.types, raised)), None)
        if clause is not None and not clause.rethrows:
            return True
    return False


def absorbed_by_wrapper(definition: ResolvedDefinition, raised: str) -> bool:
    """Whether a project decorator between the framework and the handler catches ``raised`` around
    every call it makes of the handler, and does not re-raise it (``@handle_exceptions`` returning
    ``{"error": str(e)}``): the framework never sees the exception."""
    return any(all(caught_by(tries, raised) for tries in calls) for calls in definition.wrappers)


def escapes_to(function: FunctionView, raised: str) -> list[ResolvedDefinition]:
    """The definitions whose boundary an exception of class ``raised``, left by ``function``,
    reaches: ``function``'s own (it is their handler), and, through every caller whose call is not
    inside a try that catches it, theirs."""
    found: dict[int, ResolvedDefinition] = {}
    seen: set[int] = set()
    stack = [function]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for definition in current.handler_of:
            if not absorbed_by_wrapper(definition, raised):
                found.setdefault(id(definition), definition)
        for caller, name in current.callers:
            facts = caller.function
            guards = facts.guarded_calls.get(name, [])
            if name in facts.unguarded_calls or any(not caught_by(tries, raised) for tries in guards):
                stack.append(caller)
    return list(found.values())


def contracted(definition: ResolvedDefinition) -> bool:
    """A definition whose failures go through the runtime's boundary: the runtime's own, or a
    framework handler under a working ``@contract``."""
    return definition.definition.server is None or (definition.contract.declared and not definition.contract.inert)


def by_framework(definitions: list[ResolvedDefinition]) -> list[tuple[str, bool, bool, list[ResolvedDefinition]]]:
    """The definitions grouped by what their framework makes of a raised exception: (framework,
    masked, contracted, definitions), in the order of first appearance."""
    groups: dict[tuple[str, bool, bool], list[ResolvedDefinition]] = {}
    for definition in definitions:
        server = definition.definition.server
        key = (definition.definition.framework, bool(server and server.masked), contracted(definition))
        groups.setdefault(key, []).append(definition)
    return [(framework, masked, guarded, members) for (framework, masked, guarded), members in groups.items()]


def tool_name(definitions: list[ResolvedDefinition]) -> str:
    """The tool's name as a framework's message spells it (``<name>`` for several)."""
    names = {d.definition.name for d in definitions}
    return str(next(iter(names))) if len(names) == 1 and None not in names else "<name>"
