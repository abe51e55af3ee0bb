"""ctx.fail and ctx.recovery_for (DESIGN §3.4)."""

from __future__ import annotations

import anyio
import pytest

from mcp_fusion import Context, ErrorContract, JsonRpcErrorCode, McpError, tool

NO_MATCH = ErrorContract(
    reason="no_match",
    code=JsonRpcErrorCode.NOT_FOUND,
    when="No requested PMID returned data",
    recovery="Call search_articles first to discover valid PMIDs.",
)
UPSTREAM_DOWN = ErrorContract(
    reason="upstream_down",
    code=JsonRpcErrorCode.SERVICE_UNAVAILABLE,
    when="NCBI unreachable after retries",
    recovery="Wait a few minutes, then call fetch_articles again.",
    retryable=True,
    thrown_by="service",
)


@pytest.fixture
def ctx() -> Context:
    @tool("fetch_articles", errors=[NO_MATCH, UPSTREAM_DOWN])
    def fetch_articles(pmids: list[str], ctx: Context) -> None: ...

    return fetch_articles.context()


def test_fail_returns_and_does_not_raise(ctx: Context) -> None:
    error = ctx.fail("no_match")
    assert isinstance(error, McpError)


def test_fail_takes_code_and_default_message_from_the_entry(ctx: Context) -> None:
    error = ctx.fail("no_match")
    assert error.code is JsonRpcErrorCode.NOT_FOUND
    assert error.message == "No requested PMID returned data"
    assert error.data == {"reason": "no_match"}  # retryable undeclared: not invented


def test_fail_message_and_data_and_cause(ctx: Context) -> None:
    cause = TimeoutError("ncbi")
    error = ctx.fail("upstream_down", "NCBI timed out", {"attempts": 3}, cause=cause)
    assert error.message == "NCBI timed out"
    assert error.data == {"retryable": True, "attempts": 3, "reason": "upstream_down"}
    assert list(error.data) == ["retryable", "attempts", "reason"]  # reason written last
    assert error.__cause__ is cause


def test_caller_data_may_override_retryable_but_never_the_reason(ctx: Context) -> None:
    error = ctx.fail("upstream_down", data={"retryable": False, "reason": "something_else"})
    assert error.data["retryable"] is False
    assert error.data["reason"] == "upstream_down"


def test_caller_data_never_carries_auth(ctx: Context) -> None:
    assert "auth" not in ctx.fail("no_match", data={"auth": "Bearer x"}).data


def test_undeclared_reason_is_an_internal_error_listing_declared_reasons(ctx: Context) -> None:
    error = ctx.fail("typo_reason", "whatever")
    assert error.code is JsonRpcErrorCode.INTERNAL_ERROR
    assert error.data == {"undeclared_reason": "typo_reason", "declared_reasons": ["no_match", "upstream_down"]}
    assert "typo_reason" in error.message and "tool 'fetch_articles'" in error.message
    assert error.reason is None  # not a modeled failure: no reason a client could switch on


def test_recovery_for(ctx: Context) -> None:
    assert ctx.recovery_for("no_match") == {"recovery": {"hint": "Call search_articles first to discover valid PMIDs."}}
    assert ctx.recovery_for("nope") == {}
    assert Context().recovery_for("no_match") == {}
    spread = {"requested": 3, **ctx.recovery_for("nope")}
    assert spread == {"requested": 3}


def test_a_context_without_a_contract_fails_every_reason_as_internal() -> None:
    error = Context(owner="tool 'bare'").fail("anything")
    assert error.code is JsonRpcErrorCode.INTERNAL_ERROR
    assert error.data["declared_reasons"] == []


def test_context_accepts_dict_entries() -> None:
    ctx = Context([NO_MATCH.model_dump()], owner="tool 't'")
    assert ctx.fail("no_match").code is JsonRpcErrorCode.NOT_FOUND
    assert ctx.declared_reasons == ("no_match",)


def test_sdk_access_degrades_outside_a_request(ctx: Context) -> None:
    assert ctx.request_context is None and ctx.session is None and ctx.request_id is None
    assert ctx.cancel_requested is False

    async def use() -> None:
        await ctx.info("still works", step=1)
        await ctx.report_progress(1, 2)

    anyio.run(use)


def test_handler_called_directly_with_a_context(ctx: Context) -> None:
    @tool("fetch_articles", errors=[NO_MATCH])
    def fetch_articles(pmids: list[str], ctx: Context) -> list[str]:
        if not pmids:
            raise ctx.fail("no_match", f"None of {len(pmids)} PMIDs returned data")
        return pmids

    with pytest.raises(McpError) as caught:
        fetch_articles([], fetch_articles.context())
    assert caught.value.message == "None of 0 PMIDs returned data"
