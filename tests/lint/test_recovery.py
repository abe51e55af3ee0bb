"""FL400 recovery-names-internal and FL401 recovery-unknown-tool (DESIGN §5.4) on realistic hints.

Two layers: the text scanner on its own (fast, many hints: ordinary English must stay silent), and
whole projects through the engine (tools collected across files, constants resolved, one diagnostic
per rule per recovery value, located at the value).
"""

from __future__ import annotations

import pytest

from fusion_lint.project.view import Vocabulary
from fusion_lint.rules._recovery_text import scan_recovery

PROJECT_VOCABULARY = Vocabulary(
    tools=frozenset({"search_articles", "fetch_articles", "list_invoices", "get_invoice", "billing.refund"}),
    arguments=frozenset({"pmids", "query", "invoice_id", "customer_id", "page_size", "filters"}),
    reasons=frozenset({"no_match", "upstream_down"}),
    all_tools_named=True,
)

# Hints an MCP server author would write; none names anything the model cannot reach.
PASSING_HINTS = [
    "Wait a few minutes, then try again.",
    "Call search_articles first to discover valid PMIDs.",
    "Wait a few minutes, then call fetch_articles again.",
    "List invoices first, then retry with a real ID.",
    "Retry with a valid invoice_id from list_invoices.",
    "Call `list_invoices` to find the id, then pass it as `invoice_id`.",
    "Reduce page_size to 100 or fewer and call list_invoices again.",
    "Set the sort_order argument to 'asc' and call list_invoices again.",
    "Pass max_results=20 or fewer and retry the search.",
    "Narrow the search, e.g. add a year, i.e. fewer results, then call search_articles again.",
    "Check https://status.example.com/incidents/api_v2 for outages, then retry in 5 minutes.",
    "See status.example.com for outages and retry in a few minutes.",
    "Email support@billing-example.com if the problem persists after a retry.",
    "U.S. customers must pass a ZIP code; add it and call get_invoice again.",
    "This server needs client v1.2 or later; upgrade, then retry the same call.",
    "Wait 2.5 seconds (the limit is 3.5 calls per second) and call fetch_articles again.",
    "The report is still being generated... wait a minute and call get_invoice again.",
    "The invoice is locked.Then wait a minute and call get_invoice again.",
    "Use a well-known, up-to-date customer id from list_invoices and retry.",
    "If the result is RATE_LIMITED again, wait 30 seconds before the next call.",
    "If this keeps failing with upstream_down, stop and tell the user the service is down.",
    "Fetch fewer item(s) per call: split pmids into batches of 50 and call fetch_articles for each.",
    "_Important_: call list_invoices first, then retry with one of its ids.",
    "Call billing.refund with the same invoice_id to undo the charge.",
    "Narrow filters.date_from to the last 30 days and call search_articles again.",
    "Pass `pmids` as a list of strings, not `None`, and call fetch_articles again.",
    "Call search_articles() with a shorter query, then fetch_articles with its ids.",
    "The service runs on Node.js upstream and is down; wait 10 minutes - then retry.",
    "Don't retry: the invoice was deleted. Ask the user for another one.",
    "Call one of the tools listed in available_actions instead; tool names are case-sensitive.",
    "Wait for the time in retry_after, then call get_invoice again.",
]


@pytest.mark.parametrize("hint", PASSING_HINTS)
def test_ordinary_hints_name_nothing(hint: str) -> None:
    scan = scan_recovery(hint, PROJECT_VOCABULARY)
    assert scan.internal == [] and scan.tool_mentions == [], (scan.internal, scan.tool_mentions)


@pytest.mark.parametrize(
    ("hint", "internal"),
    [
        ("Call register_table() before retrying the import.", [("register_table()", "call")]),
        ("Run `cache.invalidate(key)` and call get_invoice again.", [("cache.invalidate(key)", "call")]),
        ("Run billing.cache.reset and then call get_invoice again.", [("billing.cache.reset", "path")]),
        ("Clear the _invoice_cache and retry with list_invoices.", [("_invoice_cache", "private")]),
        ("Fix the api_key entry in config.yaml, then call get_invoice again.", [("config.yaml", "file")]),
        (
            "Check settings.py and /etc/billing/billing.conf for the right region.",
            [("settings.py", "file"), ("/etc/billing/billing.conf", "file")],
        ),
        ("Restart the worker with --force and call get_invoice again.", [("--force", "flag")]),
        ("Set ENABLE_SYNC=1 on the server and retry the call.", [("ENABLE_SYNC=1", "setting")]),
        ("Increase MAX_RETRIES, then call get_invoice again.", [("MAX_RETRIES", "constant")]),
        ("Add the token to `.env` and try again later.", [(".env", "file")]),
    ],
)
def test_internal_names_are_found(hint: str, internal: list) -> None:
    scan = scan_recovery(hint, PROJECT_VOCABULARY)
    assert scan.internal == internal
    assert scan.tool_mentions == [], "a token FL400 claims is never also an unknown tool"


