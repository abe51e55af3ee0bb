"""§5.2 Handler conformance (FL200–FL207) and §5.3 handler body (FL300–FL305).

§5.2 rules compare a resolved contract with what the handler and the project code it calls
actually raise; they run only when the contract resolved (FL205 covers ``ctx.fail`` with no
contract). §5.3 rules look at the handler's own body, nested functions included, contract or not.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from mcp_fusion import BASELINE_CODES, FACTORY_CODES, JsonRpcErrorCode

from .. import fixes
from ..diagnostics import Finding, Fix
from ..model import Entry, FailSite, RaiseSite, Span, Value
from . import DefinitionContext, Example, Rule, register
from .contract_shape import CODE_VALUES, UNRESOLVED_KINDS, field

BASELINE = frozenset(code.name for code in BASELINE_CODES)
FACTORY_FOR_CODE = {code.name: name for name, code in FACTORY_CODES.items()}
CODED_RAISES = ("mcp_error", "factory", "tool_error")

HEADER = (
    "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context, McpError, not_found, conflict\n"
)


def _tool(body: str, errors: str = "ENTRIES", params: str = "invoice_id: str, ctx: Context") -> str:
    """A one-tool module for the examples; ``body`` is the handler body (4-space indented lines)."""
    head = HEADER + (
        'ENTRIES = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice", '
        'recovery="Call list_invoices to find a valid id.")]\n'
    )
    errors_arg = f", errors={errors}" if errors else ""
    return head + f'@tool("get_invoice"{errors_arg})\nasync def get_invoice({params}):\n' + body


@dataclass
class Declared:
    reason: str
    code: Optional[str]  # member name
    thrown_by: Optional[str]
    entry: Entry
    reason_value: Value
    path: str


def declared(ctx: DefinitionContext) -> list[Declared]:
    out = []
    for entry, path in ctx.contract.entries:
        reason = field(ctx, entry, "reason")
        if reason is None or reason.kind != "str":
            continue
        code = field(ctx, entry, "code")
        code_name = None
        if code is not None and code.kind == "code":
            code_name = str(code.value)
        elif code is not None and code.kind == "int":
            code_name = CODE_VALUES.get(code.value)  # type: ignore[arg-type]
        thrown_by = field(ctx, entry, "thrown_by")
        out.append(
            Declared(
                str(reason.value),
                code_name,
                str(thrown_by.value) if thrown_by is not None and thrown_by.kind == "str" else None,
                entry,
                reason,
                path,
            )
        )
    return out


def fail_sites(ctx: DefinitionContext, depth: Optional[int] = None) -> Iterator[tuple[FailSite, str]]:
    for reached in ctx.reach:
        if depth is None or reached.depth == depth:
            for site in reached.function.fail_sites:
                yield site, reached.path


def raises(ctx: DefinitionContext, depth: Optional[int] = None) -> Iterator[tuple[RaiseSite, str]]:
    for reached in ctx.reach:
        if depth is None or reached.depth == depth:
            for site in reached.function.raises:
                yield site, reached.path


def named_reasons(ctx: DefinitionContext) -> set[str]:
    """Reasons something in reach names: literal ``ctx.fail``/``recovery_for``, or a raise's data."""
    named = {site.reason for site, _ in fail_sites(ctx) if site.reason is not None}
    named |= {site.data_reason for site, _ in raises(ctx) if site.data_reason is not None}
    return named


def reasons_and_codes_known(ctx: DefinitionContext) -> bool:
    """Every entry's reason and code are statically known (or plainly wrong, which FL1xx reports).
    ``reason=REASONS.X`` or ``**COMMON`` hide them: comparing the handler with such a contract would
    guess, so the §5.2 rules are skipped and FL190 says why."""
    for entry, _ in ctx.contract.entries:
        for name in ("reason", "code"):
            value = field(ctx, entry, name)
            if (value is None and entry.opaque) or (value is not None and value.kind in UNRESOLVED_KINDS):
                return False
    return True


class HandlerRule(Rule):
    needs_contract = True  # §5.2 scope: only definitions whose contract resolved

    def applies(self, ctx: DefinitionContext) -> bool:
        if ctx.handler is None:
            return False
        if not self.needs_contract:
            return True
        return ctx.contract.complete and reasons_and_codes_known(ctx)


