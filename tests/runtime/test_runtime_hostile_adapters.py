"""The hostile-handler trials on every framework adapter (issue 33, DESIGN §3.5, §13.4).

``hostile_adapter_server.py`` serves each hostile handler under ``@contract`` on the framework installed
here (mcp 1.x ``FastMCP``, mcp 2.x ``MCPServer``, ``fastmcp``; ``tests/framework_matrix.sh`` runs this
file once per supported combination) as a real stdio subprocess, driven by the official Python SDK
client. While ``slow_call`` is in flight every hostile tool is called; the client cancels a waiting
and a blocking handler; then the slow call is released. Every call must be answered with a
well-formed envelope (or the success it is), the slow call must complete and the server must go on
answering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from framework_clients import FRAMEWORKS, sdk_stdio

from mcp_fusion.client import parse_envelope

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not FRAMEWORKS, reason="no MCP framework installed (mcp, fastmcp)")]

SERVER = str(Path(__file__).with_name("hostile_adapter_server.py"))

UNEXPECTED = (
    "generator_exit",
    "system_exit",
    "system_exit_subclass",
    "argparse_exit",
    "custom_base_exception",
    "base_exception_group",
    "own_keyboard_interrupt",
    "keyboard_interrupt_subclass",
    "huge_crash",
    "own_cancelled_task",
)
DECLARED = {
    "surrogate_message": lambda f: (f.reason, f.message) == ("missing", "No file named caf\ufffd.txt"),
    "surrogate_detail": lambda f: f.details["path"] == "caf\ufffd.txt",
    "infinite_iterator": lambda f: f.reason == "unserialisable_result",
    "infinite_in_data": lambda f: json.loads(f.details["ids"])[:10] == list(range(10)),
    "fifty_mb_result": lambda f: f.reason == "unserialisable_result",
}
#: What a trial's answer was: the result (wire JSON) or what the call raised instead.
Answers = dict[str, Any]


async def _answer(caller: Any, name: str, timeout: float = 60) -> Any:
    try:
        with anyio.fail_after(timeout):
            return await caller.call(name, {})
    except Exception as exc:  # noqa: BLE001 - the absence of an answer is what the tests judge
        return exc


async def _trials(framework: str) -> Answers:
    answers: Answers = {}
    async with sdk_stdio([SERVER, framework]) as caller:
        async with anyio.create_task_group() as group:

            async def slow() -> None:
                answers["slow_call"] = await _answer(caller, "slow_call", timeout=120)

            group.start_soon(slow)
            await anyio.sleep(0.3)
            for case in (*UNEXPECTED, *DECLARED, "surrogate_result"):
                answers[case] = await _answer(caller, case)
            for waiting in ("cancellable_wait", "blocking_wait"):
                with anyio.move_on_after(0.5) as scope:  # the client gives up: the call is cancelled
                    await caller.call(waiting, {})
                answers[f"{waiting}_cancelled"] = scope.cancelled_caught
            answers["release_slow_call"] = await _answer(caller, "release_slow_call")
        answers["after_every_trial"] = await _answer(caller, "release_slow_call")
    return answers


@pytest.fixture(scope="module", params=FRAMEWORKS)
def trials(request: pytest.FixtureRequest) -> tuple[str, Answers]:
    return request.param, anyio.run(_trials, request.param)


def _envelope(answers: Answers, case: str) -> Any:
    result = answers[case]
    assert isinstance(result, dict), f"{case}: the call was not answered: {result!r}"
    assert result["isError"] is True, f"{case}: {result}"
    assert len(json.dumps(result)) < 64 * 1024, f"{case}: the answer is not bounded"
    failure = parse_envelope(result["content"][0]["text"])
    assert failure.parse_error is None, failure
    return failure


@pytest.mark.parametrize("case", UNEXPECTED)
def test_every_base_exception_is_answered_as_a_masked_internal_error(trials: tuple[str, Answers], case: str) -> None:
    framework, answers = trials
    failure = _envelope(answers, case)
    assert (failure.code, failure.reason) == ("INTERNAL_ERROR", "unexpected_error"), (framework, case, failure)
    assert failure.recovery.startswith("Do not blindly retry")


@pytest.mark.parametrize("case", sorted(DECLARED))
def test_hostile_values_are_answered_bounded(trials: tuple[str, Answers], case: str) -> None:
    framework, answers = trials
    failure = _envelope(answers, case)
    assert DECLARED[case](failure), (framework, case, failure)


def test_a_lone_surrogate_in_a_result_is_sent_replaced(trials: tuple[str, Answers]) -> None:
    _, answers = trials
    result = answers["surrogate_result"]
    assert isinstance(result, dict) and result["isError"] is False
    assert "caf\ufffd.txt" in result["content"][0]["text"]


def test_the_server_survives_every_trial_and_the_call_in_flight_completes(trials: tuple[str, Answers]) -> None:
    framework, answers = trials
    assert answers["cancellable_wait_cancelled"] and answers["blocking_wait_cancelled"]
    for case in ("slow_call", "release_slow_call", "after_every_trial"):
        result = answers[case]
        assert isinstance(result, dict) and result["isError"] is False, (framework, case, result)
    assert answers["slow_call"]["content"][0]["text"] == "the slow call completed"
