"""``fusion-lint lock [--check]`` (DESIGN §8): the lockfile built from the linter's static model.

Each test writes a small project into ``tmp_path``, locks it with the CLI, edits the code, and
checks: the deltas, their classification, the exit codes and the bytes of the lockfile.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_fusion.lockfile import LOCKFILE_NAME, build_lock, diff_locks, dumps_lock, load_lock, records_from_definitions

RunCli = Callable[..., Any]  # conftest's ``run_cli``: returns a CliOutcome (exit_code, stdout, stderr)

HEADER = "from mcp_fusion import tool, resource, prompt, Context, ErrorContract, JsonRpcErrorCode\n\n"


def entry(
    reason: str,
    code: str | int = "NOT_FOUND",
    *,
    when: str = "No invoice has that id",
    recovery: str = "Call list_invoices to find a valid invoice id.",
    retryable: bool | None = None,
    severity: str | None = None,
    thrown_by: str | None = None,
) -> str:
    """``ErrorContract(...)`` source; ``code`` is a member name or an int literal."""
    code_source = code if isinstance(code, int) else f"JsonRpcErrorCode.{code}"
    fields = [f"reason={reason!r}", f"code={code_source}", f"when={when!r}", f"recovery={recovery!r}"]
    for name, value in (("retryable", retryable), ("severity", severity), ("thrown_by", thrown_by)):
        if value is not None:
            fields.append(f"{name}={value!r}")
    return f"ErrorContract({', '.join(fields)})"


def tool_source(name: str, *entries: str, decorator: str = "tool") -> str:
    errors = f", errors=[{', '.join(entries)}]" if entries else ""
    function = name.replace("://", "_").replace("/", "_").replace("{", "").replace("}", "")
    params = "invoice_id: str, ctx: Context" if decorator == "resource" else "ctx: Context"
    return f"@{decorator}({name!r}{errors})\nasync def {function}({params}):\n    return {{}}\n\n\n"


def module(*definitions: str) -> str:
    return HEADER + "".join(definitions)


INVOICE_URI = "billing://invoices/{invoice_id}"
NOT_FOUND = entry("invoice_not_found")
LEDGER_DOWN = entry("ledger_down", "SERVICE_UNAVAILABLE", retryable=True)
BAD_CURSOR = entry("bad_cursor", "INVALID_PARAMS", retryable=False)


def billing(
    get_invoice: tuple[str, ...] = (NOT_FOUND, LEDGER_DOWN),
    list_invoices: tuple[str, ...] = (BAD_CURSOR,),
    *,
    without: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
) -> str:
    """The billing server of these tests: 3 tools and a resource, with the given contracts."""
    definitions = {
        "get_invoice": tool_source("get_invoice", *get_invoice),
        "list_invoices": tool_source("list_invoices", *list_invoices),
        "ping": tool_source("ping"),
        "resource": tool_source(INVOICE_URI, NOT_FOUND, decorator="resource"),
    }
    return module(*(source for key, source in definitions.items() if key not in without), *extra)


BASE = billing()


@pytest.fixture
def project(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Replace the project's Python files with ``files`` (relative path -> source); return the root."""

    def write(files: dict[str, str]) -> Path:
        for old in tmp_path.rglob("*.py"):
            old.unlink()
        (tmp_path / "pyproject.toml").write_text("[tool.fusion-lint]\n")
        for relative, source in files.items():
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / relative).write_text(source)
        return tmp_path

    return write


def lock(run_cli: RunCli, *args: str) -> Any:
    return run_cli("lock", "--no-cache", *args)


def deltas_of(run_cli: RunCli, *args: str) -> tuple[int, list[dict]]:
    outcome = lock(run_cli, "--check", "--output-format", "json", *args)
    return outcome.exit_code, json.loads(outcome.stdout)


# -- §8 classifications -------------------------------------------------------------------------