def test_every_part_of_a_dotted_path_belongs_to_fl400() -> None:
    scan = scan_recovery("Call billing_service.invoice_store.reset_all then retry.", PROJECT_VOCABULARY)
    assert scan.internal == [("billing_service.invoice_store.reset_all", "path")]
    assert scan.tool_mentions == []


@pytest.mark.parametrize(
    ("hint", "unknown"),
    [
        ("Call search_article first to discover valid PMIDs.", ["search_article"]),
        ("Use `lookup` to find the invoice id, then retry.", ["lookup"]),
        ("Call find_customer or `searchInvoices`, then get_invoice.", ["find_customer", "searchInvoices"]),
        ("Call the refresh_token tool, then retry the same request.", ["refresh_token"]),
    ],
)
def test_unknown_tools_are_found(hint: str, unknown: list[str]) -> None:
    scan = scan_recovery(hint, PROJECT_VOCABULARY)
    assert scan.tool_mentions == unknown
    assert scan.internal == []


def test_tokens_come_back_once_in_text_order() -> None:
    scan = scan_recovery(
        "Run `--force`, then reset() and `reset()` again; call nope_tool, then nope_tool.", PROJECT_VOCABULARY
    )
    assert scan.internal == [("--force", "flag"), ("reset()", "call")]
    assert scan.tool_mentions == ["nope_tool"]


# ----- whole projects ------------------------------------------------------------------------------

HEADER = "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context\n"

SEARCH_MODULE = (
    HEADER
    + """
@tool("search_articles", description="Search PubMed")
async def search_articles(query: str, page_size: int = 20) -> list:
    return []
"""
)


def fetch_module(*recoveries: str) -> str:
    entries = "".join(
        f"""
        ErrorContract(
            reason="failure_{index}",
            code=JsonRpcErrorCode.NOT_FOUND,
            when="Nothing found",
            recovery="{recovery}",
        ),"""
        for index, recovery in enumerate(recoveries)
    )
    fails = "".join(f'    if not pmids:\n        raise ctx.fail("failure_{i}")\n' for i in range(len(recoveries)))
    return (
        HEADER
        + f'\n@tool("fetch_articles", errors=[{entries}\n])\n'
        + ("async def fetch_articles(pmids: list[str], ctx: Context) -> list:\n" + fails + "    return []\n")
    )


def recovery_lines(source: str) -> list[int]:
    return [number for number, line in enumerate(source.splitlines(), 1) if "recovery=" in line]


def test_tools_of_other_files_are_known(lint_project) -> None:
    source = fetch_module(
        "Call search_articles with a broader query to discover valid PMIDs.",
        "Reduce page_size on search_articles, then call fetch_articles again.",
    )
    linted = lint_project(
        {"app/search.py": SEARCH_MODULE, "app/fetch.py": source, "app/__init__.py": ""}, paths=["app/fetch.py"]
    )
    assert not linted.of("FL400") and not linted.of("FL401"), linted.summary()


def test_an_unknown_tool_fires_once_naming_every_token(lint_project) -> None:
    source = fetch_module("Call search_article or `lookup_pmid` first, then retry; search_article is fast.")
    linted = lint_project({"search.py": SEARCH_MODULE, "fetch.py": source})
    (diagnostic,) = linted.of("FL401")
    assert diagnostic.message.startswith("tool 'fetch_articles': entry 'failure_0': recovery names ")
    assert "'search_article' (did you mean 'search_articles'?)" in diagnostic.message
    assert "'lookup_pmid'" in diagnostic.message
    assert linted.relative(diagnostic) == "fetch.py"
    assert diagnostic.span.line == recovery_lines(source)[0]
    assert not linted.of("FL400")


def test_internal_names_fire_once_naming_every_token(lint_project) -> None:
    source = fetch_module(
        "Run ncbi.client.reset() or clear _pmid_cache, set NCBI_API_KEY in .env or config.yaml, "
        "restart with --no-cache, then call search_articles."
    )
    linted = lint_project({"search.py": SEARCH_MODULE, "fetch.py": source})
    (diagnostic,) = linted.of("FL400")
    for token in (
        "'ncbi.client.reset()' (a function call)",
        "'_pmid_cache' (a private name)",
        "'NCBI_API_KEY' (a config constant)",
        "'.env' (a file)",
        "'config.yaml' (a file)",
        "'--no-cache' (a command-line flag)",
    ):
        assert token in diagnostic.message, diagnostic.message
    assert diagnostic.span.line == recovery_lines(source)[0]
    assert not linted.of("FL401"), "nothing FL400 claimed is also checked as a tool"


def test_one_diagnostic_per_rule_per_recovery(lint_project) -> None:
    source = fetch_module(
        "Call reset_cache() and then find_pmids to rebuild the list.",
        "Wait a few minutes, then call fetch_articles again.",
        "Call lookup_pmids, then edit settings.py and retry fetch_articles.",
    )
    linted = lint_project({"search.py": SEARCH_MODULE, "fetch.py": source})
    first, _, third = recovery_lines(source)
    assert linted.lines("FL400") == [first, third]
    assert linted.lines("FL401") == [first, third]
    by_line = {d.span.line: d.message for d in linted.of("FL401")}
    assert "'find_pmids'" in by_line[first] and "reset_cache" not in by_line[first]
    assert "'lookup_pmids'" in by_line[third]


