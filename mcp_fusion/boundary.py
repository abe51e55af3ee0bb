"""The one failure boundary every tool call, resource read and prompt render runs inside (DESIGN §3.5).

It turns whatever a handler does into an :data:`Outcome` and writes the one log record of a
failure. It knows nothing about the SDK or any framework (``anyio`` is imported only to call a
handler), so ``FusionServer`` and the framework adapters share it:

* ``McpError`` (``ctx.fail``, a factory, a service): when ``data["reason"]`` names a declared entry,
  the entry's recovery (and ``retryable``) fill what the throw site left unset; logged at the
  entry's ``severity`` (default error). An ``INTERNAL_ERROR`` always carries a recovery.
* ``ctx.fail`` of an undeclared reason: a masked failure for the model, the declared reasons in
  the log.
* ``tool_error(...)`` returned or raised: rendered as built (a ``warning`` is the success path).
* Any other ``BaseException`` (``SystemExit`` from argparse, ``GeneratorExit``, exception groups,
  the handler's own ``CancelledError``): ``INTERNAL_ERROR`` with a masked message; a bounded
  traceback goes to the log only.
* Cancellation by the client (or the server shutting down): logged at info as
  ``REQUEST_CANCELLED`` and re-raised, never swallowed. The operator's Ctrl-C (a ``KeyboardInterrupt``
  the SIGINT signal delivered) is re-raised; a ``KeyboardInterrupt`` the handler's own code raised
  (``raise KeyboardInterrupt``, or a subclass of it) is answered like any other exception (DESIGN §13.4).
* Arguments that do not validate: the handler never runs; a ``<validation_error>``, logged at notice.

Every record's text is bounded (DESIGN §3.6): a hostile caller or handler cannot blow up a log.
"""

from __future__ import annotations

import asyncio
import builtins
import dis
import functools
import inspect
import logging
import math
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from .bounding import bound_text, clean_text, render_bounded
from .builder import ToolErrorBuilder
from .context import NOTICE, Context, active_contract, python_log_level
from .contract import ErrorContract
from .envelope import ToolErrorEnvelope
from .errors import JsonRpcErrorCode, McpError, UndeclaredReasonError
from .signature import bind_context
from .validation import ValidationEnvelope, validation_envelope

#: Logger of the one record written per failure (``Error in tool:<name> ...``).
failure_logger = logging.getLogger("mcp_fusion.boundary")

#: Reason of a masked unexpected exception; clients can switch on it like any other.
UNEXPECTED_REASON = "unexpected_error"
UNEXPECTED_RECOVERY = (
    "Do not blindly retry: this failure was unexpected and the same call is likely to fail the same way. "
    "Try a different approach, or report the problem to the server's maintainers."
)
#: The recovery of an ``INTERNAL_ERROR`` whose throw site gave none.
INTERNAL_RECOVERY = (
    "Do not blindly retry: the same call is likely to fail the same way. "
    "Try a different approach, or report the problem to the server's maintainers."
)
#: A logged traceback keeps its head and its tail within this many characters.
MAX_TRACEBACK_CHARS = 8192

#: Contract coverage (``pytest --contract-coverage``, issue 22) listens here. Each observer is called
#: once per failure or warning the boundary builds from a declared outcome — an ``McpError``, a
#: ``tool_error(...)``, an undeclared ``fail()`` — with the target, the envelope the model reads and
#: what was raised (``None`` for a returned ``tool_error``). Empty unless a test session asks.
FailureObserver = Callable[["BoundaryTarget", ToolErrorEnvelope, BaseException | None], None]
failure_observers: list[FailureObserver] = []


class BoundaryTarget(Protocol):
    """What the boundary needs to know about what it runs: a ``Definition``, or a framework adapter's."""

    kind: str
    name: str

    @property
    def owner(self) -> str: ...


@dataclass(frozen=True)
class HandlerSuccess:
    """The handler returned normally; ``warning`` is a ``tool_error(...).severity("warning")``."""

    value: Any
    warning: ToolErrorEnvelope | None = None
    has_value: bool = True


Failure = ToolErrorEnvelope | ValidationEnvelope
Outcome = HandlerSuccess | ToolErrorEnvelope | ValidationEnvelope


def unexpected_failure(target: BoundaryTarget) -> ToolErrorEnvelope:
    """What the client reads instead of an unexpected exception's text (which may hold internals)."""
    return ToolErrorEnvelope(
        code=JsonRpcErrorCode.INTERNAL_ERROR,
        message=f"{target.owner} failed unexpectedly; the details were logged on the server",
        recovery=UNEXPECTED_RECOVERY,
        details={"reason": UNEXPECTED_REASON, "retryable": False},
    )