CHANGES = {
    "tool removed": (
        billing(without=("list_invoices",)),
        [("BREAKING", "definition_removed", "tool", "list_invoices", None)],
    ),
    "resource removed": (
        billing(without=("resource",)),
        [("BREAKING", "definition_removed", "resource", INVOICE_URI, None)],
    ),
    "reason removed": (
        billing(get_invoice=(NOT_FOUND,)),
        [("BREAKING", "reason_removed", "tool", "get_invoice", "ledger_down")],
    ),
    "code changed": (
        billing(list_invoices=(entry("bad_cursor", -32007, retryable=False),)),
        [("BREAKING", "code_changed", "tool", "list_invoices", "bad_cursor")],
    ),
    "retryable true to false": (
        billing(get_invoice=(NOT_FOUND, entry("ledger_down", "SERVICE_UNAVAILABLE", retryable=False))),
        [("BREAKING", "retryable_revoked", "tool", "get_invoice", "ledger_down")],
    ),
    "retryable false to true": (
        billing(list_invoices=(entry("bad_cursor", "INVALID_PARAMS", retryable=True),)),
        [("RISKY", "retryable_granted", "tool", "list_invoices", "bad_cursor")],
    ),
    "reason added": (
        billing(get_invoice=(NOT_FOUND, LEDGER_DOWN, entry("invoice_locked", "CONFLICT"))),
        [("RISKY", "reason_added", "tool", "get_invoice", "invoice_locked")],
    ),
    "new tool with a contract": (
        billing(extra=(tool_source("void_invoice", NOT_FOUND),)),
        [("RISKY", "definition_added", "tool", "void_invoice", None)],
    ),
    "new tool without a contract": (
        billing(extra=(tool_source("health"),)),
        [("SAFE", "definition_added", "tool", "health", None)],
    ),
    "when text changed": (
        billing(list_invoices=(entry("bad_cursor", "INVALID_PARAMS", retryable=False, when="The cursor is stale"),)),
        [("SAFE", "when_changed", "tool", "list_invoices", "bad_cursor")],
    ),
    "recovery text changed": (
        billing(
            list_invoices=(
                entry(
                    "bad_cursor",
                    "INVALID_PARAMS",
                    retryable=False,
                    recovery="Call list_invoices again without a cursor.",
                ),
            )
        ),
        [("SAFE", "recovery_changed", "tool", "list_invoices", "bad_cursor")],
    ),
    "severity changed": (
        billing(
            get_invoice=(NOT_FOUND, entry("ledger_down", "SERVICE_UNAVAILABLE", retryable=True, severity="warning"))
        ),
        [("SAFE", "severity_changed", "tool", "get_invoice", "ledger_down")],
    ),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_change_is_classified_per_section_8(change: str, project, run_cli: RunCli) -> None:
    changed_source, expected = CHANGES[change]
    assert changed_source != BASE, "the edit must change the source"
    project({"app.py": BASE})
    assert lock(run_cli).exit_code == 0

    project({"app.py": changed_source})
    exit_code, deltas = deltas_of(run_cli)

    assert exit_code == 1
    assert [(d["impact"], d["kind"], d["definition"], d["name"], d["reason"]) for d in deltas] == expected


def test_in_sync_check_exits_zero_and_says_so(project, run_cli: RunCli) -> None:
    project({"app.py": BASE})
    lock(run_cli)

    outcome = lock(run_cli, "--check")

    assert outcome.exit_code == 0
    assert outcome.stdout == f"{LOCKFILE_NAME} is in sync with the code: 3 tools, 1 resource, 4 reasons.\n"
    assert deltas_of(run_cli) == (0, [])


def test_text_report_lists_most_severe_first_with_a_summary(project, run_cli: RunCli) -> None:
    project({"app.py": BASE})
    lock(run_cli)
    edited = billing(
        get_invoice=(NOT_FOUND, entry("ledger_down", "SERVICE_UNAVAILABLE", retryable=True, severity="info")),  # SAFE
        without=("list_invoices",),  # BREAKING
        extra=(tool_source("void_invoice", NOT_FOUND),),  # RISKY
    )
    project({"app.py": edited})

    outcome = lock(run_cli, "--check")

    assert outcome.exit_code == 1
    assert outcome.stdout.splitlines() == [
        "BREAKING tool 'list_invoices': tool was removed",
        "RISKY tool 'void_invoice': new tool with an error contract (reasons: invoice_not_found)",
        "SAFE tool 'get_invoice': the log severity of reason 'ledger_down' changed from error to info",
        f"{LOCKFILE_NAME} is out of date: 3 changes (1 breaking, 1 risky, 1 safe). "
        "Review them, then run `fusion-lint lock`.",
    ]


def test_json_deltas_are_the_shared_delta_dicts(project, run_cli: RunCli, tmp_path: Path) -> None:
    project({"app.py": BASE})
    lock(run_cli)
    locked = load_lock(tmp_path / LOCKFILE_NAME)
    project({"app.py": billing(list_invoices=(entry("bad_cursor", "INVALID_PARAMS", retryable=True),))})
    lock(run_cli, "--lockfile", "current.lock")

    _, deltas = deltas_of(run_cli)

    expected = [d.to_dict() for d in diff_locks(locked, load_lock(tmp_path / "current.lock"))]
    assert deltas == json.loads(json.dumps(expected))
    assert deltas[0]["message"] == "reason 'bad_cursor' is now retryable"


# -- what the lockfile records ---------------------------------------------------------------------


def test_lockfile_records_every_field_of_every_entry(project, run_cli: RunCli, tmp_path: Path) -> None:
    project(
        {
            "app.py": module(
                tool_source(
                    "get_invoice",
                    entry(
                        "ledger_down",
                        "SERVICE_UNAVAILABLE",
                        when="Ledger unreachable",
                        recovery="Wait, then call get_invoice again.",
                        retryable=True,
                        severity="warning",
                        thrown_by="service",
                    ),
                ),
                tool_source("ping"),
            )
        }
    )

    outcome = lock(run_cli)

    assert outcome.exit_code == 0
    assert outcome.stdout == f"Wrote {LOCKFILE_NAME}: 2 tools, 0 resources, 1 reason.\n"
    document = json.loads((tmp_path / LOCKFILE_NAME).read_text())
    assert document["tools"]["ping"] == {"errors": {}}
    recorded = document["tools"]["get_invoice"]["errors"]["ledger_down"]
    assert recorded["code"] == "SERVICE_UNAVAILABLE" and recorded["code_value"] == -32000
    assert (recorded["retryable"], recorded["severity"], recorded["thrown_by"]) == (True, "warning", "service")
    assert recorded["when_sha256"] == hashlib.sha256(b"Ledger unreachable").hexdigest()
    assert "Ledger unreachable" not in (tmp_path / LOCKFILE_NAME).read_text()  # a digest, not the text


def test_int_code_and_dict_entries_lock_like_members(project, run_cli: RunCli, tmp_path: Path) -> None:
    project({"app.py": module(tool_source("get_invoice", entry("invoice_not_found")))})
    lock(run_cli)
    as_dict = (
        '{"reason": "invoice_not_found", "code": -32001, "when": "No invoice has that id", '
        '"recovery": "Call list_invoices to find a valid invoice id."}'
    )
    project(
        {"app.py": HEADER + f"@tool('get_invoice', errors=[{as_dict}])\nasync def get_invoice(ctx):\n    return 1\n"}
    )

    assert deltas_of(run_cli) == (0, [])


def test_contracts_shared_across_files_resolve(project, run_cli: RunCli, tmp_path: Path) -> None:
    project(
        {
            "billing/__init__.py": "",
            "billing/contracts.py": HEADER
            + f"COMMON = [{entry('ledger_down', 'SERVICE_UNAVAILABLE', retryable=True)}]\n",
            "billing/tools.py": HEADER
            + "from billing.contracts import COMMON\n\n"
            + f"@tool('get_invoice', errors=[*COMMON, {entry('invoice_not_found')}])\nasync def get_invoice(ctx):\n"
            "    return 1\n",
        }
    )

    assert lock(run_cli).exit_code == 0
    document = json.loads((tmp_path / LOCKFILE_NAME).read_text())
    assert sorted(document["tools"]["get_invoice"]["errors"]) == ["invoice_not_found", "ledger_down"]


def test_static_lock_matches_the_runtime_lock_of_the_same_code(project, run_cli: RunCli, tmp_path: Path) -> None:
    """The server diffs its live definitions against this file: both sides must produce the same bytes."""
    source = BASE + tool_source(
        "texty",
        entry("odd_text", when='Ünïcode "quoted"\nand a newline', recovery="Call ping first, then call texty again."),
    )
    project({"served.py": source})
    lock(run_cli)

    spec = importlib.util.spec_from_file_location("served_for_lock_test", tmp_path / "served.py")
    served = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(served)  # type: ignore[union-attr]
    tools = [served.get_invoice, served.list_invoices, served.ping, served.texty]
    live = build_lock(records_from_definitions(tools, [served.billing_invoices_invoice_id]))

    assert (tmp_path / LOCKFILE_NAME).read_text(encoding="utf-8") == dumps_lock(live)


def test_string_and_constructed_codes_lock_by_name_and_mirror_like_the_runtime(
    project, run_cli: RunCli, tmp_path: Path
) -> None:
    """Closed-then-open codes (DESIGN §3.1, issue 16): a member's name as a string is the member; a
    canonical code locks with the number it mirrors as; a custom one with none."""
    entries = [
        entry("busy").replace("JsonRpcErrorCode.NOT_FOUND", '"SERVER_BUSY"'),
        entry("gone").replace("JsonRpcErrorCode.NOT_FOUND", '"NOT_FOUND"'),
        entry("locked").replace("JsonRpcErrorCode.NOT_FOUND", '"INVOICE_LOCKED"'),
        entry("taken").replace("JsonRpcErrorCode.NOT_FOUND", "JsonRpcErrorCode(-32002)"),
    ]
    project({"served.py": module(tool_source("get_invoice", *entries))})
    assert lock(run_cli).exit_code == 0

    errors = json.loads((tmp_path / LOCKFILE_NAME).read_text())["tools"]["get_invoice"]["errors"]
    assert {reason: (e["code"], e["code_value"]) for reason, e in errors.items()} == {
        "busy": ("SERVER_BUSY", -32000),
        "gone": ("NOT_FOUND", -32001),
        "locked": ("INVOICE_LOCKED", None),
        "taken": ("CONFLICT", -32002),
    }
    spec = importlib.util.spec_from_file_location("served_codes_for_lock_test", tmp_path / "served.py")
    served = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(served)  # type: ignore[union-attr]
    live = build_lock(records_from_definitions([served.get_invoice], []))
    assert (tmp_path / LOCKFILE_NAME).read_text(encoding="utf-8") == dumps_lock(live)


# -- stability: same code, same bytes; paths are not identity --------------------------------------


def test_writing_twice_gives_the_same_bytes(project, run_cli: RunCli, tmp_path: Path) -> None:
    project({"app.py": BASE})
    lock(run_cli)
    first = (tmp_path / LOCKFILE_NAME).read_bytes()

    again = lock(run_cli)

    assert (tmp_path / LOCKFILE_NAME).read_bytes() == first
    assert again.stdout == f"Unchanged {LOCKFILE_NAME}: 3 tools, 1 resource, 4 reasons.\n"
    assert first.endswith(b"\n") and json.loads(first) == json.loads(dumps_lock(json.loads(first)))


def test_order_of_files_definitions_and_entries_is_irrelevant(project, run_cli: RunCli, tmp_path: Path) -> None:
    project(
        {
            "app.py": module(
                tool_source("get_invoice", NOT_FOUND, LEDGER_DOWN),
                tool_source("list_invoices", BAD_CURSOR),
                tool_source("ping"),
            )
        }
    )
    lock(run_cli)
    first = (tmp_path / LOCKFILE_NAME).read_bytes()

    project(
        {
            "a_first.py": module(tool_source("ping")),
            "b/__init__.py": "",
            "b/z_last.py": module(
                tool_source("list_invoices", BAD_CURSOR), tool_source("get_invoice", LEDGER_DOWN, NOT_FOUND)
            ),
        }
    )
    lock(run_cli)

    assert (tmp_path / LOCKFILE_NAME).read_bytes() == first


def test_lock_written_on_one_tree_is_in_sync_after_files_move(project, run_cli: RunCli, tmp_path: Path) -> None:
    project(
        {
            "server/__init__.py": "",
            "server/contracts.py": HEADER
            + f"LEDGER = [{entry('ledger_down', 'SERVICE_UNAVAILABLE', retryable=True)}]\n",
            "server/invoices.py": HEADER
            + "from server.contracts import LEDGER\n\n"
            + f"@tool('get_invoice', errors=[*LEDGER, {entry('invoice_not_found')}])\nasync def get_invoice(ctx):\n"
            "    return 1\n" + tool_source("ping"),
        }
    )
    assert lock(run_cli).exit_code == 0
    locked = (tmp_path / LOCKFILE_NAME).read_bytes()

    # Rename the package, the modules and move one tool to a new file; the import follows.
    (tmp_path / "server").rename(tmp_path / "billing_api")
    (tmp_path / "billing_api" / "contracts.py").rename(tmp_path / "billing_api" / "shared_errors.py")
    invoices = (tmp_path / "billing_api" / "invoices.py").read_text()
    (tmp_path / "billing_api" / "invoices.py").unlink()
    moved, ping = invoices.split("@tool('ping')")
    (tmp_path / "billing_api" / "handlers").mkdir()
    (tmp_path / "billing_api" / "handlers" / "__init__.py").write_text("")
    (tmp_path / "billing_api" / "handlers" / "get.py").write_text(
        moved.replace("from server.contracts import LEDGER", "from billing_api.shared_errors import LEDGER")
    )
    (tmp_path / "health.py").write_text(HEADER + "@tool('ping')" + ping)

    outcome = lock(run_cli, "--check")

    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    lock(run_cli)
    assert (tmp_path / LOCKFILE_NAME).read_bytes() == locked


# -- where the lockfile lives -------------------------------------------------------------------


def test_lockfile_sits_at_the_config_root_when_run_from_a_subdirectory(
    project, run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project({"pkg/__init__.py": "", "pkg/app.py": BASE, "other.py": module(tool_source("status"))})
    monkeypatch.chdir(tmp_path / "pkg")

    outcome = lock(run_cli)

    assert outcome.exit_code == 0
    document = json.loads((tmp_path / LOCKFILE_NAME).read_text())
    assert "status" in document["tools"], "without paths the whole project is locked"
    assert not (tmp_path / "pkg" / LOCKFILE_NAME).exists()


def test_lockfile_option_and_paths_choose_what_is_locked_and_where(project, run_cli: RunCli, tmp_path: Path) -> None:
    project({"api/app.py": BASE, "scripts/demo.py": module(tool_source("demo_only"))})

    outcome = lock(run_cli, "api", "--lockfile", "locks/api.lock")

    assert outcome.exit_code == 2, "a lockfile in a missing directory cannot be written"
    assert "cannot write the lockfile" in outcome.stderr
    (tmp_path / "locks").mkdir()
    assert lock(run_cli, "api", "--lockfile", "locks/api.lock").exit_code == 0
    document = json.loads((tmp_path / "locks" / "api.lock").read_text())
    assert sorted(document["tools"]) == ["get_invoice", "list_invoices", "ping"]
    assert not (tmp_path / LOCKFILE_NAME).exists()


def test_without_config_the_lockfile_goes_into_the_directory_given(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "app.py").write_text(BASE)

    assert lock(run_cli, "srv").exit_code == 0
    assert (tmp_path / "srv" / LOCKFILE_NAME).is_file()


# -- exit 2: nothing to compare with, or nothing faithful to write -----------------------------------


def test_check_without_a_lockfile_is_a_one_line_exit_2(project, run_cli: RunCli) -> None:
    project({"app.py": BASE})

    outcome = lock(run_cli, "--check")

    assert outcome.exit_code == 2
    assert outcome.stderr == (
        f"fusion-lint: error: {LOCKFILE_NAME}: no lockfile here; create it with `fusion-lint lock`\n"
    )


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"format": "something-else", "version": 1, "tools": {}, "resources": {}}', '"format" must be'),
        (
            '{"format": "fusion-contracts-lock", "version": 99, "tools": {}, "resources": {}}',
            "unsupported lockfile version",
        ),
        (b"\xff\xfe garbage", "cannot read the lockfile"),
    ],
    ids=["not-json", "wrong-format", "future-version", "not-utf8"],
)
def test_unreadable_lockfile_is_exit_2(content, message: str, project, run_cli: RunCli, tmp_path: Path) -> None:
    project({"app.py": BASE})
    target = tmp_path / LOCKFILE_NAME
    target.write_bytes(content) if isinstance(content, bytes) else target.write_text(content)

    outcome = lock(run_cli, "--check")

    assert outcome.exit_code == 2
    assert message in outcome.stderr and outcome.stderr.count("\n") == 1


