"""The contract lockfile (DESIGN §8): one document format, one delta classification."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from budget import budget
from hypothesis import given
from hypothesis import strategies as st

from mcp_fusion import ErrorContract, JsonRpcErrorCode, resource, tool
from mcp_fusion.lockfile import (
    LOCK_FORMAT,
    LOCK_VERSION,
    Delta,
    LockEntry,
    LockfileError,
    LockRecord,
    build_lock,
    diff_locks,
    dumps_lock,
    load_lock,
    loads_lock,
    records_from_definitions,
    write_lock,
)

WHEN = "No invoice has that ID"
RECOVERY = "Call list_invoices to find a real invoice ID."


def entry(reason: str = "invoice_missing", **changes: object) -> dict:
    base = {
        "reason": reason,
        "code": "NOT_FOUND",
        "when": WHEN,
        "recovery": RECOVERY,
        "retryable": None,
        "severity": None,
        "thrown_by": None,
    }
    return {**base, **changes}


def lock_of(*tools: tuple[str, list[dict]], resources: tuple[tuple[str, list[dict]], ...] = ()) -> dict:
    records = [{"kind": "tool", "name": name, "entries": entries} for name, entries in tools]
    records += [{"kind": "resource", "name": name, "entries": entries} for name, entries in resources]
    return build_lock(records)


def test_document_shape_and_digests() -> None:
    document = lock_of(("get_invoice", [entry(retryable=False, severity="info", thrown_by="service")]))
    assert document == {
        "format": LOCK_FORMAT,
        "version": LOCK_VERSION,
        "resources": {},
        "tools": {
            "get_invoice": {
                "errors": {
                    "invoice_missing": {
                        "code": "NOT_FOUND",
                        "code_value": -32001,
                        "retryable": False,
                        "severity": "info",
                        "thrown_by": "service",
                        "when_sha256": hashlib.sha256(WHEN.encode()).hexdigest(),
                        "recovery_sha256": hashlib.sha256(RECOVERY.encode()).hexdigest(),
                    }
                }
            }
        },
    }


def test_serialisation_is_deterministic_sorted_and_newline_terminated(tmp_path: Path) -> None:
    forward = lock_of(("b_tool", [entry("z_reason"), entry("a_reason")]), ("a_tool", []))
    backward = lock_of(("a_tool", []), ("b_tool", [entry("a_reason"), entry("z_reason")]))
    text = dumps_lock(forward)
    assert text == dumps_lock(backward)
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert list(json.loads(text)) == ["format", "resources", "tools", "version"]
    assert text.index('"a_tool"') < text.index('"b_tool"') and text.index('"a_reason"') < text.index('"z_reason"')

    path = tmp_path / "fusion-contracts.lock"
    assert write_lock(path, forward) is True
    first = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    assert write_lock(path, backward) is False  # identical bytes: the file is not rewritten
    assert path.read_bytes() == first and path.stat().st_mtime_ns == mtime
    assert load_lock(path) == forward


def test_codes_given_as_member_value_or_name_lock_the_same() -> None:
    as_member = lock_of(("t", [entry(code=JsonRpcErrorCode.CONFLICT)]))
    as_value = lock_of(("t", [entry(code=-32002)]))
    as_name = lock_of(("t", [entry(code="CONFLICT")]))
    assert as_member == as_value == as_name
    unknown = lock_of(("t", [entry(code=-1)]))["tools"]["t"]["errors"]["invoice_missing"]
    assert (unknown["code"], unknown["code_value"]) == (None, -1)


def test_records_from_live_definitions_match_static_records() -> None:
    contract = [ErrorContract(reason="invoice_missing", code=JsonRpcErrorCode.NOT_FOUND, when=WHEN, recovery=RECOVERY)]

    @tool("get_invoice", errors=contract)
    def get_invoice(invoice_id: str) -> None: ...

    @tool("ping")
    def ping() -> None: ...

    @resource("billing://invoices/{invoice_id}", errors=contract)
    def invoice(invoice_id: str) -> None: ...

    live = build_lock(records_from_definitions([get_invoice, ping], [invoice]))
    static = build_lock(
        [
            LockRecord("tool", "get_invoice", (LockEntry("invoice_missing", "NOT_FOUND", -32001, WHEN, RECOVERY),)),
            {"kind": "tool", "name": "ping", "entries": []},
            {"kind": "resource", "name": "billing://invoices/{invoice_id}", "entries": [entry()]},
        ]
    )
    assert live == static


def test_a_duplicate_reason_is_recorded_once() -> None:
    document = lock_of(("t", [entry(code="NOT_FOUND"), entry(code="CONFLICT")]))
    assert document["tools"]["t"]["errors"]["invoice_missing"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("{", "not valid JSON (line 1, column 2)"),
        ("[]", "expected a JSON object at the top level"),
        ('{"format": "other", "version": 1, "tools": {}, "resources": {}}', '"format" must be'),
        (
            '{"format": "fusion-contracts-lock", "version": 99, "tools": {}, "resources": {}}',
            "unsupported lockfile version 99",
        ),
        (
            '{"format": "fusion-contracts-lock", "version": 1, "tools": [], "resources": {}}',
            '"tools" must be an object',
        ),
        (
            '{"format": "fusion-contracts-lock", "version": 1, "tools": {"t": {}}, "resources": {}}',
            "tools.t: expected an object",
        ),
        (
            '{"format": "fusion-contracts-lock", "version": 1, "tools": {"t": {"errors": {"r": {}}}}, "resources": {}}',
            "tools.t.errors.r: missing code, code_value",
        ),
    ],
)
def test_loading_errors_are_clear(text: str, problem: str) -> None:
    with pytest.raises(LockfileError, match="^my.lock: ") as caught:
        loads_lock(text, source="my.lock")
    assert problem in str(caught.value)


def test_loading_an_entry_with_a_wrong_type() -> None:
    document = lock_of(("t", [entry()]))
    document["tools"]["t"]["errors"]["invoice_missing"]["retryable"] = "yes"
    with pytest.raises(
        LockfileError, match=r"tools.t.errors.invoice_missing.retryable: expected bool or null, got 'yes'"
    ):
        loads_lock(dumps_lock(document), source="x")


def test_a_missing_lockfile_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(LockfileError, match="no lockfile here; create it with `fusion-lint lock`"):
        load_lock(tmp_path / "fusion-contracts.lock")


BASE = (("get_invoice", [entry(), entry("ledger_down", code="SERVICE_UNAVAILABLE", retryable=True)]),)


@pytest.mark.parametrize(
    "new, expected",
    [
        ((), [("BREAKING", "definition_removed", "get_invoice", None)]),
        ((("get_invoice", [entry()]),), [("BREAKING", "reason_removed", "get_invoice", "ledger_down")]),
        (
            (("get_invoice", [entry(code="CONFLICT"), BASE[0][1][1]]),),
            [("BREAKING", "code_changed", "get_invoice", "invoice_missing")],
        ),
        (
            (("get_invoice", [entry(), {**BASE[0][1][1], "retryable": False}]),),
            [("BREAKING", "retryable_revoked", "get_invoice", "ledger_down")],
        ),
        (
            (("get_invoice", [entry(), {**BASE[0][1][1], "retryable": None}]),),
            [("BREAKING", "retryable_revoked", "get_invoice", "ledger_down")],
        ),
        (
            (("get_invoice", [*BASE[0][1], entry("invoice_locked", code="CONFLICT")]),),
            [("RISKY", "reason_added", "get_invoice", "invoice_locked")],
        ),
        (
            (("get_invoice", [entry(retryable=True), BASE[0][1][1]]),),
            [("RISKY", "retryable_granted", "get_invoice", "invoice_missing")],
        ),
        ((*BASE, ("void_invoice", [entry()])), [("RISKY", "definition_added", "void_invoice", None)]),
        ((*BASE, ("ping", [])), [("SAFE", "definition_added", "ping", None)]),
        (
            (("get_invoice", [entry(when="Gone"), BASE[0][1][1]]),),
            [("SAFE", "when_changed", "get_invoice", "invoice_missing")],
        ),
        (
            (("get_invoice", [entry(recovery="Ask the user."), BASE[0][1][1]]),),
            [("SAFE", "recovery_changed", "get_invoice", "invoice_missing")],
        ),
        (
            (("get_invoice", [entry(severity="info"), BASE[0][1][1]]),),
            [("SAFE", "severity_changed", "get_invoice", "invoice_missing")],
        ),
        (
            (("get_invoice", [entry(retryable=False), BASE[0][1][1]]),),
            [("SAFE", "retryable_clarified", "get_invoice", "invoice_missing")],
        ),
        (
            (("get_invoice", [entry(thrown_by="service"), BASE[0][1][1]]),),
            [("SAFE", "thrown_by_changed", "get_invoice", "invoice_missing")],
        ),
        (BASE, []),
    ],
)
def test_delta_classification(new: tuple, expected: list[tuple]) -> None:
    deltas = diff_locks(lock_of(*BASE), lock_of(*new))
    assert [(d.severity, d.kind, d.name, d.reason) for d in deltas] == expected


def test_resources_are_diffed_too() -> None:
    old = lock_of(resources=(("billing://invoices/{id}", [entry()]),))
    deltas = diff_locks(old, lock_of())
    assert [(d.severity, d.definition_kind, d.name) for d in deltas] == [
        ("BREAKING", "resource", "billing://invoices/{id}")
    ]


def test_deltas_are_sorted_most_severe_first_and_name_tool_and_reason() -> None:
    old = lock_of(("a_tool", [entry(), entry("gone_reason")]), ("b_tool", [entry()]))
    new = lock_of(("a_tool", [entry(when="changed"), entry("new_reason")]), ("b_tool", [entry(code="CONFLICT")]))
    deltas = diff_locks(old, new)
    assert [delta.describe() for delta in deltas] == [
        "BREAKING tool 'a_tool': reason 'gone_reason' (NOT_FOUND) was removed",
        "BREAKING tool 'b_tool': reason 'invoice_missing' now fails with CONFLICT (was NOT_FOUND)",
        "RISKY tool 'a_tool': new reason 'new_reason' (NOT_FOUND): a new failure mode",
        "SAFE tool 'a_tool': the 'when' text of reason 'invoice_missing' changed",
    ]
    assert deltas[0].to_wire() == {
        "impact": "BREAKING",
        "kind": "reason_removed",
        "reason": "gone_reason",
        "message": "reason 'gone_reason' (NOT_FOUND) was removed",
    }
    assert isinstance(deltas[0], Delta)


reasons = st.from_regex(r"[a-z]{1,6}(_[a-z]{1,4})?", fullmatch=True)
entries = st.builds(
    lambda reason, code, retryable, when: entry(reason, code=code, retryable=retryable, when=when),
    reasons,
    st.sampled_from(list(JsonRpcErrorCode)),
    st.sampled_from([None, True, False]),
    st.text(max_size=20),
)
contracts = st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.lists(entries, max_size=4), max_size=4)


@budget(60)
@given(contracts, contracts)
def test_diff_properties(old_tools: dict, new_tools: dict) -> None:
    old, new = lock_of(*old_tools.items()), lock_of(*new_tools.items())
    assert diff_locks(old, old) == []
    deltas = diff_locks(old, new)
    ranks = [("BREAKING", "RISKY", "SAFE").index(delta.severity) for delta in deltas]
    assert ranks == sorted(ranks)
    assert loads_lock(dumps_lock(new)) == new
    removed = {(d.name, d.reason) for d in deltas if d.kind == "reason_removed"}
    assert removed == {
        (name, reason)
        for name in set(old_tools) & set(new_tools)
        for reason in old["tools"][name]["errors"]
        if reason not in new["tools"][name]["errors"]
    }
