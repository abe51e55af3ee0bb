"""The ``Context`` a handler receives: failing through its contract, and the SDK request (DESIGN §3.4).

This module must not import the MCP SDK: a ``Context`` is also built in unit tests and by code that
only declares tools. When a request is being served, the SDK's ``ServerRequestContext`` is attached
and reached duck-typed.
"""

from __future__ import annotations

import contextvars
import logging
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .contract import ErrorContract, coerce_contract
from .errors import McpError, UndeclaredReasonError

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

#: Python has no NOTICE level; MCP (syslog) does. 25 sits between INFO and WARNING, as in syslog.
NOTICE = 25
logging.addLevelName(NOTICE, "NOTICE")

_PYTHON_LEVELS: Mapping[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": NOTICE,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

handler_logger = logging.getLogger("mcp_fusion.handler")

#: The contract of the handler running in this task (or thread): ``fail``/``recovery_for`` read it.
#: ``FusionServer`` and ``@contract`` set it around each call (DESIGN §12.1).
active_contract: contextvars.ContextVar[Context | None] = contextvars.ContextVar("mcp_fusion_contract", default=None)


def python_log_level(level: str | None) -> int:
    """The ``logging`` level of an MCP/contract severity name; ``None`` (undeclared) means error."""
    return _PYTHON_LEVELS.get(level or "error", logging.ERROR)


class Context:
    """Injected into a handler through a parameter annotated ``Context`` (any name).

    ``ctx.fail(reason)`` builds the failure its contract declares; ``ctx.recovery_for(reason)``
    gives that entry's recovery hint. While serving, ``ctx.request_context`` is the SDK's
    ``ServerRequestContext`` and ``log``/``report_progress``/``cancel_requested`` use it; outside a
    request (a unit test calling the handler) they degrade to local logging and no-ops.
    """

    def __init__(
        self,
        errors: Iterable[ErrorContract | Mapping[str, Any]] | None = (),
        *,
        owner: str = "handler",
        request_context: Any = None,
    ) -> None:
        self._owner = owner
        self._errors: tuple[ErrorContract, ...] = coerce_contract(owner, list(errors or ()))
        # First declaration wins: duplicates are the linter's FL108, not a runtime crash.
        self._by_reason: dict[str, ErrorContract] = {}
        for entry in self._errors:
            self._by_reason.setdefault(entry.reason, entry)
        self._request_context = request_context

    @classmethod
    def _of_definition(
        cls, errors: tuple[ErrorContract, ...], by_reason: Mapping[str, ErrorContract], owner: str, request_context: Any
    ) -> Context:
        """A context for a definition whose contract was validated when it was declared (once per call)."""
        context = cls.__new__(cls)
        context._owner = owner
        context._errors = errors
        context._by_reason = by_reason  # type: ignore[assignment]  # read-only, shared with the definition
        context._request_context = request_context
        return context

    # -- the contract -------------------------------------------------------------------------

    @property
    def owner(self) -> str:
        """How the definition is named in messages, e.g. ``"tool 'fetch_articles'"``."""
        return self._owner

    @property
    def errors(self) -> tuple[ErrorContract, ...]:
        return self._errors

    @property
    def declared_reasons(self) -> tuple[str, ...]:
        return tuple(self._by_reason)

    def entry(self, reason: str) -> ErrorContract | None:
        """The contract entry declaring ``reason``, or ``None``."""
        return self._by_reason.get(reason)

    def fail(
        self,
        reason: str,
        message: str | None = None,
        data: Mapping[str, Any] | None = None,
        *,
        cause: BaseException | None = None,
    ) -> McpError:
        """Return (never raise) the ``McpError`` the contract declares for ``reason``.

        Write ``raise ctx.fail("no_match")``. The code comes from the entry, the message defaults
        to the entry's ``when``; ``data`` is ``{"retryable": entry.retryable}`` (when declared),
        then the caller's ``data``, then ``"reason"`` written last so no caller can override it.
        An undeclared reason is a bug in the server: it returns an ``INTERNAL_ERROR``
        (``UndeclaredReasonError``) whose data lists the declared reasons; the boundary writes them
        to the log and shows the model a masked failure.
        """
        entry = self._by_reason.get(reason)
        if entry is None:
            return UndeclaredReasonError(self._owner, reason, list(self._by_reason), cause=cause)
        payload: dict[str, Any] = {}
        if entry.retryable is not None:
            payload["retryable"] = entry.retryable
        if data:
            payload.update(data)
        payload["reason"] = entry.reason
        return McpError(entry.code, message if message is not None else entry.when, payload, cause=cause)

    def recovery_for(self, reason: str) -> dict[str, Any]:
        """``{"recovery": {"hint": entry.recovery}}``, or ``{}`` for an unknown reason (safe to spread)."""
        entry = self._by_reason.get(reason)
        if entry is None:
            return {}
        return {"recovery": {"hint": entry.recovery}}

    # -- the SDK request ----------------------------------------------------------------------

    @property
    def request_context(self) -> Any:
        """The SDK's ``ServerRequestContext`` while serving, else ``None``."""
        return self._request_context

    @property
    def lifespan(self) -> Any:
        """What ``FusionServer(..., lifespan=...)`` yielded (a database pool, a client), else ``None``."""
        return getattr(self._request_context, "lifespan_context", None)

    @property
    def session(self) -> Any:
        """The SDK's per-request ``ServerSession`` while serving, else ``None``."""
        return getattr(self._request_context, "session", None)

    @property
    def request_id(self) -> Any:
        return getattr(self._request_context, "request_id", None)

    @property
    def cancel_requested(self) -> bool:
        """Whether the client asked to cancel this request.

        The SDK delivers cancellation by cancelling the handler's task; this flag lets a long
        synchronous loop (or a handler that shields a critical section) notice it too.
        """
        # The SDK keeps the per-request dispatch context private on the session; reached
        # defensively so a future SDK layout degrades to "not requested" instead of crashing.
        outbound = getattr(self.session, "_request_outbound", None)
        event = getattr(outbound, "cancel_requested", None)
        return bool(event is not None and event.is_set())

    async def log(self, level: LogLevel, message: str, *, data: Mapping[str, Any] | None = None) -> None:
        """Log locally and, while serving, send an MCP ``notifications/message`` to the client.

        A failed notification (closed stream, client not opted in) never fails the tool.
        """
        handler_logger.log(python_log_level(level), "%s: %s", self._owner, message)
        session = self.session
        if session is None:
            return
        payload: Any = {"message": message, **dict(data)} if data else message
        try:
            with warnings.catch_warnings():
                # MCP deprecates server logging for 2026-07-28 (SEP-2577) but clients still use it.
                warnings.simplefilter("ignore")
                await session.send_log_message(
                    level=level, data=payload, logger="mcp_fusion", related_request_id=self.request_id
                )
        except Exception:  # noqa: BLE001 - logging must never turn into the tool's failure
            handler_logger.debug("could not send log notification for %s", self._owner, exc_info=True)

    async def debug(self, message: str, **data: Any) -> None:
        await self.log("debug", message, data=data or None)

    async def info(self, message: str, **data: Any) -> None:
        await self.log("info", message, data=data or None)

    async def warning(self, message: str, **data: Any) -> None:
        await self.log("warning", message, data=data or None)

    async def error(self, message: str, **data: Any) -> None:
        await self.log("error", message, data=data or None)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress to a client that asked for it; a no-op otherwise."""
        session = self.session
        if session is None:
            return
        await session.report_progress(progress, total, message)

    def __repr__(self) -> str:
        return f"Context({self._owner}, reasons={list(self._by_reason)!r})"


def fail(
    reason: str,
    message: str | None = None,
    data: Mapping[str, Any] | None = None,
    *,
    cause: BaseException | None = None,
) -> McpError:
    """``ctx.fail`` without a ``ctx``: the failure the running handler's contract declares for ``reason``.

    Write ``raise fail("invoice_not_found")`` in a ``@contract`` handler (any framework) or a
    ``FusionServer`` handler, or in code they call. Called outside any contracted handler it
    raises ``RuntimeError`` naming the reason: there is no contract to take the code from.
    """
    context = active_contract.get()
    if context is None:
        raise RuntimeError(
            f"fail({reason!r}) was called outside a contracted handler: there is no error contract to take its "
            "code from. Call it while a @contract (or FusionServer) handler runs, or raise a factory such as "
            "not_found(...) instead."
        )
    return context.fail(reason, message, data, cause=cause)


def recovery_for(reason: str) -> dict[str, Any]:
    """``ctx.recovery_for`` without a ``ctx``: ``{"recovery": {"hint": ...}}``, or ``{}`` (safe to spread).

    Outside any contracted handler there is no contract, so it is ``{}`` too.
    """
    context = active_contract.get()
    return context.recovery_for(reason) if context is not None else {}