def contract_defaults(entry: ErrorContract | None, code: Any) -> dict[str, Any]:
    """What the declared entry fills in a failure whose throw site left it unset (recovery, retryable).

    An ``INTERNAL_ERROR`` is never left without a recovery: "do not blindly retry".
    """
    recovery = entry.recovery if entry is not None else None
    if recovery is None and code is JsonRpcErrorCode.INTERNAL_ERROR:
        recovery = INTERNAL_RECOVERY
    return {"default_recovery": recovery, "default_retryable": entry.retryable if entry is not None else None}


async def run_handler(
    definition: Any,
    arguments: Mapping[str, Any] | None,
    request_context: Any = None,
) -> Outcome:
    """Validate ``arguments``, call the handler with its ``Context``, and classify what happened."""
    arguments = dict(arguments) if isinstance(arguments, Mapping) else {}
    signature = definition.signature
    try:
        validated = signature.arguments_model.model_validate(arguments)
    except ValidationError as exc:
        envelope = validation_envelope(definition.name, exc, signature.input_schema, kind=definition.kind)
        log_failure(definition, NOTICE, envelope.code_name, envelope.reason, envelope.message, arguments)
        return envelope

    context = _context_for(definition, request_context)
    args, kwargs = signature.call_arguments(validated)
    bind_context(signature, kwargs, context)
    token = active_contract.set(context)  # module-level fail()/recovery_for() work in FusionServer handlers too
    try:
        result = await _call(definition, signature.is_async, args, kwargs)
    except BaseException as exc:  # noqa: BLE001 - the boundary owns every outcome (DESIGN §3.5)
        return outcome_of_exception(definition, exc, arguments, context)
    finally:
        active_contract.reset(token)
    return outcome_of_return(definition, result, arguments)


