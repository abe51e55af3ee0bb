"""What raising a call raises, as read from the call (``bodies.FunctionWalker.classify``)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from ..diagnostics import Span
from .model import Assumptions, RaiseKind


@dataclass(slots=True)
class Raised:
    """What raising a call raises, read from the call (the statement's facts are added around it)."""

    kind: RaiseKind
    exception: Optional[str] = None
    code: Optional[str] = None
    factory: Optional[str] = None
    data_reason: Optional[str] = None
    has_cause: bool = False
    message: Optional[ast.expr] = None
    message_span: Optional[Span] = None  # placed where the call is (the runtime's raises only)
    data: Optional[ast.expr] = None
    assumes: Assumptions = ()
