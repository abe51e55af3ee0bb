"""What raising a call raises, as read from the call (``bodies.FunctionWalker.classify``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from fusion_lint.base.diagnostics import Span
from fusion_lint.facts.model import Assumptions, RaiseKind


@dataclass(slots=True)
class Raised:
    """What raising a call raises, read from the call (the statement's facts are added around it)."""

    kind: RaiseKind
    exception: str | None = None
    code: str | None = None
    factory: str | None = None
    data_reason: str | None = None
    has_cause: bool = False
    message: ast.expr | None = None
    message_span: Span | None = None  # placed where the call is (the runtime's raises only)
    data: ast.expr | None = None
    assumes: Assumptions = ()
    wire_code: int | None = None