def test_a_recovery_constant_is_read_and_reported_where_it_is_used(lint_project) -> None:
    constants = 'RETRY_HINT = "Run the reindex.py script, then call search_articles again."\n'
    source = (
        HEADER
        + "from hints import RETRY_HINT\n"
        + """
@tool("fetch_articles", errors=[
    ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No data",
                  recovery=RETRY_HINT),
])
async def fetch_articles(pmids: list[str], ctx: Context) -> list:
    raise ctx.fail("no_match")
"""
    )
    linted = lint_project({"hints.py": constants, "search.py": SEARCH_MODULE, "fetch.py": source})
    (diagnostic,) = linted.of("FL400")
    assert "'reindex.py' (a file)" in diagnostic.message
    assert linted.relative(diagnostic) == "fetch.py"
    assert diagnostic.span.line == recovery_lines(source)[0]
    line = source.splitlines()[diagnostic.span.line - 1]
    assert line[diagnostic.span.col :].startswith("RETRY_HINT")


def test_a_shared_contract_reports_each_recovery_once(lint_project) -> None:
    shared = (
        HEADER
        + """
COMMON_ERRORS = [
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE, when="NCBI is down",
                  recovery="Wait a few minutes, then call refresh_session before retrying.", thrown_by="service"),
]
"""
    )
    tools = (
        HEADER
        + """from errors import COMMON_ERRORS

@tool("search_articles", errors=COMMON_ERRORS)
async def search_articles(query: str, ctx: Context) -> list:
    return []

@tool("fetch_articles", errors=[*COMMON_ERRORS])
async def fetch_articles(pmids: list[str], ctx: Context) -> list:
    return []
"""
    )
    linted = lint_project({"errors.py": shared, "tools.py": tools})
    (diagnostic,) = linted.of("FL401")
    assert linted.relative(diagnostic) == "errors.py" and "'refresh_session'" in diagnostic.message


def test_arguments_and_reasons_of_any_tool_are_not_unknown_tools(lint_project) -> None:
    source = fetch_module(
        "If search_articles failed with failure_0, pass a new query_text to it, then retry with pmids."
    )
    search = SEARCH_MODULE.replace("query: str", "query_text: str")
    linted = lint_project({"search.py": search, "fetch.py": source})
    assert not linted.of("FL401"), linted.summary()


def test_unknown_tools_are_not_guessed_when_a_tool_name_is_dynamic(lint_project) -> None:
    dynamic = (
        HEADER
        + """
import os

@tool(os.environ.get("TOOL_NAME", "lookup"))
async def lookup(query: str) -> list:
    return []
"""
    )
    source = fetch_module("Call lookup_pmids first to find valid ids, then retry.")
    assert lint_project({"fetch.py": source}).of("FL401")
    linted = lint_project({"dynamic.py": dynamic, "fetch.py": source})
    assert not linted.of("FL401"), "lookup_pmids may be the tool registering lookup: FL401 must not guess"

    # What it can see it checks (issue 31), and says what it could not.
    elsewhere = fetch_module("Call find_customer first, then retry.")
    (finding,) = lint_project({"dynamic.py": dynamic, "fetch.py": elsewhere}).of("FL401")
    assert "'find_customer'" in finding.message
    assert "the names of the tools registering lookup are computed and were not checked" in finding.message

    # A computed name whose function cannot be followed: any mention may be it, nothing is reported.
    unfollowable = HEADER + "import os\nfrom elsewhere import make\n\ntool(os.environ['NAME'])(make())\n"
    assert not lint_project({"dynamic.py": unfollowable, "fetch.py": elsewhere}).of("FL401")


def test_resources_hints_are_checked_too(lint_project) -> None:
    source = (
        HEADER.replace("tool,", "tool, resource,")
        + """
@resource("invoice://{invoice_id}", errors=[
    ErrorContract(reason="gone", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice",
                  recovery="Read invoice://{invoice_id} again after calling sync_invoices()."),
])
def invoice(invoice_id: str) -> str:
    return ""
"""
    )
    linted = lint_project({"res.py": source})
    (diagnostic,) = linted.of("FL400")
    assert diagnostic.message.startswith("resource 'invoice://{invoice_id}'")
    assert "'sync_invoices()'" in diagnostic.message


def test_rules_are_selectable_and_suppressible_by_name(lint_project) -> None:
    source = fetch_module("Call reset_cache() and then find_pmids to rebuild the list.")
    assert lint_project({"fetch.py": source}, ignore=["recovery-names-internal"]).codes() == ["FL401"]
    suppressed = source.replace(
        '"Call reset_cache() and then find_pmids to rebuild the list.",',
        '"Call reset_cache() and then find_pmids to rebuild the list.",  # noqa: FL400, recovery-unknown-tool',
    )
    assert lint_project({"fetch.py": suppressed}).codes() == []