UNLOCKABLE = {
    "contract from a call": (
        HEADER + "from helpers import build_errors\n\n@tool('get_invoice', errors=build_errors())\n"
        "async def get_invoice(ctx):\n    return 1\n",
        "app.py:5: tool 'get_invoice': errors= (a call to build_errors()) cannot be resolved statically",
    ),
    "spread of an unknown name": (
        HEADER + f"from elsewhere import SHARED\n\n@tool('get_invoice', errors=[*SHARED, {entry('a')}])\n"
        "async def get_invoice(ctx):\n    return 1\n",
        "tool 'get_invoice': 'elsewhere.SHARED'",
    ),
    "f-string recovery": (
        module(tool_source("get_invoice", entry("a").replace("recovery='", "recovery=f'"))),
        "tool 'get_invoice': entry 'a': recovery is an f-string, which cannot be resolved statically",
    ),
    "unknown code": (
        module(tool_source("get_invoice", entry("a", "NOPE"))),
        "entry 'a': code is JsonRpcErrorCode.NOPE, which is no error code",
    ),
    "missing recovery": (
        HEADER + "@tool('get_invoice', errors=[ErrorContract(reason='a', code=-32001, when='x')])\n"
        "async def get_invoice(ctx):\n    return 1\n",
        "entry 'a': missing 'recovery' (the runtime rejects it)",
    ),
    "retryable not a bool": (
        module(tool_source("get_invoice", entry("a").replace(")", ", retryable='yes')"))),
        "entry 'a': retryable is 'yes'; expected True, False or None",
    ),
    "file that does not parse": (
        HEADER + "@tool('get_invoice')\nasync def get_invoice(ctx:\n    return 1\n",
        "app.py:4: FL000 syntax error: '(' was never closed; its definitions cannot be read",
    ),
}


