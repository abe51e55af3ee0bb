"""§5.1 Contract shape: FL100–FL117 and FL190.

Within one field the checks are exclusive, first match wins (FL103 → FL104 → FL105 for ``code``;
FL106 → FL107 for ``reason``; FL110 → FL111 → FL112 for ``recovery``): each rule's condition
assumes the earlier ones did not match.
"""
from __future__ import annotations

import difflib
import re
from typing import Iterable, Iterator, Optional

from mcp_fusion import CONTRACT_FIELDS, SEVERITIES, THROWN_BY_VALUES, JsonRpcErrorCode

from .. import fixes
from ..diagnostics import Finding
from ..model import Entry, Value
from . import DefinitionContext, Example, Rule, register

REASON_FORMAT = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
CODE_VALUES = {int(member): member.name for member in JsonRpcErrorCode}
UNRESOLVED_KINDS = ("ref", "expr")

HEADER = "from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode\n"


def _tool(errors: str, extra: str = "") -> str:
    return (
        HEADER
        + f'@tool("get_invoice", errors={errors}{extra})\n'
        + "async def get_invoice(invoice_id: str, ctx):\n    return {}\n"
    )


GOOD_ENTRY = (
    'ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id", '
    'recovery="Call list_invoices to find a valid invoice id.")'
)


def entry_with(**changes: Optional[str]) -> str:
    fields = {
        "reason": '"no_match"',
        "code": "JsonRpcErrorCode.NOT_FOUND",
        "when": '"No invoice has that id"',
        "recovery": '"Call get_invoice again with a valid invoice id."',
    }
    fields.update(changes)
    body = ", ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
    return f"ErrorContract({body})"


def entries(ctx: DefinitionContext) -> Iterator[tuple[Entry, str]]:
    return iter(ctx.contract.entries)


def entry_label(ctx: DefinitionContext, entry: Entry) -> str:
    reason = entry.get("reason")
    if reason is not None and reason.value.kind == "str" and reason.value.value:
        return f"{ctx.label}: entry '{reason.value.value}'"
    index = next((i for i, (e, _) in enumerate(ctx.contract.entries) if e is entry), 0)
    return f"{ctx.label}: entry #{index + 1}"


def field(ctx: DefinitionContext, entry: Entry, name: str) -> Optional[Value]:
    found = entry.get(name)
    if found is None:
        return None
    return ctx.project.resolve_value(found.value)


class ShapeRule(Rule):
    pass


