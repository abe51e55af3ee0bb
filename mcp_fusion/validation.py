"""Self-healing argument errors (DESIGN §3.6).

When a caller's arguments do not validate, the handler never runs; the model gets one ``<field>``
per problem, saying what it sent (bounded) and what was expected, and a fixed recovery line::

    <validation_error action="fetch_articles" code="INVALID_PARAMS" reason="invalid_arguments">
      <field name="pmids">Expected a list of strings. You sent: 'abc'.</field>
      <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
    </validation_error>
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .bounding import MAX_ITEMS, bound_text, render_bounded
from .envelope import escape_attribute, escape_text, render_awareness_xml
from .errors import JsonRpcErrorCode

if TYPE_CHECKING:  # pragma: no cover
    from pydantic import ValidationError

    from .lockfile import Delta

#: A field's name is cut here (a 5 MB key is an echo like any other), its sentence here: room
#: for a bounded 1,024-character echo of what was sent, and for what was expected.
MAX_FIELD_NAME_CHARS = 256
MAX_PROBLEM_CHARS = 2048

VALIDATION_REASON = "invalid_arguments"
VALIDATION_CODE = JsonRpcErrorCode.INVALID_PARAMS
VALIDATION_RECOVERY = "Fix the fields above and call the tool again. Do not explain the error."
#: The recovery line by definition kind: a prompt is requested again, a resource read again.
VALIDATION_RECOVERIES: Mapping[str, str] = {
    "tool": VALIDATION_RECOVERY,
    "prompt": "Fix the arguments above and get the prompt again. Do not explain the error.",
    "resource": "Fix the parts of the URI above and read the resource again. Do not explain the error.",
}


def validation_message(action: str) -> str:
    """The plain message of a validation failure (the mirror's ``message``)."""
    return f"Invalid arguments for {action}"


@dataclass(frozen=True)
class FieldProblem:
    """One problem with the arguments: the field (dotted path) and the sentence the model reads."""

    name: str
    problem: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "problem": self.problem}


@dataclass(frozen=True)
class ValidationEnvelope:
    """The ``<validation_error>`` of one call: reason ``invalid_arguments``, code ``INVALID_PARAMS``."""

    action: str
    fields: tuple[FieldProblem, ...]
    contract_awareness: tuple[Delta, ...] = field(default=())
    #: What the action is: ``tool``, ``prompt`` or ``resource`` (it words the recovery).
    kind: str = "tool"

    code = VALIDATION_CODE
    code_name = VALIDATION_CODE.name
    code_value = int(VALIDATION_CODE)
    severity = "error"
    is_error = True
    reason = VALIDATION_REASON
    retry_after = None

    @property
    def recovery(self) -> str:
        return VALIDATION_RECOVERIES.get(self.kind, VALIDATION_RECOVERY)

    @property
    def message(self) -> str:
        return validation_message(self.action)

    def with_contract_awareness(self, deltas: Sequence[Delta]) -> ValidationEnvelope:
        return replace(self, contract_awareness=tuple(deltas))

    def to_xml(self) -> str:
        # The code and the reason ride in the first text block too: clients hand the model only
        # ``content[0].text`` of an error result (DESIGN §13.4), never the structured mirror.
        lines = [
            f'<validation_error action="{escape_attribute(self.action)}" code="{self.code_name}" '
            f'reason="{VALIDATION_REASON}">'
        ]
        lines.extend(
            f'  <field name="{escape_attribute(problem.name)}">{escape_text(problem.problem)}</field>'
            for problem in self.fields
        )
        lines.append(f"  <recovery>{escape_text(self.recovery)}</recovery>")
        lines.extend(render_awareness_xml(self.contract_awareness))
        lines.append("</validation_error>")
        return "\n".join(lines)

    def to_structured(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "reason": VALIDATION_REASON,
            "recovery": {"hint": self.recovery},
            "action": self.action,
            "fields": [problem.to_dict() for problem in self.fields],
        }
        if self.contract_awareness:
            data["contract_awareness"] = [delta.to_wire() for delta in self.contract_awareness]
        return {"error": {"code": self.code_value, "code_name": self.code_name, "message": self.message, "data": data}}

    def to_json_text(self) -> str:
        body: dict[str, Any] = {
            "error": True,
            "type": "ValidationError",
            "code": VALIDATION_CODE.name,
            "message": self.message,
            "reason": VALIDATION_REASON,
            "recovery": self.recovery,
            "action": self.action,
            "fields": [problem.to_dict() for problem in self.fields],
        }
        if self.contract_awareness:
            body["contract_awareness"] = [delta.to_wire() for delta in self.contract_awareness]
        return json.dumps(body, ensure_ascii=False, allow_nan=False)

    def render(self, envelope_format: str = "xml") -> str:
        return self.to_json_text() if envelope_format == "json" else self.to_xml()