@pytest.mark.parametrize("case", list(UNLOCKABLE))
def test_what_cannot_be_locked_faithfully_is_refused_and_named(
    case: str, project, run_cli: RunCli, tmp_path: Path
) -> None:
    source, message = UNLOCKABLE[case]
    project({"app.py": source, "ok.py": module(tool_source("ping"))})

    written = lock(run_cli)
    checked = lock(run_cli, "--check")

    for outcome in (written, checked):
        assert outcome.exit_code == 2
        assert outcome.stderr.startswith("fusion-lint: error: cannot lock the error contracts: 1 place cannot")
        assert message in outcome.stderr, outcome.stderr
    assert not (tmp_path / LOCKFILE_NAME).exists(), "a partial lockfile must not be written"


def test_a_tool_whose_name_is_computed_is_skipped_with_a_line_and_the_rest_is_locked(
    project, run_cli: RunCli, tmp_path: Path
) -> None:
    computed = (
        HEADER + "PREFIX = 'get'\n\n@tool(f'{PREFIX}_invoice', errors=build())\nasync def get_invoice(ctx):\n"
        "    return 1\n\n@tool(PREFIX + '_status')\nasync def status(ctx):\n    return 1\n"
    )
    project({"app.py": computed, "ok.py": module(tool_source("ping", entry("a")))})

    written = lock(run_cli)

    assert written.exit_code == 0, written.stderr
    skipped = [line for line in written.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 2, written.stderr  # one line each, naming the place
    assert skipped[0].startswith("app.py:5: skipped tool") and skipped[1].startswith("app.py:9: skipped tool")
    assert all(
        line.endswith("its name is computed, so it has no key to lock; it is not in the lockfile") for line in skipped
    )
    document = json.loads((tmp_path / LOCKFILE_NAME).read_text())
    assert list(document["tools"]) == ["ping"]
    checked = lock(run_cli, "--check")
    assert checked.exit_code == 0 and checked.stderr.count("skipped") == 2
    # A contract that cannot be read is still refused: only the missing name is skipped.
    project(
        {"app.py": computed, "ok.py": HEADER + "@tool('ping', errors=build())\nasync def ping(ctx):\n    return 1\n"}
    )
    assert lock(run_cli).exit_code == 2


def test_one_name_with_two_contracts_is_refused_but_identical_copies_lock(project, run_cli: RunCli) -> None:
    same = module(tool_source("get_invoice", entry("invoice_not_found")))
    project({"a.py": same, "b.py": same})
    assert lock(run_cli).exit_code == 0

    project({"a.py": same, "b.py": module(tool_source("get_invoice", entry("invoice_not_found", "CONFLICT")))})
    outcome = lock(run_cli)

    assert outcome.exit_code == 2
    assert "a.py:3: tool 'get_invoice': defined 2 times with different contracts (a.py:3, b.py:3)" in outcome.stderr
    assert "b.py:3: tool 'get_invoice'" in outcome.stderr


def test_a_flood_of_refusals_is_capped_and_counted(project, run_cli: RunCli) -> None:
    project({"app.py": module(*(tool_source(f"tool_{i:02}", entry("a", "NOPE")) for i in range(55)))})

    outcome = lock(run_cli)

    assert outcome.exit_code == 2
    lines = outcome.stderr.splitlines()
    assert lines[0] == "fusion-lint: error: cannot lock the error contracts: 55 places cannot be read statically"
    assert lines[1].startswith("  app.py:3: tool 'tool_00': entry 'a': code is JsonRpcErrorCode.NOPE")
    assert lines[-2] == "  ... and 5 more" and len(lines) == 1 + 50 + 2


def test_errors_none_is_no_contract_and_prompts_are_not_locked(project, run_cli: RunCli, tmp_path: Path) -> None:
    project(
        {
            "app.py": HEADER + "@tool('ping', errors=None)\nasync def ping(ctx):\n    return 1\n\n"
            "@prompt('summarise')\ndef summarise(text: str) -> str:\n    return text\n"
        }
    )

    assert lock(run_cli).exit_code == 0
    document = json.loads((tmp_path / LOCKFILE_NAME).read_text())
    assert document["tools"] == {"ping": {"errors": {}}} and document["resources"] == {}


def test_unknown_path_is_exit_2(project, run_cli: RunCli) -> None:
    project({"app.py": BASE})

    outcome = lock(run_cli, "nowhere")

    assert outcome.exit_code == 2
    assert outcome.stderr == "fusion-lint: error: nowhere: no such file or directory\n"


def test_pre_commit_hook_invocation_checks_the_whole_project(project, run_cli: RunCli) -> None:
    """The ``fusion-lint-lock`` hook runs ``fusion-lint lock --check`` with ``pass_filenames: false``."""
    project({"app.py": BASE})
    lock(run_cli)
    assert run_cli("lock", "--check").exit_code == 0

    project({"app.py": billing(get_invoice=(NOT_FOUND, entry("ledger_down", "SERVICE_UNAVAILABLE", retryable=False)))})
    outcome = run_cli("lock", "--check")

    assert outcome.exit_code == 1
    assert outcome.stdout.startswith("BREAKING tool 'get_invoice': reason 'ledger_down' is no longer retryable")


def test_check_allow_missing_passes_before_the_first_lock_and_checks_after(
    project, run_cli: RunCli, tmp_path: Path
) -> None:
    project({"app.py": module(tool_source("ping", entry("a")))})

    first = lock(run_cli, "--check", "--allow-missing")

    assert first.exit_code == 0, first.stderr
    assert "no lockfile yet, nothing to check (1 tool, 0 resources, 1 reason would be locked)" in first.stderr
    assert "run `fusion-lint lock`" in first.stderr
    assert not (tmp_path / LOCKFILE_NAME).exists(), "the check creates nothing"
    assert lock(run_cli, "--check").exit_code == 2  # without the flag a missing lockfile is still an error

    assert lock(run_cli).exit_code == 0
    project({"app.py": module(tool_source("ping", entry("a"), entry("b")))})
    assert lock(run_cli, "--check", "--allow-missing").exit_code == 1  # from then on it checks
