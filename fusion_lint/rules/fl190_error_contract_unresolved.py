"""FL190 error-contract-unresolved: what cannot be resolved statically, and which checks it skipped."""

from __future__ import annotations

from collections.abc import Iterable

from fusion_lint.project.view import UNRESOLVED_KINDS, ProjectView, ResolvedDefinition, ResolvedEntry
from fusion_lint.rules import Example, Finding, Rule, register
from fusion_lint.rules._shared import SHAPE_PRELUDE, entry_label
from mcp_fusion import CONTRACT_FIELDS

HANDLER_CHECKS = "the handler checks FL200-FL204, FL206 and FL207"


@register
class ErrorContractUnresolved(Rule):
    code, name, severity = "FL190", "error-contract-unresolved", "warning"
    summary = (
        "The contract, a field, a reason or the handler cannot be resolved statically; the rules that need it "
        "were skipped."
    )
    why = (
        "A check that cannot see the value is skipped rather than guessed: this says which, so a silent "
        "pass is never mistaken for a verified contract."
    )
    limits = (
        "Resolved statically: list and tuple literals, `A + B`, `[*SHARED, ...]`, module-level constants of the "
        "project (imported or not), class attributes, dict literals, `ErrorContract(**BASE, ...)` with `BASE` a "
        "module-level dict literal; fields and reasons given as module-level string constants or enum members "
        "(`Reason.NO_MATCH`, `Reason.NO_MATCH.value`); `JsonRpcErrorCode(-32001)`. Handlers: a function, a "
        "method of a module-level instance (`svc.handle`), `self.handle`, `functools.partial(fn, ...)`, with "
        "methods looked up through the class's bases in MRO order. Anything computed at run time is reported "
        "here; the kinds left are listed in docs/precision.md."
    )
    prelude = SHAPE_PRELUDE
    VALID = (
        """
SHARED = [
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery="Call list_invoices to find a valid invoice id."),
]

@tool("get_invoice", errors=[*SHARED])
async def get_invoice(invoice_id: str):
    return {}
""",
        # Enum members, class attributes, spreads of dict literals, codes built from their value and
        # partial handlers all resolve.
        """
import functools
from enum import StrEnum

class Reason(StrEnum):
    LOCKED = "locked"

COMMON = {"when": "The invoice is locked", "recovery": "Wait a minute, then call get_invoice again."}

class Errors:
    LOCKED = ErrorContract(**COMMON, reason=Reason.LOCKED, code=JsonRpcErrorCode(-32002))
    ALL = [LOCKED]

async def lookup(invoice_id: str, region: str):
    return {}

tool("get_invoice", errors=Errors.ALL)(functools.partial(lookup, region="eu"))
""",
    )
    INVALID = (
        Example("""
@tool("get_invoice", errors=build_errors())  # error: FL190 "FL200"
async def get_invoice(invoice_id: str):
    return {}
"""),
        Example("""
tool("get_invoice")(make_handler())  # error: FL190 "a call to make_handler()"
"""),
        Example("""
@tool("get_invoice", errors=[
    *UNKNOWN_THING,  # error: FL190 "cannot be resolved"
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id",
                  recovery=make_hint()),  # error: FL190 "recovery"
])
async def get_invoice(invoice_id: str):
    return {}
"""),
    )

    def check_definition(self, definition: ResolvedDefinition, project: ProjectView) -> Iterable[Finding]:
        if definition.handler is None:
            written = definition.definition
            what = written.handler_unresolved or f"'{written.handler_ref or written.handler}'"
            yield Finding(
                written.span,
                f"the handler ({what}) cannot be resolved to a function of the project, so the checks of what it "
                "raises and returns (FL2xx, FL3xx) were skipped for this definition; register a function (or a "
                "method of a module-level instance) defined in the linted project",
                definition.path,
            )
        if definition.kind == "prompt":
            return
        contract = definition.contract
        for what, span, path in contract.unresolved:
            yield Finding(
                span,
                f"{what} cannot be resolved statically, so {HANDLER_CHECKS} were skipped for this definition; "
                "declare the contract as a list literal or a module-level constant of the project",
                path,
            )
        if contract.complete:
            for reached in definition.reach:
                for site in reached.function.fail_sites:
                    if site.reason is None:
                        yield Finding(
                            site.reason_span or site.span,  # the reason that is not a literal
                            f"ctx.{site.method}() is called with a reason that is not a literal; "
                            "error-contract-unthrown (FL202) was skipped for this definition",
                            reached.path,
                        )

    def check_entry(self, entry: ResolvedEntry, project: ProjectView) -> Iterable[Finding]:
        if entry.entry.opaque:
            hidden = [name for name in ("reason", "code") if entry.entry.get(name) is None]
            also = f", and {HANDLER_CHECKS} for this definition" if hidden else ""
            yield Finding(
                entry.entry.opaque_span or entry.entry.span,  # the spread (or argument) that hides the fields
                f"{entry_label(entry)}: fields passed as {', '.join(entry.entry.opaque)} cannot be checked "
                f"statically; the missing-field checks were skipped for it{also}; write the fields out",
                entry.path,
            )
        for entry_field, value in entry.fields:
            if entry_field.name not in CONTRACT_FIELDS:
                continue
            # An f-string recovery is text only known at run time: its checks (FL111, FL112, FL4xx)
            # cannot run. (An f-string reason is FL106's; an f-string ``when`` is text whose only
            # check, "not empty", its literal parts settle.)
            dynamic_recovery = value.kind == "fstring" and entry_field.name == "recovery"
            if value.kind in UNRESOLVED_KINDS or dynamic_recovery:
                what = f"'{value.value}'" if value.kind == "ref" else str(value.value)
                also = f" and {HANDLER_CHECKS}" if entry_field.name in ("reason", "code") else ""
                yield Finding(
                    value.span,
                    f"{entry_label(entry)}: {entry_field.name} is {what}, which cannot be resolved statically; the "
                    f"{entry_field.name} checks{also} were skipped; use a literal or a module-level constant",
                    entry.path,
                )
