"""FL208 tool-without-contract: a tool that can fail declares no contract (opt-in)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from fusion_lint.base.diagnostics import Edit, Fix
from fusion_lint.facts.model import FileFacts, Raise
from fusion_lint.project.view import ProjectView, ResolvedDefinition
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._edits import line_start, newline_of, python_string
from fusion_lint.rules._returned import ERROR_RESULTS, built_from_caught, error_text, failure, is_error_result
from fusion_lint.rules._shared import caught_by, escapes_to, snake_case
from mcp_fusion import FACTORY_CODES

# Programming-error guards: a bug in the caller's code, not a failure mode to declare (DESIGN §12.2).
GUARDS = frozenset({"TypeError", "AssertionError", "NotImplementedError"})
# The code a builtin exception's failure most likely is; anything else is drafted as INTERNAL_ERROR.
BUILTIN_CODES = {
    "ValueError": "INVALID_PARAMS",
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
# Words of a message or of an exception class's name that say which code it is, in this order.
WORD_CODES = (
    (re.compile(r"not.?found|no such|does not exist|missing|unknown", re.I), "NOT_FOUND"),
    (re.compile(r"unauthori[sz]ed|auth|credential|api.?key|token", re.I), "UNAUTHORIZED"),
    (re.compile(r"forbidden|permission|denied|not allowed", re.I), "FORBIDDEN"),
    (re.compile(r"timed? ?out|timeout", re.I), "TIMEOUT"),
    (re.compile(r"rate.?limit|too many requests", re.I), "RATE_LIMITED"),
    (re.compile(r"conflict|already exists|duplicate|locked", re.I), "CONFLICT"),
    (re.compile(r"invalid|must be|required|bad |malformed|validation", re.I), "INVALID_PARAMS"),
    (re.compile(r"unavailable|connection|connect|network", re.I), "SERVICE_UNAVAILABLE"),
)
DRAFT_NAMES = ("ErrorContract", "JsonRpcErrorCode", "contract")  # the names a draft needs
REASON_WORDS = 4  # a reason drafted from a message keeps its first few words


@dataclass(frozen=True)
class Draft:
    """One failure found in the tool's reach, as the contract entry that would declare it."""

    reason: str
    code: str
    when: str


def _code_from_words(*texts: str | None) -> str | None:
    for text in texts:
        for pattern, code in WORD_CODES if text else ():
            if pattern.search(text):  # type: ignore[arg-type]
                return code
    return None


def _words(text: str) -> str:
    """The message as a reason: its first words, "error" and articles dropped."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text) if w.lower() not in ("error", "the", "a", "an")]
    return snake_case(" ".join(words[:REASON_WORDS])) if words else ""


def _when(text: str | None, fallback: str) -> str:
    text = (text or "").strip().rstrip(" :-,")
    return (text[:1].upper() + text[1:]) if text else fallback


def _class_base(exception: str) -> str:
    """An exception class's name without its ``Error``/``Exception`` suffix (``InvoiceLocked``)."""
    return re.sub(r"(Error|Exception)$", "", exception)


def _code_for(exception: str, text: str = "") -> str:
    """The code a builtin exception's failure is, else what its class name or message says."""
    return BUILTIN_CODES.get(exception) or _code_from_words(exception, text) or "INTERNAL_ERROR"


def draft_for_raise(site: Raise, where: str) -> Draft:
    exception = (site.exception or "").rpartition(".")[2]
    text = site.text or ""
    if site.kind == "factory" and site.factory in FACTORY_CODES:
        code = FACTORY_CODES[site.factory].name
    elif site.kind == "mcp_error" and site.code:
        code = site.code
    else:
        code = _code_for(exception, text)
    custom = (
        exception
        and exception not in BUILTIN_CODES
        and exception not in ("Exception", "RuntimeError", "McpError", "MCPError", "ToolError")
    )
    base = _class_base(exception) if custom else ""
    reason = snake_case(base) if base else (site.data_reason or _words(text) or snake_case(exception or "failure"))
    return Draft(reason, code, _when(text, f"{exception or 'An error'} raised in {where}"))


def draft_for_text(text: str) -> Draft:
    return Draft(_words(text) or "failure", _code_from_words(text) or "INTERNAL_ERROR", _when(text, "The tool fails"))