def validation_envelope(
    action: str, error: ValidationError, input_schema: Mapping[str, Any], kind: str = "tool"
) -> ValidationEnvelope:
    """Turn pydantic's errors for a definition's arguments into the envelope, one field per problem."""
    problems = describe_problems(error.errors(include_url=False), input_schema)
    return ValidationEnvelope(action=action, fields=tuple(problems), kind=kind)


def describe_problems(errors: Sequence[Mapping[str, Any]], input_schema: Mapping[str, Any]) -> list[FieldProblem]:
    """One ``FieldProblem`` per field, in pydantic's order; at most 10, then one that counts the rest.

    A union yields one pydantic error per member for the same field; that is one problem for the
    caller, so errors are grouped by field and a group is phrased from the field's schema. Field
    names and sentences are bounded like every echo (DESIGN §3.6): 100,000 unknown keys or a 5 MB
    key make a small envelope.
    """
    groups: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Any] | None]]] = {}
    for error in errors:
        name, schema, parent = _locate(error.get("loc", ()), input_schema)
        if name not in groups and len(groups) == MAX_ITEMS:
            break  # pydantic reports a field's errors together: the rest are other fields
        groups.setdefault(name, []).append((error, schema, parent))
    problems = [
        FieldProblem(bound_text(name, MAX_FIELD_NAME_CHARS), bound_text(problem, MAX_PROBLEM_CHARS))
        for name, problem in _phrase_groups(groups, input_schema)
    ]
    fields_with_problems = len({_top_field(error.get("loc", ())) for error in errors})
    if fields_with_problems > len(problems):
        problems.append(FieldProblem("…", f"[truncated from {fields_with_problems} fields with problems]"))
    return problems


def _top_field(loc: Sequence[Any]) -> Any:
    return loc[0] if loc else ""


def _phrase_groups(
    groups: Mapping[str, list[tuple[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Any] | None]]],
    input_schema: Mapping[str, Any],
) -> list[tuple[str, str]]:
    problems = []
    for name, group in groups.items():
        if len(group) == 1:
            error, schema, parent = group[0]
            problems.append((name, phrase_problem(error, schema, parent, input_schema)))
        else:
            error, schema, _ = group[0]
            expected = describe_schema(schema, input_schema) if schema else None
            expectation = f"Expected {expected}" if expected else "Invalid value"
            problems.append((name, f"{expectation}. You sent: {render_bounded(error.get('input'))}."))
    return problems


def phrase_problem(
    error: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    parent: Mapping[str, Any] | None,
    root: Mapping[str, Any],
) -> str:
    """What was expected and what was sent, phrased for the pydantic error type."""
    kind = str(error.get("type", ""))
    context = error.get("ctx") or {}
    sent_value = error.get("input")
    sent = render_bounded(sent_value)
    expected = describe_schema(schema, root) if schema else None
    expected = expected or _TYPE_EXPECTATIONS.get(kind)

    if kind == "missing":
        return f"Missing required field: expected {expected or 'a value'}. You sent nothing."
    if kind == "extra_forbidden":
        accepted = sorted((parent or {}).get("properties", {}))
        accepts = f"accepted fields are: {', '.join(accepted)}" if accepted else "it takes no fields"
        return f"Unknown field; {accepts}. You sent: {sent}."
    if kind in ("string_too_short", "string_too_long"):
        bound = "at least" if kind == "string_too_short" else "at most"
        limit = context.get("min_length" if kind == "string_too_short" else "max_length")
        length = f" ({len(sent_value)} characters)" if isinstance(sent_value, str) else ""
        return f"Expected a string of {bound} {_count(limit, 'character')}. You sent: {sent}{length}."
    if kind in ("too_short", "too_long"):
        bound = "at least" if kind == "too_short" else "at most"
        limit = context.get("min_length" if kind == "too_short" else "max_length")
        return f"Expected {bound} {_count(limit, 'item')}. You sent {_count(context.get('actual_length'), 'item')}."
    if kind in _COMPARISONS:
        relation, key = _COMPARISONS[kind]
        return f"Expected a number {relation} {context.get(key)}. You sent: {sent}."
    if kind == "string_pattern_mismatch":
        return f"Expected a string matching the pattern {context.get('pattern')!r}. You sent: {sent}."
    if kind in ("literal_error", "enum"):
        return f"Expected {context.get('expected', expected or 'one of the allowed values')}. You sent: {sent}."
    if kind in ("value_error", "assertion_error"):
        detail = str(context.get("error") or error.get("msg", "Invalid value")).rstrip(".")
        return f"{detail}. You sent: {sent}."
    if expected:
        return f"Expected {expected}. You sent: {sent}."
    return f"{str(error.get('msg', 'Invalid value')).rstrip('.')}. You sent: {sent}."


_COMPARISONS: Mapping[str, tuple[str, str]] = {
    "greater_than": ("greater than", "gt"),
    "greater_than_equal": ("greater than or equal to", "ge"),
    "less_than": ("less than", "lt"),
    "less_than_equal": ("less than or equal to", "le"),
    "multiple_of": ("that is a multiple of", "multiple_of"),
}

