"""Error contracts: the declared failure surface of a tool or resource (DESIGN §3.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, field_validator

from .contract_fields import CONTRACT_FIELDS, REQUIRED_FIELDS, SEVERITIES, THROWN_BY_VALUES, Severity, ThrownBy
from .errors import CODE_EXPECTATION, JsonRpcErrorCode, coerce_code

__all__ = ["CONTRACT_FIELDS", "REQUIRED_FIELDS", "SEVERITIES", "THROWN_BY_VALUES", "ErrorContract", "coerce_contract"]


class ErrorContract(BaseModel):
    """One modeled failure: a stable ``reason``, its ``code``, when it happens and what to do next."""

    # Strict text/bool fields: lax pydantic would quietly turn ``retryable="no"`` into ``False``,
    # hiding exactly the kind of slip a contract exists to make visible.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)

    reason: StrictStr
    #: A ``JsonRpcErrorCode`` member (a member's name or value becomes the member), a canonical
    #: string code such as ``"SERVER_BUSY"``, or a custom ``UPPER_SNAKE_CASE`` one (DESIGN §3.1).
    code: JsonRpcErrorCode | str
    when: StrictStr
    recovery: StrictStr
    retryable: StrictBool | None = None
    severity: Severity | None = None
    thrown_by: ThrownBy | None = None

    @field_validator("code", mode="before")
    @classmethod
    def _closed_then_open_code(cls, code: Any) -> Any:
        try:
            return coerce_code(code)
        except ValueError:
            raise ValueError(f"must be {CODE_EXPECTATION}") from None


# The plain tables (``contract_fields``, imported by the linter without pydantic) must be the model's.
if CONTRACT_FIELDS != tuple(ErrorContract.model_fields) or REQUIRED_FIELDS != tuple(
    name for name, field in ErrorContract.model_fields.items() if field.is_required()
):  # pragma: no cover - a drift between the two is a bug here, caught at the first import
    raise ImportError("mcp_fusion.contract_fields does not match ErrorContract's fields")


def coerce_contract(owner: str, errors: Any) -> tuple[ErrorContract, ...]:
    """Validate ``errors=`` at definition time; raise ``TypeError`` naming the owner and the field.

    ``owner`` is how the definition is named in messages, e.g. ``"tool 'fetch_articles'"``.
    Only types are checked (style is the linter's job), so a contract the linter flags still loads.
    """
    from pydantic import ValidationError

    if errors is None:
        return ()
    if not isinstance(errors, (list, tuple)):
        raise TypeError(f"{owner}: errors= must be a list of ErrorContract (or dicts), got {type(errors).__name__}")
    entries: list[ErrorContract] = []
    for index, entry in enumerate(errors):
        if isinstance(entry, ErrorContract):
            entries.append(entry)
            continue
        if not isinstance(entry, Mapping):
            raise TypeError(f"{owner}: errors[{index}] must be an ErrorContract or a dict, got {type(entry).__name__}")
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
        return f"{where} must be {CODE_EXPECTATION}, got {got!r}"
    return f"{where}: {problem['msg']}, got {got!r}"