def failures(definition: ResolvedDefinition, project: ProjectView) -> Iterator[Draft]:
    """What in the tool's reach can fail (DESIGN §12.2 "Scopes, settled"): a raise that escapes to
    its boundary (a bare re-raise included; guards aside), and its own failures returned as
    success or as an error result."""
    for reached in definition.reach:
        view = project.function_view(reached.function)
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
                yield Draft(
                    snake_case(_class_base(exception) or "failure"),
                    _code_for(exception),
                    f"{exception} raised in {reached.function.qualname}",
                )
            else:
                yield draft_for_raise(site, reached.function.qualname)
    if definition.handler is None:
        return
    for returned in definition.handler.function.returns:
        value = returned.value
        callee = (value.callee or "").rpartition(".")[2] if value.kind == "call" else ""
        if is_error_result(value):
            texts = [error_text(s) for s in _texts(value)]
            yield draft_for_text(next((t for t in texts if t), "") or "The tool fails")
        elif callee in ERROR_RESULTS:
            pass  # a plain ToolResult is a success
        elif failure(value) is not None:
            yield draft_for_text(next((t for s in _texts(value) if (t := error_text(s))), ""))
        elif built_from_caught(returned) is not None:  # FL306's other form: the caught exception returned
            exception = _caught(returned.clauses)
            # The exception's name when it says what failed (``timeout``, ``connection``), else what
            # the tool did (``read_statement_failed``): never a lone ``failure`` or ``os``.
            base = _class_base(exception)
            function = definition.handler.function.qualname.rpartition(".")[2]
            yield Draft(
                snake_case(base) if len(base) > 3 else f"{snake_case(function)}_failed",
                _code_for(exception),
                f"{exception} caught in {definition.handler.function.qualname} and returned as its result",
            )


def _caught(clauses: tuple) -> str:
    """The class the innermost except clause catches, when it names one (else ``Exception``)."""
    types = clauses[0].types if clauses else ()
    return types[0].rpartition(".")[2] if len(types) == 1 else "Exception"


def _texts(shape) -> Iterator:
    """The strings a returned value is made of, a level or two deep."""
    yield shape
    for _, inner in shape.keys:
        yield from _texts(inner)
    for inner in shape.items:
        yield from _texts(inner)


def distinct(drafts: Iterable[Draft]) -> list[Draft]:
    """One entry per distinct failure, each with its own reason."""
    found: dict[tuple[str, str], Draft] = {}
    for draft in drafts:
        found.setdefault((draft.reason, draft.code), draft)
    reasons: set[str] = set()
    unique = []
    for draft in found.values():
        reason, n = draft.reason, 2
        while reason in reasons:
            reason, n = f"{draft.reason}_{n}", n + 1
        reasons.add(reason)
        unique.append(Draft(reason, draft.code, draft.when))
    return unique


def draft_contract(text: str, *, drafts: list[Draft], handler_name_offset: int, facts: FileFacts) -> Fix | None:
    """``@contract(errors=[...])`` just above the handler's ``def`` (below every decorator, so the
    framework registers the contracted function), and the import of what it names."""
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
    missing = [name for name in DRAFT_NAMES if imported.get(name) not in (f"mcp_fusion.{name}",)]
    if any(names.bound.get(name, 0) for name in missing):
        return None  # the name means something else in this file
    entries = "".join(
        f"{indent}    ErrorContract(reason={python_string(d.reason)}, code=JsonRpcErrorCode.{d.code}, "
        f'when={python_string(d.when)}, recovery=""),{newline}'
        for d in drafts
    )
    edits = [Edit(start, start, f"{indent}@contract(errors=[{newline}{entries}{indent}]){newline}")]
    if missing:
        at = names.import_end
        lead = newline if at and at == len(text) and not text.endswith(("\n", "\r")) else ""
        imports = tuple(("mcp_fusion", name) for name in missing)
        edits.insert(0, Edit(at, at, f"{lead}from mcp_fusion import {', '.join(missing)}{newline}", imports))
    return Fix("Draft a @contract from the failures found", edits, "unsafe", leaves=("FL111", "FL112"))


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
        "Inserts a `@contract(errors=[...])` draft just above the handler's `def` (below the registration "
        "decorator), one entry per distinct failure found: the code from the factory or exception type, the "
        "reason from the exception class or message, `when` from the message, and an empty `recovery` for you "
        "to write (FL111 points at each). Adds `from mcp_fusion import ...` for what it names. Unsafe: a "
        "draft to review, and the contract changes what failures look like on the wire."
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
from mcp_fusion import ErrorContract, JsonRpcErrorCode, contract

mcp = FastMCP("billing")


@mcp.tool()  # error: FL208 "2 failure modes"
@contract(errors=[
    ErrorContract(reason="invoice_id_is_required", code=JsonRpcErrorCode.INVALID_PARAMS, when="Invoice id is required", recovery=""),
    ErrorContract(reason="invoice_not_found", code=JsonRpcErrorCode.NOT_FOUND, when="Error: invoice not found", recovery=""),
])
def get_invoice(invoice_id: str) -> str:
    if not invoice_id:
        raise ValueError("Invoice id is required")
    if invoice_id not in INVOICES:
        return "Error: invoice not found"
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
"""
        ),
    )

    def check_definition(self, definition, project) -> Iterable[Finding]:
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
            f"can fail ({count} found: {', '.join(d.reason for d in drafts[:4])}{', ...' if len(drafts) > 4 else ''}) "
            f"but declares no contract, so the model gets no reason, code or recovery; {advice(facts)}",
            definition.path,
            fix,
        )


def advice(definition) -> str:
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