# What an error type says about the expectation when the schema cannot be found.
_TYPE_EXPECTATIONS: Mapping[str, str] = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean (true or false)",
    "bool_parsing": "a boolean (true or false)",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "datetime_type": "a date-time (ISO 8601)",
    "datetime_parsing": "a date-time (ISO 8601)",
    "datetime_from_date_parsing": "a date-time (ISO 8601)",
    "uuid_type": "a UUID",
    "uuid_parsing": "a UUID",
    "url_type": "a URL",
    "url_parsing": "a URL",
    "decimal_type": "a decimal number",
    "decimal_parsing": "a decimal number",
    "none_required": "null",
}


def _count(amount: Any, noun: str) -> str:
    return f"{amount} {noun}" if amount == 1 else f"{amount} {noun}s"


# -- reading the JSON schema ------------------------------------------------------------------


def _resolve(schema: Mapping[str, Any] | None, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    seen = 0
    while schema is not None and "$ref" in schema and seen < 32:
        reference = str(schema["$ref"])
        target: Any = root
        for part in reference.lstrip("#/").split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target if isinstance(target, Mapping) else None
        seen += 1
    return schema


def _step(schema: Mapping[str, Any] | None, part: Any, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The sub-schema ``part`` (a property name or a list index) leads to, or ``None``."""
    schema = _resolve(schema, root)
    if schema is None:
        return None
    found: Mapping[str, Any] | None
    if isinstance(part, str) and part in schema.get("properties", {}):
        found = schema["properties"][part]
        return found
    if isinstance(part, int) and isinstance(schema.get("items"), Mapping):
        found = schema["items"]
        return found
    if isinstance(part, str) and isinstance(schema.get("additionalProperties"), Mapping):
        found = schema["additionalProperties"]
        return found
    for variant in schema.get("anyOf", ()) or schema.get("oneOf", ()):
        found = _step(variant, part, root)
        if found is not None:
            return found
    return None


def _locate(
    loc: Sequence[Any], root: Mapping[str, Any]
) -> tuple[str, Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """``(display name, schema at loc, parent schema)``; union-member tags in ``loc`` are skipped."""
    name = ""
    schema: Mapping[str, Any] | None = root
    parent: Mapping[str, Any] | None = None
    for part in loc:
        resolved = _resolve(schema, root)
        following = _step(resolved, part, root)
        if following is None and isinstance(part, str) and resolved and ("anyOf" in resolved or "oneOf" in resolved):
            continue  # pydantic names the union member it tried; the caller never wrote that
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
        parent, schema = resolved, following
    return name or "arguments", schema, parent


def describe_schema(schema: Mapping[str, Any] | None, root: Mapping[str, Any]) -> str | None:
    """``{"type": "array", "items": {"type": "string"}}`` -> ``"a list of strings"``."""
    schema = _resolve(schema, root)
    if not schema:
        return None
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(value, ensure_ascii=False) for value in schema["enum"])
    if "const" in schema:
        return f"exactly {json.dumps(schema['const'], ensure_ascii=False)}"
    variants = schema.get("anyOf") or schema.get("oneOf")
    if variants:
        described = [describe_schema(variant, root) for variant in variants]
        return " or ".join(text for text in described if text) or None
    kind = schema.get("type")
    if kind == "array":
        items = _resolve(schema.get("items"), root) if isinstance(schema.get("items"), Mapping) else None
        plural = _plural(items, root) if items else None
        return f"a list of {plural}" if plural else "a list"
    if kind == "object":
        title = schema.get("title")
        return f"an object ({title})" if title and "properties" in schema else "an object"
    if kind == "string":
        return _STRING_FORMATS.get(str(schema.get("format")), "a string")
    return _SINGULAR.get(str(kind)) if kind else None


_SINGULAR = {"integer": "an integer", "number": "a number", "boolean": "a boolean (true or false)", "null": "null"}
_PLURAL = {
    "string": "strings",
    "integer": "integers",
    "number": "numbers",
    "boolean": "booleans",
    "object": "objects",
    "array": "lists",
    "null": "nulls",
}
_STRING_FORMATS = {
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date-time (ISO 8601)",
    "uuid": "a UUID",
    "uri": "a URL",
    "email": "an email address",
}


def _plural(schema: Mapping[str, Any], root: Mapping[str, Any]) -> str | None:
    schema = _resolve(schema, root) or {}
    if "enum" in schema:
        return "values from " + ", ".join(json.dumps(value, ensure_ascii=False) for value in schema["enum"])
    variants = schema.get("anyOf") or schema.get("oneOf")
    if variants:
        plurals = [_plural(variant, root) for variant in variants]
        return " or ".join(text for text in plurals if text) or None
    return _PLURAL.get(str(schema.get("type")))