@register
class ErrorContractConformance(HandlerRule):
    code, name, severity = "FL200", "error-contract-conformance", "warning"
    summary = "The handler, or code it calls, raises a non-baseline code the contract does not declare."
    why = (
        "Clients and agents plan around the declared failure surface; an undeclared code is a failure "
        "nobody prepared for, with no reason and no recovery hint."
    )
    VALID = (
        _tool("    raise ctx.fail('no_match')\n"),
        # Baseline codes (SERVICE_UNAVAILABLE, TIMEOUT, ...) never need declaring.
        _tool("    from mcp_fusion import service_unavailable\n    raise service_unavailable('Upstream down')\n"),
    )
    INVALID = (
        Example(_tool("    raise conflict('Invoice is locked')\n"), lines=(5,), message="CONFLICT"),
        Example(
            _tool("    helper()\n") + "def helper():\n    raise McpError(JsonRpcErrorCode.FORBIDDEN, 'no')\n",
            lines=(7,),
            message="FORBIDDEN",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        codes = {d.code for d in declared(ctx) if d.code is not None}
        for site, path in raises(ctx):
            if site.kind in CODED_RAISES and site.code and site.code not in BASELINE and site.code not in codes:
                listed = ", ".join(sorted(codes)) or "none"
                yield Finding(
                    site.span,
                    f"{ctx.label}: raises {site.code}, which its contract does not declare (declared: {listed}); "
                    f"declare an ErrorContract with code=JsonRpcErrorCode.{site.code} or raise a declared failure",
                    path=path,
                )


@register
class ErrorContractPreferFail(HandlerRule):
    code, name, severity = "FL201", "error-contract-prefer-fail", "warning"
    summary = "The handler raises a declared code directly instead of `raise ctx.fail(<reason>)`."
    why = (
        "`ctx.fail` stamps the reason, the declared message and `retryable`, and the boundary adds the "
        "recovery hint; a bare factory carries none of that, so the agent gets a code without a next step."
    )
    fix = "Rewrites the raise to `raise ctx.fail(\"<reason>\", <message>)` when exactly one reason matches (unsafe: it changes `data`)."
    VALID = (_tool("    raise ctx.fail('no_match', 'No such invoice')\n"),)
    INVALID = (
        Example(
            _tool("    raise not_found('No such invoice')\n"),
            lines=(5,),
            message="'no_match'",
            fixed=_tool("    raise ctx.fail(\"no_match\", 'No such invoice')\n"),
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        entries = declared(ctx)
        for site, path in raises(ctx, depth=0):
            if site.kind not in ("mcp_error", "factory") or not site.code or site.code in BASELINE:
                continue
            matching = [d.reason for d in entries if d.code == site.code]
            if not matching:
                continue
            quoted = ", ".join(f"'{r}'" for r in matching)
            fix = None
            if len(matching) == 1 and ctx.handler is not None and ctx.handler.context_param:
                fix = self._fix(ctx, site, path, matching[0], ctx.handler.context_param)
            yield Finding(
                site.span,
                f"{ctx.label}: raises {site.code} directly; raise ctx.fail({quoted if len(matching) == 1 else '<reason>'}) "
                f"instead so the reason and recovery reach the agent (declared with this code: {quoted})",
                fix=fix,
                path=path,
            )

    @staticmethod
    def _fix(ctx: DefinitionContext, site: RaiseSite, path: str, reason: str, ctx_name: str) -> Optional[Fix]:
        return fixes.prefer_fail_fix(ctx.source(path), site, reason, ctx_name)


@register
class ErrorContractUnthrown(HandlerRule):
    code, name, severity = "FL202", "error-contract-unthrown", "warning"
    summary = "A declared reason that nothing in the handler's reach raises or names."
    why = (
        "A contract that advertises failures the code never produces misleads clients and hides the "
        "failures it does produce. Mark reasons raised by a service layer with `thrown_by=\"service\"`."
    )
    VALID = (
        _tool("    raise ctx.fail('no_match')\n"),
        _tool(
            "    if invoice_id:\n        raise ctx.fail('no_match')\n    lookup()\n",
            errors="ENTRIES + [ErrorContract(reason='locked', code=JsonRpcErrorCode.CONFLICT, when='Locked', "
            "recovery='Wait a minute then call get_invoice again.')]",
        )
        + "def lookup():\n    raise conflict('locked', {'reason': 'locked'})\n",
    )
    INVALID = (
        Example(
            _tool(
                "    raise ctx.fail('no_match')\n",
                errors="ENTRIES + [ErrorContract(reason='locked', code=JsonRpcErrorCode.CONFLICT, when='Locked', "
                "recovery='Wait a minute then call get_invoice again.')]",
            ),
            lines=(3,),
            message="'locked'",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        sites = [site for site, _ in fail_sites(ctx) if site.method == "fail"]
        if not any(site.reason is not None for site in sites):
            return  # no literal ctx.fail: nothing to compare against
        if any(site.reason is None for site, _ in fail_sites(ctx)):
            return  # a dynamic reason: FL190 says so instead of guessing
        named = named_reasons(ctx)
        for entry in declared(ctx):
            if entry.thrown_by == "service" or entry.reason in named:
                continue
            yield Finding(
                entry.reason_value.span,
                f"{ctx.label}: reason '{entry.reason}' is declared but nothing raises it; raise "
                f"ctx.fail('{entry.reason}') where it happens, mark it thrown_by=\"service\" if a service "
                "layer raises it, or remove it",
                path=entry.path,
            )


@register
class ErrorContractReasonUndeclared(HandlerRule):
    code, name, severity = "FL203", "error-contract-reason-undeclared", "error"
    summary = "`ctx.fail`/`ctx.recovery_for` names a reason the contract does not declare."
    why = "At runtime an undeclared reason becomes an INTERNAL_ERROR: the modeled failure is lost."
    VALID = (_tool("    raise ctx.fail('no_match')\n"),)
    INVALID = (Example(_tool("    raise ctx.fail('no_such_invoice')\n"), lines=(5,), message="'no_such_invoice'"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        reasons = [d.reason for d in declared(ctx)]
        for site, path in fail_sites(ctx):
            if site.reason is not None and site.reason not in reasons:
                listed = ", ".join(f"'{r}'" for r in reasons) or "none"
                yield Finding(
                    site.span,
                    f"{ctx.label}: ctx.{site.method}('{site.reason}') names a reason the contract does not "
                    f"declare (at runtime an INTERNAL_ERROR); declare it or use one of: {listed}",
                    path=path,
                )


@register
class FailNotRaised(HandlerRule):
    code, name, severity = "FL204", "fail-not-raised", "error"
    summary = "The result of `ctx.fail(...)` is discarded: nothing is raised."
    why = "`ctx.fail` returns the error so the handler can `raise` it; called alone, the tool carries on as if nothing failed."
    fix = "Inserts `raise ` before the call."
    VALID = (_tool("    raise ctx.fail('no_match')\n"), _tool("    err = ctx.fail('no_match')\n    raise err\n"))
    INVALID = (
        Example(
            _tool("    ctx.fail('no_match')\n"),
            lines=(5,),
            message="raise ctx.fail",
            fixed=_tool("    raise ctx.fail('no_match')\n"),
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        for site, path in fail_sites(ctx):
            if site.method == "fail" and site.usage == "discarded":
                yield Finding(
                    site.span,
                    f"{ctx.label}: the error ctx.fail() returns is discarded, so nothing fails; write raise ctx.fail(...)",
                    fix=fixes.raise_fail_fix(ctx.source(path), site),
                    path=path,
                )


@register
class FailWithoutContract(HandlerRule):
    code, name, severity = "FL205", "fail-without-contract", "error"
    summary = "`ctx.fail(...)` in a handler whose definition declares no contract."
    why = "With no contract, every `ctx.fail` reason is undeclared and becomes an INTERNAL_ERROR at runtime."
    needs_contract = False
    VALID = (_tool("    raise ctx.fail('no_match')\n"),)
    INVALID = (Example(_tool("    raise ctx.fail('no_match')\n", errors=""), lines=(5,), message="declares no contract"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if ctx.handler is None or ctx.contract.declared:
            return
        for site, path in fail_sites(ctx):
            if site.method == "fail":
                yield Finding(
                    site.span,
                    f"{ctx.label}: ctx.fail() in a definition that declares no contract (at runtime an "
                    "INTERNAL_ERROR); declare errors=[ErrorContract(...)] on the definition",
                    path=path,
                )


@register
class ServiceReasonCodeMismatch(HandlerRule):
    code, name, severity = "FL206", "service-reason-code-mismatch", "warning"
    summary = "A raise carries a declared reason in its data, with a different code than the contract declares."
    why = "The recovery hint is filled by reason; a mismatched code tells the client one thing and the hint another."
    VALID = (
        _tool("    lookup()\n", errors="ENTRIES") + "def lookup():\n    raise not_found('gone', {'reason': 'no_match'})\n",
    )
    INVALID = (
        Example(
            _tool("    lookup()\n") + "def lookup():\n    raise conflict('gone', data={'reason': 'no_match'})\n",
            lines=(7,),
            message="NOT_FOUND",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        codes = {d.reason: d.code for d in declared(ctx)}
        for site, path in raises(ctx):
            if site.data_reason in codes and site.code and codes[site.data_reason] and site.code != codes[site.data_reason]:
                yield Finding(
                    site.span,
                    f"{ctx.label}: raises reason '{site.data_reason}' as {site.code}, but the contract declares it "
                    f"as {codes[site.data_reason]}; raise it with code {codes[site.data_reason]} or fix the contract",
                    path=path,
                )


@register
class ServiceReasonUnraised(HandlerRule):
    code, name, severity = "FL207", "service-reason-unraised", "warning"
    default_enabled = False
    summary = "An entry marked `thrown_by=\"service\"` that no reachable code raises (opt-in)."
    why = (
        "`thrown_by=\"service\"` exempts a reason from FL202 on trust; this verifies the trust by following "
        "the handler's calls. Opt-in: it needs every service in view."
    )
    VALID = (
        _tool("    lookup()\n", errors="[ErrorContract(reason='gone', code=JsonRpcErrorCode.NOT_FOUND, when='Gone', "
              "recovery='Call list_invoices to find a valid id.', thrown_by='service')]")
        + "def lookup():\n    raise not_found('gone', {'reason': 'gone'})\n",
    )
    INVALID = (
        Example(
            _tool("    lookup()\n", errors="[ErrorContract(reason='gone', code=JsonRpcErrorCode.NOT_FOUND, when='Gone', "
                  "recovery='Call list_invoices to find a valid id.', thrown_by='service')]")
            + "def lookup():\n    return None\n",
            lines=(3,),
            message="'gone'",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        named = named_reasons(ctx)
        for entry in declared(ctx):
            if entry.thrown_by == "service" and entry.reason not in named:
                yield Finding(
                    entry.reason_value.span,
                    f"{ctx.label}: reason '{entry.reason}' is marked thrown_by=\"service\" but no code the handler "
                    f"reaches raises it; raise it with data={{'reason': '{entry.reason}'}} in the service, or drop the entry",
                    path=entry.path,
                )


# ----- §5.3 handler body ------------------------------------------------------------------------


class BodyRule(HandlerRule):
    needs_contract = False


@register
class PreferMcpErrorInHandler(BodyRule):
    code, name, severity = "FL300", "prefer-mcp-error-in-handler", "warning"
    summary = "The handler raises a plain builtin exception (`ValueError`, `KeyError`, `RuntimeError`, ...)."
    why = (
        "The boundary masks any non-McpError as INTERNAL_ERROR so internals do not leak: the model learns "
        "nothing. Programming-error guards (`TypeError`, `AssertionError`, `NotImplementedError`) are fine."
    )
    VALID = (
        _tool("    raise ctx.fail('no_match')\n"),
        _tool("    raise NotImplementedError\n"),
        _tool("    try:\n        pass\n    except ValueError as e:\n        raise\n"),
    )
    INVALID = (Example(_tool("    raise ValueError('bad invoice id')\n"), lines=(5,), message="ValueError"),)

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        for site, path in raises(ctx, depth=0):
            if site.kind == "builtin":
                yield Finding(
                    site.span,
                    f"{ctx.label}: raise {site.exc_name} reaches the model as a masked INTERNAL_ERROR; raise "
                    "ctx.fail(<reason>) or an error factory (invalid_params, not_found, ...) instead",
                    path=path,
                )


@register
class PreferErrorFactory(BodyRule):
    code, name, severity = "FL301", "prefer-error-factory", "warning"
    summary = "`McpError(JsonRpcErrorCode.X, ...)` where a factory for X exists."
    why = "The factory says the same in fewer words, and keeps the code and its meaning in one place."
    fix = "Rewrites the call to the factory, adding its import in the file's own style."
    VALID = (_tool("    raise not_found('No such invoice')\n"),)
    INVALID = (
        Example(
            _tool("    raise McpError(JsonRpcErrorCode.NOT_FOUND, 'No such invoice')\n"),
            lines=(5,),
            message="not_found(",
            fixed=_tool("    raise not_found('No such invoice')\n"),
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        for reached in ctx.reach:
            if reached.depth != 0:
                continue
            for made in reached.function.constructions:
                factory = FACTORY_FOR_CODE[made.code]
                yield Finding(
                    made.span,
                    f"{ctx.label}: McpError(JsonRpcErrorCode.{made.code}, ...) is {factory}(...); use the factory",
                    fix=fixes.factory_fix(ctx.files.get(reached.path), made, factory, ctx.runtime_modules,
                                          ctx.source(reached.path)),
                    path=reached.path,
                )


@register
class PreserveCauseOnRethrow(BodyRule):
    code, name, severity = "FL302", "preserve-cause-on-rethrow", "warning"
    summary = "Inside `except E as e:`, an McpError is raised without `from e` or `cause=e`."
    why = "The cause is what the traceback in the server log shows; dropping it hides the real failure from whoever debugs it."
    fix = "Appends `from <e>` to the raise."
    VALID = (
        _tool("    try:\n        pass\n    except KeyError as e:\n        raise ctx.fail('no_match') from e\n"),
        _tool("    try:\n        pass\n    except KeyError as e:\n        raise ctx.fail('no_match', cause=e)\n"),
    )
    INVALID = (
        Example(
            _tool("    try:\n        pass\n    except KeyError as e:\n        raise ctx.fail('no_match')\n"),
            lines=(8,),
            message="from e",
            fixed=_tool("    try:\n        pass\n    except KeyError as e:\n        raise ctx.fail('no_match') from e\n"),
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        for site, path in raises(ctx, depth=0):
            if site.in_except and site.kind in ("mcp_error", "factory", "fail") and not site.has_cause:
                yield Finding(
                    site.span,
                    f"{ctx.label}: raising inside 'except ... as {site.in_except}' drops the cause; "
                    f"add 'from {site.in_except}' (or cause={site.in_except})",
                    fix=fixes.add_cause_fix(ctx.source(path), site),
                    path=path,
                )


@register
class NoStringifyUpstreamError(BodyRule):
    code, name, severity = "FL303", "no-stringify-upstream-error", "warning"
    summary = "A raised message built with `json.dumps(...)`, `traceback.format_exc()` or `repr(<caught>)`."
    why = "The message goes to the model and the client: stack traces and raw upstream payloads leak internals and secrets."
    VALID = (_tool("    try:\n        pass\n    except KeyError as e:\n        raise ctx.fail('no_match', 'No such invoice') from e\n"),)
    INVALID = (
        Example(
            "import traceback\n"
            + _tool("    try:\n        pass\n    except KeyError as e:\n"
                    "        raise ctx.fail('no_match', traceback.format_exc()) from e\n"),
            lines=(9,),
            message="traceback.format_exc()",
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        for site, path in raises(ctx, depth=0):
            if site.leaks:
                yield Finding(
                    site.span,
                    f"{ctx.label}: the raised message is built from {', '.join(site.leaks)}, which leaks internals "
                    "to the client; say what failed in plain words and log the details",
                    path=path,
                )


@register
class SwallowedCancellation(BodyRule):
    code, name, severity = "FL304", "swallowed-cancellation", "warning"
    summary = "An `except` that catches cancellation (bare, `BaseException`, `CancelledError`) and does not re-raise."
    why = "A swallowed cancellation keeps a cancelled call running and answering; the client asked it to stop."
    VALID = (_tool("    try:\n        pass\n    except asyncio.CancelledError:\n        raise\n"),)
    INVALID = (
        Example("import asyncio\n" + _tool("    try:\n        pass\n    except asyncio.CancelledError:\n        pass\n"),
                lines=(8,), message="CancelledError"),
        Example(_tool("    try:\n        pass\n    except:\n        return None\n"), lines=(7,), message="everything"),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        for reached in ctx.reach:
            if reached.depth != 0:
                continue
            for clause in reached.function.excepts:
                if clause.reraises:
                    continue
                span = clause.span
                end = clause.type_span
                reported = Span(
                    span.line, span.col,
                    end.end_line if end else span.line, end.end_col if end else span.col + len("except"),
                    span.start, end.end if end else span.start + len("except"), span.stmt_line,
                )  # fmt: skip
                caught = "everything (cancellation included)" if clause.catches == "bare except" else clause.catches
                yield Finding(
                    reported,
                    f"{ctx.label}: this except clause catches {caught} and does not re-raise, so "
                    "cancellation is swallowed; catch Exception instead, or re-raise",
                    path=reached.path,
                )


@register
class ProtocolErrorInTool(BodyRule):
    code, name, severity = "FL305", "protocol-error-in-tool", "warning"
    summary = "A tool raises the SDK's `mcp.MCPError`, a JSON-RPC protocol error."
    why = "Protocol errors answer the JSON-RPC request itself: the model never sees them, and never recovers."
    VALID = (_tool("    raise ctx.fail('no_match')\n"),)
    INVALID = (
        Example(
            "from mcp import MCPError\n" + _tool("    raise MCPError(-32001, 'gone')\n"), lines=(6,), message="MCPError"
        ),
    )

    def check(self, ctx: DefinitionContext) -> Iterable[Finding]:
        if not self.applies(ctx):
            return
        for site, path in raises(ctx, depth=0):
            if site.kind == "protocol":
                yield Finding(
                    site.span,
                    f"{ctx.label}: raises the SDK's MCPError, a JSON-RPC protocol error the model never sees; "
                    "raise ctx.fail(<reason>) or an error factory instead",
                    path=path,
                )
