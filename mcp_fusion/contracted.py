"""Error contracts on the servers people already have (DESIGN §12.1): ``@contract`` under any framework.

    from mcp.server.fastmcp import FastMCP          # or mcp 2.x MCPServer, or fastmcp's FastMCP
    from mcp_fusion import contract, fail, ErrorContract, JsonRpcErrorCode

    @mcp.tool()
    @contract(errors=[ErrorContract(reason="invoice_not_found", ...)])
    async def get_invoice(invoice_id: str) -> dict:
        ...
        raise fail("invoice_not_found", f"No invoice {invoice_id}")

``contract`` wraps the handler with ``functools.wraps``: the framework reads the same signature (the
same input and output schemas, its own ``Context`` still injected) and registers the wrapper, which
runs the failure boundary of ``FusionServer`` (DESIGN §3.5) around each call. A success is returned
untouched (the framework converts it as it always did); a failure or a warning comes back as the
running framework's own result type, in the bytes ``FusionServer`` sends (:mod:`.frameworks`).
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, TypeVar

from . import internals
from .boundary import outcome_of_exception, outcome_of_return
from .bounding import clean_text
from .builder import ToolErrorBuilder
from .context import Context, active_contract
from .contract import ErrorContract, coerce_contract
from .frameworks import Framework, FrameworkView, current_framework, raise_resource_failure, render_outcome
from .serving import ServedTool, served_tool
from .wire import DEFAULT_MAX_RESULT_CHARS, MAX_RESULT_ITEMS, UNSERIALISABLE_REASON, ResultProblem, result_failure

HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])
ContractEntries = Sequence["ErrorContract | Mapping[str, Any]"]

#: What a contracted wrapper carries, for tools and tests: ``get_invoice.__fusion_contract__``.
CONTRACT_ATTRIBUTE = "__fusion_contract__"


class ContractTarget:
    """What the boundary knows about a contracted handler: its name, its contract, its framework views."""

    def __init__(self, handler: Callable[..., Any], errors: tuple[ErrorContract, ...], name: str | None) -> None:
        self.kind = "tool"  # or "resource": what the framework serves it as, seen per call
        self.handler = handler
        self.errors = errors
        self.explicit_name = name
        self.name = name if name is not None else getattr(handler, "__name__", type(handler).__name__)
        self._by_reason: dict[str, ErrorContract] = {}
        for entry in errors:
            self._by_reason.setdefault(entry.reason, entry)  # duplicates are the linter's FL108
        self.context = Context._of_definition(errors, self._by_reason, self.owner, None)
        #: One view per framework that served this handler (output schema, result conversion).
        self.views: dict[str, FrameworkView] = {}
        #: This target under each other (name, kind) a framework served it with (made once, not per call).
        self._renamed: dict[tuple[str, str], ContractTarget] = {}

    @property
    def owner(self) -> str:
        return f"{self.kind} {self.name!r}"

    @property
    def declared_reasons(self) -> tuple[str, ...]:
        return tuple(self._by_reason)

    def entry(self, reason: str | None) -> ErrorContract | None:
        return self._by_reason.get(reason) if isinstance(reason, str) else None

    def named(self, name: str | None, kind: str = "tool") -> ContractTarget:
        """This target under the name (and kind) the framework serves it with."""
        name = name if name is not None and self.explicit_name is None else self.name
        if name == self.name and kind == self.kind:
            return self
        renamed = self._renamed.get((name, kind))
        if renamed is None:
            renamed = ContractTarget(self.handler, self.errors, name)
            renamed.kind = kind
            renamed.context = Context._of_definition(self.errors, self._by_reason, renamed.owner, None)
            renamed.views = self.views
            self._renamed[(name, kind)] = renamed
        return renamed

    def failed(self, exc: BaseException, kwargs: Mapping[str, Any]) -> Any:
        framework = current_framework()
        served, target = self._served(framework, _wrapper_caller())
        outcome = outcome_of_exception(target, exc, call_arguments(kwargs), target.context)
        return target._finish(outcome, served, framework)

    def returned(self, result: Any, kwargs: Mapping[str, Any]) -> Any:
        kind = type(result)
        if kind in _PLAIN_RESULTS:
            return result  # the success path: untouched, the framework converts it as it always did
        if kind is str:
            if len(result) <= DEFAULT_MAX_RESULT_CHARS:
                return clean_text(result)  # a lone surrogate (a file name) would make the framework's encoder fail
            problem = ResultProblem(
                UNSERIALISABLE_REASON, f"is {len(result)} characters long, over the limit of {DEFAULT_MAX_RESULT_CHARS}"
            )
            return self._result_problem(problem)
        if isinstance(result, Iterator):
            # The framework would read a generator to its end: an endless one would hang the server.
            try:
                items = list(islice(result, MAX_RESULT_ITEMS + 1))
            except BaseException as exc:  # noqa: BLE001 - the iterator's own code may raise anything
                return self.failed(exc, kwargs)
            if len(items) <= MAX_RESULT_ITEMS:
                return items
            problem = ResultProblem(
                UNSERIALISABLE_REASON, f"holds an iterator of more than {MAX_RESULT_ITEMS} items (an endless one?)"
            )
            return self._result_problem(problem)
        if not isinstance(result, ToolErrorBuilder):
            return result
        framework = current_framework()
        served, target = self._served(framework, _wrapper_caller())
        return target._finish(outcome_of_return(target, result, call_arguments(kwargs)), served, framework)

    def _result_problem(self, problem: ResultProblem) -> Any:
        framework = current_framework()
        served, target = self._served(framework, None)
        return target._finish(result_failure(target, problem), served, framework)

    def _served(self, framework: Framework, caller: Any) -> tuple[ServedTool | None, ContractTarget]:
        """Who serves this call: the framework's tool (name, output schema, kind) seen from ``caller`` up."""
        served = served_tool(framework.key == "mcp1", caller)
        return served, self if served is None else self.named(served.name, served.kind)

    def _finish(self, outcome: Any, served: ServedTool | None, framework: Framework) -> Any:
        if self.kind == "resource":
            return raise_resource_failure(self, outcome)
        return render_outcome(self, outcome, served, framework)


