"""Error contracts: the declared failure surface of a tool or resource (DESIGN §3.2)."""
from __future__ import annotations

from typing import Any, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict

from .errors import JsonRpcErrorCode

Severity = Literal["debug", "info", "notice", "warning"]
ThrownBy = Literal["service"]

#: Log levels a contract entry may lower its failure record to (default: error).
SEVERITIES: tuple[str, ...] = get_args(Severity)
#: Values of the lint-only ``thrown_by`` marker.
THROWN_BY_VALUES: tuple[str, ...] = get_args(ThrownBy)


class ErrorContract(BaseModel):
    """One modeled failure: a stable ``reason``, its ``code``, when it happens and what to do next."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)

    reason: str
    code: JsonRpcErrorCode
    when: str
    recovery: str
    retryable: Optional[bool] = None
    severity: Optional[Severity] = None
    thrown_by: Optional[ThrownBy] = None


#: Field names, in declaration order; the linter checks ``ErrorContract(...)``/dict keys against them.
CONTRACT_FIELDS: tuple[str, ...] = tuple(ErrorContract.model_fields)
#: Fields every entry must carry.
REQUIRED_FIELDS: tuple[str, ...] = tuple(
    name for name, field in ErrorContract.model_fields.items() if field.is_required()
)


def coerce_contract(owner: str, errors: Any) -> tuple[ErrorContract, ...]:
    """Validate ``errors=`` at definition time; raise ``TypeError`` naming the owner and the field."""
    from pydantic import ValidationError

    if errors is None:
        return ()
    if not isinstance(errors, (list, tuple)):
        raise TypeError(f"{owner}: errors= must be a list of ErrorContract, got {type(errors).__name__}")
    entries: list[ErrorContract] = []
    for index, entry in enumerate(errors):
        if isinstance(entry, ErrorContract):
            entries.append(entry)
            continue
        if not isinstance(entry, dict):
            raise TypeError(
                f"{owner}: errors[{index}] must be an ErrorContract or a dict, got {type(entry).__name__}"
            )
        try:
            entries.append(ErrorContract.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "?"
            raise TypeError(f"{owner}: errors[{index}].{field}: {first['msg']}") from None
    return tuple(entries)
