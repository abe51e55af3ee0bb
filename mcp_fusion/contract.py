"""Error contracts: the declared failure surface of a tool or resource (DESIGN §3.2)."""
from __future__ import annotations

from typing import Any, Literal, Mapping, Optional, get_args

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr

from .errors import JsonRpcErrorCode

Severity = Literal["debug", "info", "notice", "warning"]
ThrownBy = Literal["service"]

#: Log levels a contract entry may lower its failure record to (default: error).
SEVERITIES: tuple[str, ...] = get_args(Severity)
#: Values of the lint-only ``thrown_by`` marker.
THROWN_BY_VALUES: tuple[str, ...] = get_args(ThrownBy)


class ErrorContract(BaseModel):
    """One modeled failure: a stable ``reason``, its ``code``, when it happens and what to do next."""

    # Strict text/bool fields: lax pydantic would quietly turn ``retryable="no"`` into ``False``,
    # hiding exactly the kind of slip a contract exists to make visible.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)

    reason: StrictStr
    code: JsonRpcErrorCode
    when: StrictStr
    recovery: StrictStr
    retryable: Optional[StrictBool] = None
    severity: Optional[Severity] = None
    thrown_by: Optional[ThrownBy] = None


#: Field names, in declaration order; the linter checks ``ErrorContract(...)``/dict keys against them.
CONTRACT_FIELDS: tuple[str, ...] = tuple(ErrorContract.model_fields)
#: Fields every entry must carry.
REQUIRED_FIELDS: tuple[str, ...] = tuple(
    name for name, field in ErrorContract.model_fields.items() if field.is_required()
)

_CODE_EXPECTATION = "a JsonRpcErrorCode member (e.g. JsonRpcErrorCode.NOT_FOUND) or its int value"


def coerce_contract(owner: str, errors: Any) -> tuple[ErrorContract, ...]:
    """Validate ``errors=`` at definition time; raise ``TypeError`` naming the owner and the field.

    ``owner`` is how the definition is named in messages, e.g. ``"tool 'fetch_articles'"``.
    Only types are checked (style is the linter's job), so a contract the linter flags still loads.
    """
    from pydantic import ValidationError

    if errors is None:
        return ()
    if not isinstance(errors, (list, tuple)):
        raise TypeError(
            f"{owner}: errors= must be a list of ErrorContract (or dicts), got {type(errors).__name__}"
        )
    entries: list[ErrorContract] = []
    for index, entry in enumerate(errors):
        if isinstance(entry, ErrorContract):
            entries.append(entry)
            continue
        if not isinstance(entry, Mapping):
            raise TypeError(
                f"{owner}: errors[{index}] must be an ErrorContract or a dict, got {type(entry).__name__}"
            )
        try:
            entries.append(ErrorContract.model_validate(dict(entry)))
        except ValidationError as exc:
            problems = "; ".join(_describe_problem(index, problem) for problem in exc.errors())
            raise TypeError(f"{owner}: {problems}") from None
    return tuple(entries)


def _describe_problem(index: int, problem: Mapping[str, Any]) -> str:
    field = ".".join(str(part) for part in problem["loc"]) or "?"
    where = f"errors[{index}].{field}"
    kind = problem["type"]
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        return f"{where} is not a contract field (expected one of: {', '.join(CONTRACT_FIELDS)})"
    got = problem.get("input")
    if field == "code":
        return f"{where} must be {_CODE_EXPECTATION}, got {got!r}"
    return f"{where}: {problem['msg']}, got {got!r}"