#: Results passed through as they are, without a look (the common ones; ``str`` is measured first).
_PLAIN_RESULTS = frozenset({dict, list, tuple, int, float, bool, type(None)})


def _wrapper_caller() -> Any:
    """The frame that called the contracted wrapper: the framework's, where its tool object can be seen."""
    try:
        return sys._getframe(3)  # 0: here, 1: failed/returned, 2: the wrapper, 3: what called it
    except ValueError:  # called from C with no Python frame above: look from wherever we are
        return None


def call_arguments(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's arguments as logged: without the framework's injected ``Context`` (or our own)."""
    for value in kwargs.values():
        if type(value).__name__ == "Context":
            return {key: value for key, value in kwargs.items() if type(value).__name__ != "Context"}
    return kwargs  # type: ignore[return-value]  # nothing injected: the wrapper's own fresh dict, which the boundary only reads


def contract(errors: ContractEntries | None = None, *, name: str | None = None) -> Callable[[HandlerT], HandlerT]:
    """Declare a handler's error contract under any framework: ``@contract(errors=[...])`` below ``@app.tool()``.

    ``errors`` takes ``ErrorContract`` entries or dicts with the same keys (validated now, like
    ``tool(errors=...)``). ``name`` is the tool's name in messages and logs when the framework
    registers it under another name than the function's (an integration tells it otherwise).
    """
    if callable(errors) and not isinstance(errors, (list, tuple)):
        raise TypeError("@contract needs its entries: write @contract(errors=[...]), not a bare @contract")
    label = f"@contract on {name!r}" if name is not None else "@contract"
    entries = coerce_contract(label, errors)

    def decorate(handler: HandlerT) -> HandlerT:
        internals.check_loaded()  # a framework whose internals moved fails here, at registration, by name
        _refuse_registered_tool(handler)
        if not callable(handler):
            raise TypeError(f"{label} decorates a function, got {type(handler).__name__}")
        target = ContractTarget(handler, entries, name)
        if _is_async(handler):

            @functools.wraps(handler)
            async def contracted(*args: Any, **kwargs: Any) -> Any:
                token = active_contract.set(target.context)
                try:
                    result = await handler(*args, **kwargs)
                except BaseException as exc:  # noqa: BLE001 - the boundary owns every outcome (DESIGN §3.5)
                    return target.failed(exc, kwargs)
                finally:
                    active_contract.reset(token)
                return target.returned(result, kwargs)

        else:

            @functools.wraps(handler)
            def contracted(*args: Any, **kwargs: Any) -> Any:
                token = active_contract.set(target.context)
                try:
                    result = handler(*args, **kwargs)
                except BaseException as exc:  # noqa: BLE001 - the boundary owns every outcome (DESIGN §3.5)
                    return target.failed(exc, kwargs)
                finally:
                    active_contract.reset(token)
                return target.returned(result, kwargs)

        setattr(contracted, CONTRACT_ATTRIBUTE, target)
        return contracted  # type: ignore[return-value]  # the wrapper has the handler's signature (functools.wraps)

    return decorate


def contract_of(handler: Any) -> ContractTarget | None:
    """The contract a ``@contract`` wrapper carries (through a framework's tool object too), else ``None``."""
    for candidate in (handler, getattr(handler, "fn", None)):
        target = getattr(candidate, CONTRACT_ATTRIBUTE, None)
        if isinstance(target, ContractTarget):
            return target
    return None


def _is_async(handler: Callable[..., Any]) -> bool:
    target = handler
    while isinstance(target, functools.partial):
        target = target.func
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(getattr(target, "__call__", None))


def _refuse_registered_tool(handler: Any) -> None:
    """``@contract`` above the framework's decorator: fastmcp already took the bare function.

    fastmcp 2.x's decorator returns a tool object; 3.x and 4.x return the function, marked with
    ``__fastmcp__``. mcp's ``FastMCP``/``MCPServer`` return the bare function unmarked: the linter's
    FL118 catches that order.
    """
    kind = type(handler)
    module = kind.__module__ or ""
    tool_object = (
        module.split(".")[0] in ("fastmcp", "mcp") and hasattr(handler, "fn") and not inspect.isroutine(handler)
    )
    if tool_object or (inspect.isroutine(handler) and getattr(handler, "__fastmcp__", None) is not None):
        name = getattr(handler, "name", None) or getattr(handler, "__name__", "?")
        raise TypeError(
            f"@contract was applied to {name!r} after fastmcp's decorator took it ({kind.__name__}), so fastmcp "
            "serves it without the contract: put @contract *below* @app.tool (directly above the def), so the "
            "framework registers the contracted function"
        )