@register
class ErrorContractType(ShapeRule):
    code, name, severity = "FL100", "error-contract-type", "error"
    summary = "`errors=` must be a list or tuple of contract entries."
    why = (
        "The runtime iterates `errors=` to advertise the failure surface and to map each `ctx.fail` "
        "reason to its code; a dict, a string or `None` is no list of modeled failures."
    )
    VALID = (_tool(f"[{GOOD_ENTRY}]"), _tool(f"({GOOD_ENTRY},)"))
    INVALID = (
        Example(_tool('{"reason": "no_match"}'), lines=(2,), message="must be a list"),
        Example(_tool("None"), message="got None"),
        Example(_tool('"no_match"')),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if ctx.contract.wrong_type is not None:
            bad, path = ctx.contract.wrong_type
            yield Finding(
                bad.span,
                f"{ctx.label}: errors= must be a list of ErrorContract entries, got {bad.description}; "
                "wrap the entries in [...]",
                path=path,
            )


@register
class ErrorContractEmpty(ShapeRule):
    code, name, severity = "FL101", "error-contract-empty", "warning"
    summary = "`errors=[]` declares nothing."
    why = (
        "An empty contract claims the tool never fails in a modeled way; an agent then gets no "
        "reason or recovery hint when it does. Declare the real failure modes, or drop the argument."
    )
    fix = "Drops the empty `errors=[]` argument."
    VALID = (_tool(f"[{GOOD_ENTRY}]"),)
    INVALID = (Example(_tool("[]"), lines=(2,), message="declares no failure modes"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if ctx.contract.empty_literal and ctx.definition.errors is not None:
            yield Finding(
                ctx.definition.errors.span,
                f"{ctx.label}: errors=[] declares no failure modes; declare the real ones or drop it",
                fix=fixes.drop_empty_errors_fix(ctx),
            )


@register
class ErrorContractEntryType(ShapeRule):
    code, name, severity = "FL102", "error-contract-entry-type", "error"
    summary = "Each entry must be `ErrorContract(...)` or a dict literal."
    why = "Anything else is rejected when the tool is defined, or carries no reason and code at all."
    VALID = (_tool(f"[{GOOD_ENTRY}]"), _tool('[{"reason": "no_match", "code": -32001, "when": "No invoice", '
                                              '"recovery": "Call list_invoices to find valid ids."}]'))
    INVALID = (
        Example(_tool('["no_match"]'), message="is a string"),
        Example(_tool(f"[{GOOD_ENTRY}, 42]"), message="is a number"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for item, path in ctx.contract.bad_items:
            yield Finding(
                item.span,
                f"{ctx.label}: contract entry is {item.description}; write ErrorContract(reason=..., code=..., "
                "when=..., recovery=...) or a dict literal with those keys",
                path=path,
            )


@register
class ErrorContractCodeType(ShapeRule):
    code, name, severity = "FL103", "error-contract-code-type", "error"
    summary = "`code` is missing, or not a `JsonRpcErrorCode` member or int."
    why = "The code is what the failure surfaces as on the wire; without a real one clients cannot branch."
    VALID = (_tool(f"[{entry_with(code='-32001')}]"),)
    INVALID = (
        Example(_tool(f"[{entry_with(code=None)}]"), message="has no code"),
        Example(_tool(f"[{entry_with(code=repr('NOT_FOUND'))}]"), message="JsonRpcErrorCode"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "code")
            if entry.opaque and value is None:
                continue
            if value is None:
                yield Finding(
                    entry.span,
                    f"{entry_label(ctx, entry)} has no code; add code=JsonRpcErrorCode.<NAME>",
                    path=path,
                )
            elif value.kind not in ("code", "int", *UNRESOLVED_KINDS):
                yield Finding(
                    value.span,
                    f"{entry_label(ctx, entry)}: code must be a JsonRpcErrorCode member such as "
                    f"JsonRpcErrorCode.NOT_FOUND, got {_kind(value)}",
                    path=path,
                )


@register
class ErrorContractCodeUnknown(ShapeRule):
    code, name, severity = "FL104", "error-contract-code-unknown", "error"
    summary = "`code` names no `JsonRpcErrorCode` member."
    why = "An unknown member fails when the module is imported; an unknown int surfaces as nothing a client knows."
    VALID = (_tool(f"[{entry_with(code='JsonRpcErrorCode.CONFLICT')}]"),)
    INVALID = (
        Example(_tool(f"[{entry_with(code='JsonRpcErrorCode.NOPE')}]"), message="NOPE"),
        Example(_tool(f"[{entry_with(code='-1')}]"), message="-1"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "code")
            if value is None:
                continue
            if value.kind == "code" and value.value not in JsonRpcErrorCode.__members__:
                close = difflib.get_close_matches(str(value.value), JsonRpcErrorCode.__members__, n=1)
                hint = f"; did you mean JsonRpcErrorCode.{close[0]}?" if close else ""
                yield Finding(
                    value.span,
                    f"{entry_label(ctx, entry)}: JsonRpcErrorCode has no member {value.value}{hint}",
                    path=path,
                )
            elif value.kind == "int" and value.value not in CODE_VALUES:
                yield Finding(
                    value.span,
                    f"{entry_label(ctx, entry)}: {value.value} is no JsonRpcErrorCode value; "
                    "use a JsonRpcErrorCode member",
                    path=path,
                )


@register
class ErrorContractCodeUnknownError(ShapeRule):
    code, name, severity = "FL105", "error-contract-code-unknown-error", "warning"
    summary = "`code` is `UNKNOWN_ERROR`."
    why = "UNKNOWN_ERROR tells the agent nothing about what went wrong; a specific code lets it react."
    VALID = (_tool(f"[{entry_with()}]"),)
    INVALID = (Example(_tool(f"[{entry_with(code='JsonRpcErrorCode.UNKNOWN_ERROR')}]"), message="UNKNOWN_ERROR"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "code")
            if value is not None and (
                (value.kind == "code" and value.value == "UNKNOWN_ERROR")
                or (value.kind == "int" and CODE_VALUES.get(value.value) == "UNKNOWN_ERROR")  # type: ignore[arg-type]
            ):
                yield Finding(
                    value.span,
                    f"{entry_label(ctx, entry)}: UNKNOWN_ERROR conveys nothing; pick the specific code "
                    "this failure surfaces as (NOT_FOUND, CONFLICT, FORBIDDEN, ...)",
                    path=path,
                )


@register
class ErrorContractReasonRequired(ShapeRule):
    code, name, severity = "FL106", "error-contract-reason-required", "error"
    summary = "`reason` is missing, not a string, or empty."
    why = "The reason is the stable identifier clients and agents switch on; without it a failure cannot be told apart."
    VALID = (_tool(f"[{entry_with()}]"),)
    INVALID = (
        Example(_tool(f"[{entry_with(reason=None)}]"), message="has no reason"),
        Example(_tool(f"[{entry_with(reason=repr(''))}]"), message="empty"),
        Example(_tool(f"[{entry_with(reason='42')}]"), message="a string"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "reason")
            if value is None:
                if not entry.opaque:
                    yield Finding(
                        entry.span, f"{entry_label(ctx, entry)} has no reason; add reason=\"snake_case_id\"", path=path
                    )
            elif value.kind == "str" and not str(value.value).strip():
                yield Finding(value.span, f"{entry_label(ctx, entry)}: reason is empty; name the failure", path=path)
            elif value.kind not in ("str", *UNRESOLVED_KINDS):
                yield Finding(
                    value.span, f"{entry_label(ctx, entry)}: reason must be a string literal, got {_kind(value)}", path=path
                )


@register
class ErrorContractReasonFormat(ShapeRule):
    code, name, severity = "FL107", "error-contract-reason-format", "warning"
    summary = "`reason` is not snake_case."
    why = "Reasons are identifiers clients switch on; one consistent format avoids near-duplicates like `NoMatch`/`no-match`."
    fix = "Renames the reason to its snake_case form, with every `ctx.fail`/`ctx.recovery_for` of it in the handler (unsafe)."
    VALID = (_tool(f"[{entry_with(reason=repr('invoice_not_found_2'))}]"),)
    INVALID = (
        Example(_tool(f"[{entry_with(reason=repr('NoMatch'))}]"), message="'no_match'"),
        Example(_tool(f"[{entry_with(reason=repr('no-match'))}]"), message="snake_case"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "reason")
            if value is not None and value.kind == "str" and str(value.value).strip():
                if not REASON_FORMAT.match(str(value.value)):
                    yield Finding(
                        value.span,
                        f"{ctx.label}: reason '{value.value}' is not snake_case; rename it to "
                        f"'{snake_case(str(value.value))}'",
                        path=path,
                        fix=fixes.rename_reason_fix(ctx, entry, path, snake_case(str(value.value))),
                    )


def snake_case(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text.strip())
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    text = re.sub(r"_+", "_", text)
    if not text or not text[0].isalpha():
        text = "reason_" + text
    return text


@register
class ErrorContractReasonUnique(ShapeRule):
    code, name, severity = "FL108", "error-contract-reason-unique", "error"
    summary = "A reason appears twice in one contract."
    why = "`ctx.fail(reason)` looks the entry up by reason: a repeat makes one of them unreachable and ambiguous to clients."
    VALID = (_tool(f"[{entry_with()}, {entry_with(reason=repr('other'))}]"),)
    INVALID = (Example(_tool(f"[{entry_with()}, {entry_with()}]"), message="more than once"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        seen: set[str] = set()
        for entry, path in entries(ctx):
            value = field(ctx, entry, "reason")
            if value is None or value.kind != "str":
                continue
            if value.value in seen:
                yield Finding(
                    value.span,
                    f"{ctx.label}: reason '{value.value}' is declared more than once; give each failure its own reason",
                    path=path,
                )
            seen.add(str(value.value))


def _text_required(rule: Rule, ctx: DefinitionContext, field_name: str, what: str) -> Iterator[Finding]:
    for entry, path in entries(ctx):
        value = field(ctx, entry, field_name)
        if value is None:
            if not entry.opaque:
                yield Finding(entry.span, f"{entry_label(ctx, entry)} has no {field_name}; add {field_name}=\"{what}\"", path=path)
        elif value.kind not in ("str", "fstring", *UNRESOLVED_KINDS):
            yield Finding(
                value.span, f"{entry_label(ctx, entry)}: {field_name} must be a string, got {_kind(value)}", path=path
            )
        elif rule.code == "FL109" and value.kind == "str" and not str(value.value).strip():
            yield Finding(value.span, f"{entry_label(ctx, entry)}: when is empty; say when it happens", path=path)


@register
class ErrorContractWhenRequired(ShapeRule):
    code, name, severity = "FL109", "error-contract-when-required", "error"
    summary = "`when` is missing, not a string, or empty."
    why = "`when` is the default message of `ctx.fail`: without it the model reads an empty failure."
    VALID = (_tool(f"[{entry_with()}]"),)
    INVALID = (
        Example(_tool(f"[{entry_with(when=None)}]"), message="has no when"),
        Example(_tool(f"[{entry_with(when=repr(' '))}]"), message="empty"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        return _text_required(self, ctx, "when", "what happened")


@register
class ErrorContractRecoveryRequired(ShapeRule):
    code, name, severity = "FL110", "error-contract-recovery-required", "error"
    summary = "`recovery` is missing or not a string."
    why = "The recovery hint is the agent's next move; without it the model guesses, retries blindly or gives up."
    VALID = (_tool(f"[{entry_with()}]"),)
    INVALID = (
        Example(_tool(f"[{entry_with(recovery=None)}]"), message="has no recovery"),
        Example(_tool(f"[{entry_with(recovery='None')}]"), message="must be a string"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        return _text_required(self, ctx, "recovery", "the agent's next step")


def recovery_text(ctx: DefinitionContext, entry: Entry) -> Optional[tuple[str, Value]]:
    value = field(ctx, entry, "recovery")
    if value is None or value.kind != "str":
        return None
    return str(value.value), value


@register
class ErrorContractRecoveryEmpty(ShapeRule):
    code, name, severity = "FL111", "error-contract-recovery-empty", "error"
    summary = "`recovery` is blank."
    why = "A blank hint is no hint: the agent is left without a next step."
    VALID = (_tool(f"[{entry_with()}]"),)
    INVALID = (Example(_tool(f"[{entry_with(recovery=repr('   '))}]"), message="blank"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            found = recovery_text(ctx, entry)
            if found is not None and not found[0].strip():
                yield Finding(
                    found[1].span, f"{entry_label(ctx, entry)}: recovery is blank; tell the agent what to do next", path=path
                )


@register
class ErrorContractRecoveryMinWords(ShapeRule):
    code, name, severity = "FL112", "error-contract-recovery-min-words", "warning"
    summary = "`recovery` has fewer words than `recovery-min-words` (default 5)."
    why = "A hint like 'retry' names no capability; a sentence that names the next tool gives the agent a real move."
    VALID = (_tool(f"[{entry_with()}]"),)
    INVALID = (Example(_tool(f"[{entry_with(recovery=repr('Try again'))}]"), message="2 words"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            found = recovery_text(ctx, entry)
            if found is None or not found[0].strip():
                continue
            words = len(found[0].split())
            if words < ctx.recovery_min_words:
                yield Finding(
                    found[1].span,
                    f"{entry_label(ctx, entry)}: recovery has {words} word{'s' if words != 1 else ''} "
                    f"(at least {ctx.recovery_min_words}); name the tool to call next and how",
                    path=path,
                )


@register
class ErrorContractRetryableType(ShapeRule):
    code, name, severity = "FL113", "error-contract-retryable-type", "warning"
    summary = "`retryable` is present but not a bool."
    why = "`retryable` becomes `data.retryable` of every failure; clients read it as a bool."
    VALID = (_tool(f"[{entry_with(retryable='True')}]"), _tool(f"[{entry_with(retryable='None')}]"))
    INVALID = (Example(_tool(f"[{entry_with(retryable=repr('yes'))}]"), message="True or False"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "retryable")
            if value is not None and value.kind not in ("bool", "none", *UNRESOLVED_KINDS):
                yield Finding(
                    value.span, f"{entry_label(ctx, entry)}: retryable must be True or False, got {_kind(value)}", path=path
                )


@register
class ErrorContractSeverityUnknown(ShapeRule):
    code, name, severity = "FL114", "error-contract-severity-unknown", "error"
    summary = f"`severity` is not one of {', '.join(SEVERITIES)}."
    why = "The severity is the log level of the failure record; the runtime rejects any other value."
    VALID = (_tool(f"[{entry_with(severity=repr('warning'))}]"),)
    INVALID = (Example(_tool(f"[{entry_with(severity=repr('WARN'))}]"), message="'WARN'"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "severity")
            if value is None or value.kind in ("none", *UNRESOLVED_KINDS):
                continue
            if value.kind != "str" or value.value not in SEVERITIES:
                shown = repr(value.value) if value.kind == "str" else _kind(value)
                yield Finding(
                    value.span,
                    f"{entry_label(ctx, entry)}: severity {shown} is not one of {', '.join(SEVERITIES)} (case-sensitive)",
                    path=path,
                )


@register
class ErrorContractThrownByUnknown(ShapeRule):
    code, name, severity = "FL115", "error-contract-thrown-by-unknown", "error"
    summary = "`thrown_by` is present but not `\"service\"`."
    why = "`thrown_by` is a lint-only marker with one meaning; any other value is a typo the runtime rejects."
    VALID = (_tool(f"[{entry_with(thrown_by=repr('service'))}]"),)
    INVALID = (Example(_tool(f"[{entry_with(thrown_by=repr('services'))}]"), message="'service'"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            value = field(ctx, entry, "thrown_by")
            if value is None or value.kind in ("none", *UNRESOLVED_KINDS):
                continue
            if value.kind != "str" or value.value not in THROWN_BY_VALUES:
                yield Finding(
                    value.span,
                    f"{entry_label(ctx, entry)}: thrown_by must be 'service', got "
                    f"{repr(value.value) if value.kind == 'str' else _kind(value)}",
                    path=path,
                )


@register
class ErrorContractFieldUnknown(ShapeRule):
    code, name, severity = "FL116", "error-contract-field-unknown", "error"
    summary = "An entry has a field ErrorContract does not know (a typo such as `recovry=`)."
    why = "An unknown field is rejected when the tool is defined, and the intended field stays unset."
    VALID = (_tool(f"[{entry_with()}]"),)
    INVALID = (
        Example(_tool(f"[{entry_with(recovery=None, recovry=repr('Call get_invoice with a valid id.'))}]"),
                message="did you mean 'recovery'"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        for entry, path in entries(ctx):
            for entry_field in entry.fields:
                if entry_field.name not in CONTRACT_FIELDS:
                    close = difflib.get_close_matches(entry_field.name, CONTRACT_FIELDS, n=1, cutoff=0.6)
                    hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(CONTRACT_FIELDS)})"
                    yield Finding(
                        entry_field.key_span,
                        f"{entry_label(ctx, entry)}: unknown field '{entry_field.name}'{hint}",
                        path=path,
                    )


@register
class PromptErrorContract(ShapeRule):
    code, name, severity = "FL117", "prompt-error-contract", "error"
    summary = "A prompt declares `errors=`."
    why = "Prompts declare no contract: `prompt()` takes no `errors` and the definition fails at import."
    VALID = (HEADER + '@prompt("summarize")\ndef summarize(text: str) -> str:\n    return text\n',)
    INVALID = (
        Example(
            HEADER + f'@prompt("summarize", errors=[{GOOD_ENTRY}])\ndef summarize(text: str) -> str:\n    return text\n',
            lines=(2,),
            message="prompts declare no error contract",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if ctx.definition.kind == "prompt" and ctx.definition.errors_arg_span is not None:
            yield Finding(
                ctx.definition.errors_arg_span,
                f"{ctx.label}: prompts declare no error contract; remove errors= (model failures in the tools it uses)",
            )


@register
class ErrorContractUnresolved(ShapeRule):
    code, name, severity = "FL190", "error-contract-unresolved", "warning"
    summary = "The contract, a field or a reason cannot be resolved statically; the rules that need it were skipped."
    why = (
        "A check that cannot see the value is skipped rather than guessed: this says which, so a silent "
        "pass is never mistaken for a verified contract."
    )
    VALID = (
        HEADER + f"SHARED = [{GOOD_ENTRY}]\n" + '@tool("get_invoice", errors=[*SHARED])\n'
        "async def get_invoice(invoice_id: str, ctx):\n    return {}\n",
    )
    INVALID = (
        Example(_tool("build_errors()"), message="FL200"),
        Example(_tool(f"[*UNKNOWN_THING, {GOOD_ENTRY}]"), message="cannot be resolved"),
        Example(_tool(f"[{entry_with(recovery='make_hint()')}]"), message="recovery"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if ctx.definition.kind == "prompt":
            return
        for what, span, path in ctx.contract.unresolved:
            yield Finding(
                span,
                f"{ctx.label}: {what} cannot be resolved statically, so the handler checks FL200-FL204, FL206 "
                "and FL207 were skipped for this definition; declare the contract as a list literal or a "
                "module-level constant of the project",
                path=path,
            )
        handler_checks = "the handler checks FL200-FL204, FL206 and FL207"
        for entry, path in entries(ctx):
            if entry.opaque:
                hidden = [name for name in ("reason", "code") if entry.get(name) is None]
                also = f", and {handler_checks} for this definition" if hidden else ""
                yield Finding(
                    entry.opaque_span or entry.span,  # the spread (or argument) that hides the fields
                    f"{entry_label(ctx, entry)}: fields passed as {', '.join(entry.opaque)} cannot be checked "
                    f"statically; the missing-field checks were skipped for it{also}; write the fields out",
                    path=path,
                )
            for entry_field in entry.fields:
                if entry_field.name not in CONTRACT_FIELDS:
                    continue
                value = ctx.project.resolve_value(entry_field.value)
                # An f-string recovery is text only known at run time: its checks (FL111, FL112,
                # FL4xx) cannot run. (An f-string reason is FL106's; an f-string ``when`` is text
                # whose only check, "not empty", its literal parts settle.)
                dynamic_recovery = value.kind == "fstring" and entry_field.name == "recovery"
                if value.kind in UNRESOLVED_KINDS or dynamic_recovery:
                    what = f"'{value.value}'" if value.kind == "ref" else str(value.value)
                    also = f" and {handler_checks}" if entry_field.name in ("reason", "code") else ""
                    yield Finding(
                        value.span,
                        f"{entry_label(ctx, entry)}: {entry_field.name} is {what}, which cannot be resolved "
                        f"statically; the {entry_field.name} checks{also} were skipped; use a literal or a "
                        "module-level constant",
                        path=path,
                    )
        if ctx.contract.complete:
            for reached in ctx.reach:
                for site in reached.function.fail_sites:
                    if site.reason is None:
                        yield Finding(
                            site.reason_span or site.span,  # the reason that is not a literal
                            f"{ctx.label}: ctx.{site.method}() is called with a reason that is not a literal; "
                            "error-contract-unthrown (FL202) was skipped for this definition",
                            path=reached.path,
                        )


def _kind(value: Value) -> str:
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