async def _call(definition: Any, is_async: bool, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if is_async:
        result = await definition.handler(*args, **kwargs)
    else:
        import anyio.to_thread

        # A sync handler may block (I/O, CPU); a worker thread keeps the event loop serving.
        result = await anyio.to_thread.run_sync(functools.partial(definition.handler, *args, **kwargs))
    if inspect.isawaitable(result):
        result = await result
    return result


def outcome_of_return(target: BoundaryTarget, result: Any, arguments: Mapping[str, Any]) -> Outcome:
    """A handler's return value: a returned ``tool_error(...)`` is a failure (or a warning)."""
    if isinstance(result, ToolErrorBuilder):
        return _from_builder(target, result, arguments)
    return HandlerSuccess(result)


def outcome_of_exception(
    target: BoundaryTarget, exc: BaseException, arguments: Mapping[str, Any], context: Context | None = None
) -> Outcome:
    """What the model reads for anything a handler raised.

    Re-raises ``KeyboardInterrupt`` (the operator's Ctrl-C) and a cancellation that is really in
    effect (the client cancelled, or the server is shutting down), after logging the latter.
    """
    # Ctrl-C and cancellation are BaseExceptions (an ExceptionGroup holds only Exceptions): the
    # common failures skip these checks.
    if not isinstance(exc, Exception) and _contains_operator_interrupt(exc):
        raise exc
    if not isinstance(exc, Exception) and _is_cancellation(exc) and cancellation_in_effect():
        by_client = context is not None and context.cancel_requested
        log_failure(
            target,
            logging.INFO,
            JsonRpcErrorCode.REQUEST_CANCELLED.name,
            None,
            "Request cancelled by the client"
            if by_client
            else "Request cancelled without a cancel notification from the client (the server is stopping, or the "
            "caller went away)",
            arguments,
        )
        cancelled = _cancelled_class()
        if isinstance(exc, cancelled) or not issubclass(cancelled, asyncio.CancelledError):
            raise exc
        raise cancelled() from exc  # a group of cancellations: the event loop expects the plain exception
    if isinstance(exc, ToolErrorBuilder):
        return _from_builder(target, exc, arguments)
    if isinstance(exc, UndeclaredReasonError):
        envelope = unexpected_failure(target)
        if failure_observers:
            _observe(target, envelope, exc)
        declared = ", ".join(exc.declared_reasons) or "none"
        log_failure(
            target,
            logging.ERROR,
            envelope.code_name,
            UNEXPECTED_REASON,
            f"fail({exc.undeclared_reason!r}) names a reason the error contract does not declare "
            f"(declared: {declared}); the model was shown a masked failure",
            arguments,
        )
        return envelope
    if isinstance(exc, McpError):
        return _from_mcp_error(target, exc, arguments)
    envelope = unexpected_failure(target)
    log_failure(
        target,
        logging.ERROR,
        envelope.code_name,
        UNEXPECTED_REASON,
        f"unexpected {type(exc).__name__} (masked from the client)",
        arguments,
        exc=exc,
    )
    return envelope


def cancellation_in_effect() -> bool:
    """Whether the running task is being cancelled from outside the handler.

    True when an anyio scope around it is cancelled (the SDK's way: the client cancelled, or the
    server is shutting down) or, on Python 3.11+, when the asyncio task has a cancel request
    pending. A ``CancelledError`` the handler got from awaiting a task it cancelled itself is
    neither.
    """
    try:
        import anyio

        if anyio.current_effective_deadline() == -math.inf:
            return True
    except Exception:  # noqa: BLE001 - no anyio event loop here (another framework's loop)
        pass
    task = _current_asyncio_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(callable(cancelling) and cancelling() > 0)


def is_fatal(exc: BaseException) -> bool:
    """Whether ``exc`` must propagate: the operator's Ctrl-C, or a cancellation really in effect."""
    return _contains_operator_interrupt(exc) or (_is_cancellation(exc) and cancellation_in_effect())


#: The instruction of a ``raise`` statement (a re-raise keeps the traceback's original innermost entry).
_RAISE_OPCODE = dis.opmap["RAISE_VARARGS"]


def is_operator_interrupt(exc: BaseException) -> bool:
    """Whether a ``KeyboardInterrupt`` is the operator's Ctrl-C rather than one a handler raised itself.

    Python delivers SIGINT as a plain ``KeyboardInterrupt`` raised wherever the main thread happens to
    be (between two instructions, or out of a C call such as ``time.sleep``); a handler's own is a
    ``raise`` statement — or a subclass of ``KeyboardInterrupt``, which Python never sends. So the
    innermost frame of the traceback tells them apart: stopped on a ``raise`` instruction, the
    handler raised it. (On Python 3.11+ the event loop turns the first Ctrl-C into a cancellation of
    the main task, which is handled as cancellation; this decides the rest.)
    """
    if type(exc) is not KeyboardInterrupt:
        return False
    tb = exc.__traceback__
    if tb is None:
        return True  # never raised (made and handed over): nothing says the handler made it
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    offset = tb.tb_lasti
    return not (0 <= offset < len(code) and code[offset] == _RAISE_OPCODE)


def _contains_operator_interrupt(exc: BaseException) -> bool:
    if isinstance(exc, KeyboardInterrupt):
        return is_operator_interrupt(exc)
    group = _exception_group_type()
    return (
        group is not None
        and isinstance(exc, group)
        and any(_contains_operator_interrupt(inner) for inner in exc.exceptions)  # type: ignore[attr-defined]  # a BaseExceptionGroup (not in 3.10's builtins)
    )


def _current_asyncio_task() -> Any:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _cancelled_class() -> type[BaseException]:
    try:
        import anyio

        return anyio.get_cancelled_exc_class()
    except Exception:  # noqa: BLE001 - outside an event loop: asyncio's
        return asyncio.CancelledError


def _is_cancellation(exc: BaseException) -> bool:
    kinds = (asyncio.CancelledError, _cancelled_class())
    if isinstance(exc, kinds):
        return True
    group = _exception_group_type()
    return group is not None and isinstance(exc, group) and all(_is_cancellation(inner) for inner in exc.exceptions)  # type: ignore[attr-defined]  # a BaseExceptionGroup (not in 3.10's builtins)


def _exception_group_type() -> type[BaseException] | None:
    group = getattr(builtins, "BaseExceptionGroup", None)
    if group is None:  # Python 3.10: the backport anyio brings, when it is loaded
        group = getattr(sys.modules.get("exceptiongroup"), "BaseExceptionGroup", None)
    return group


def _context_for(definition: Any, request_context: Any) -> Context:
    make = getattr(definition, "context", None)
    if callable(make):
        made: Context = make(request_context)
        return made
    return Context((), owner=definition.owner, request_context=request_context)


def _entry_for(target: BoundaryTarget, reason: str | None) -> ErrorContract | None:
    entry = getattr(target, "entry", None)
    return entry(reason) if callable(entry) else None


def _from_mcp_error(target: BoundaryTarget, error: McpError, arguments: Mapping[str, Any]) -> ToolErrorEnvelope:
    entry = _entry_for(target, error.reason)
    envelope = ToolErrorEnvelope.from_mcp_error(error, **contract_defaults(entry, error.code))
    if failure_observers:
        _observe(target, envelope, error)
    level = python_log_level(entry.severity if entry else None)
    log_failure(target, level, envelope.code_name, envelope.reason, envelope.message, arguments)
    return envelope


def _from_builder(target: BoundaryTarget, built: ToolErrorBuilder, arguments: Mapping[str, Any]) -> Outcome:
    reason = built.reason_value
    entry = _entry_for(target, reason if isinstance(reason, str) else None)
    envelope = built.envelope(**contract_defaults(entry, built.code))
    if failure_observers:
        _observe(target, envelope, None)
    if not envelope.is_error:
        log_failure(
            target,
            logging.WARNING,
            envelope.code_name,
            envelope.reason,
            envelope.message,
            arguments,
            label="Warning in",
        )
        return HandlerSuccess(built.result_value, warning=envelope, has_value=built.has_result)
    level = python_log_level(entry.severity if entry else None)
    log_failure(target, level, envelope.code_name, envelope.reason, envelope.message, arguments)
    return envelope


def _observe(target: BoundaryTarget, envelope: ToolErrorEnvelope, raised: BaseException | None) -> None:
    for observer in tuple(failure_observers):
        try:
            observer(target, envelope, raised)
        except Exception:  # noqa: BLE001 - an observer never changes what the model reads
            failure_logger.debug("a failure observer raised", exc_info=True)


def bounded_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` as text of at most ``MAX_TRACEBACK_CHARS`` (head and tail kept)."""
    return _bounded_traceback(exc)[0]


def _bounded_traceback(exc: BaseException) -> tuple[str, bool]:
    """``(text, cut)``: the bounded traceback, and whether anything of the raw one was cut."""
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    bounded = [bound_text(line.rstrip("\n")) for line in lines]
    cut = any(len(line) > len(kept) + 1 for line, kept in zip(lines, bounded))
    text = clean_text("".join(line + "\n" for line in bounded)).rstrip("\n")
    if len(text) <= MAX_TRACEBACK_CHARS:
        return text, cut
    head, tail = MAX_TRACEBACK_CHARS // 4, MAX_TRACEBACK_CHARS * 3 // 4
    return f"{text[:head]}\n… [traceback truncated from {len(text)} characters] …\n{text[-tail:]}", True


_FAILURE_FORMAT = "%s %s:%s [%s%s] %s%s"
_STANDARD_MAKE_RECORD = logging.Logger.makeRecord


def log_failure(
    target: BoundaryTarget,
    level: int,
    code_name: str,
    reason: str | None,
    message: str,
    arguments: Mapping[str, Any] | None,
    *,
    exc: BaseException | None = None,
    label: str = "Error in",
) -> None:
    """The one record of a failure; what the caller sent and what the handler said are bounded.

    ``arguments`` is ``None`` for a failure of the result (the call's arguments were fine).
    """
    if not failure_logger.isEnabledFor(level):
        return
    if arguments is None:
        bounded_arguments = None
    else:  # render_bounded reads a dict, never changes it: no copy of one
        bounded_arguments = render_bounded(arguments if type(arguments) is dict else dict(arguments))
    args = (
        label,
        target.kind,
        clean_text(target.name),
        code_name,
        f" reason={bound_text(reason)}" if reason else "",
        bound_text(message),
        f"; arguments={bounded_arguments}" if bounded_arguments is not None else "",
    )
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    exc_text = None
    if exc is not None:
        exc_text, cut = _bounded_traceback(exc)
        if cut:
            # Handlers that render exc_info themselves (a framework's rich console) would print the
            # uncut text, and take minutes over 10 MB: they get the bounded text only.
            exc_info = None
    extra = {
        "fusion_kind": target.kind,
        "fusion_name": target.name,
        "fusion_code": code_name,
        "fusion_reason": reason,
        "fusion_arguments": bounded_arguments,
    }
    if type(failure_logger).makeRecord is _STANDARD_MAKE_RECORD and "makeRecord" not in failure_logger.__dict__:
        # What Logger.makeRecord does, without its per-key check of `extra` (these keys never collide
        # with a record's own attributes): the record factory (the application's, if it set one) makes it.
        record = logging.getLogRecordFactory()(
            failure_logger.name, level, __file__, 0, _FAILURE_FORMAT, args, exc_info, None, None
        )
        record.__dict__.update(extra)
    else:  # a Logger subclass of the application's makes its own records
        record = failure_logger.makeRecord(
            failure_logger.name, level, __file__, 0, _FAILURE_FORMAT, args, exc_info, extra=extra
        )
    if exc_text is not None:
        record.exc_text = exc_text  # formatters print this instead of the raw traceback
    failure_logger.handle(record)
