"""No path whose cost grows with the square of the project (issue 15): FL401's "did you mean" comes
from an index and compares a bounded number of names per token; FL107's rename of a shared entry
is built once for the entry, not once per definition holding it. Counted, never timed (the figures
are in ``bench/scaling.py``)."""

from __future__ import annotations

import difflib
import random

import pytest
from harness import lint_sources

from fusion_lint.project import suggest
from fusion_lint.project.suggest import NameIndex
from fusion_lint.rules import fl107_error_contract_reason_format as fl107

NOUNS = ("invoice", "article", "customer", "ticket", "order", "report", "dataset", "project", "user", "record")


def _tools(modules: int) -> set[str]:
    """Tool names shaped like the dense benchmark's: many near-identical names."""
    names = {
        f"{verb}_{NOUNS[i % 10]}_{i}_{slot}"
        for i in range(modules)
        for slot, verb in enumerate(("get", "save", "read", "find") * 2)
    }
    return names | {f"list_{noun}s" for noun in NOUNS} | {f"search_{noun}" for noun in NOUNS}


def _typos(names: set[str], count: int, seed: int) -> list[str]:
    rng, pool, alphabet = random.Random(seed), sorted(names), "abcdefghijklmnopqrstuvwxyz_0123456789"
    tokens = []
    for _ in range(count):
        chars = list(rng.choice(pool))
        for _ in range(rng.choice((1, 1, 2))):
            at, roll = rng.randrange(len(chars)), rng.random()
            if roll < 0.4:
                del chars[at]
            elif roll < 0.7:
                chars.insert(at, rng.choice(alphabet))
            else:
                chars[at] = rng.choice(alphabet)
        tokens.append("".join(chars))
    return tokens + ["list_invoice", "lst_invoce", "search", "find_customer", "list_everything_please"]


def _difflib_over_every_name(token: str, names: set[str]) -> str | None:
    """What FL401 suggested before the index: difflib over every tool within 3 characters."""
    similar = [name for name in sorted(names) if abs(len(name) - len(token)) <= 3]
    close = difflib.get_close_matches(token, similar, n=1, cutoff=0.75)
    return close[0] if close else None


def test_the_index_suggests_what_difflib_over_every_tool_suggested() -> None:
    names = _tools(120)  # 970 tools: brute force stays cheap enough to compare with
    index = NameIndex(names)
    tokens = _typos(names, 80, seed=15)
    assert [index.close_match(t) for t in tokens] == [_difflib_over_every_name(t, names) for t in tokens]


def test_a_large_project_compares_a_bounded_number_of_names_per_token(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[int] = []
    real = difflib.get_close_matches

    def counting(word, possibilities, *args, **kwargs):
        compared.append(len(possibilities))
        return real(word, possibilities, *args, **kwargs)

    monkeypatch.setattr(suggest.difflib, "get_close_matches", counting)
    names = _tools(3000)  # 24,020 tools
    index = NameIndex(names)
    assert index.close_match("list_invoice") == "list_invoices"
    assert index.close_match("find_customer_1212_3x") == "find_customer_1212_3"
    assert index.close_match("list_everything_please") is None
    index.close_match("list_invoice")  # answered once per token
    assert len(compared) == 3 and max(compared) <= suggest.CANDIDATES


def test_fl401_suggests_from_the_index_in_a_project() -> None:
    source = (
        "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context\n"
        + "".join(f"@tool('list_{noun}s')\nasync def list_{noun}s(ctx: Context):\n    return []\n" for noun in NOUNS)
        + (
            '@tool("get_invoice", errors=[ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND,\n'
            '    when="No invoice", recovery="Call list_invoice to find a valid id, then call get_invoice again.")])\n'
            "async def get_invoice(invoice_id: str, ctx: Context):\n    raise ctx.fail('no_match')\n"
        )
    )
    [message] = [d.message for d in lint_sources({"app.py": source}).diagnostics if d.code == "FL401"]
    assert "'list_invoice' (did you mean 'list_invoices'?)" in message


def test_the_rename_of_a_shared_entry_is_built_once_for_every_holder(monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[int] = []
    real = fl107.rename_reason

    def counting(entry, new, text):
        builds.append(len(entry.holders))
        return real(entry, new, text)

    monkeypatch.setattr(fl107, "rename_reason", counting)
    holders = 40
    source = (
        "from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context\n"
        'SHARED = [ErrorContract(reason="NoMatch", code=JsonRpcErrorCode.NOT_FOUND, when="No such item",\n'
        '                        recovery="Call list_items to find a valid id, then retry.")]\n'
        "@tool('list_items')\nasync def list_items(ctx: Context):\n    return []\n"
    ) + "".join(
        f"@tool('get_item_{n}', errors=SHARED)\nasync def get_item_{n}(item_id: str, ctx: Context):\n"
        f"    raise ctx.fail('NoMatch')\n"
        for n in range(holders)
    )
    [diagnostic] = [d for d in lint_sources({"app.py": source}).diagnostics if d.code == "FL107"]
    assert builds == [holders]  # one build, for the one entry every tool holds
    assert diagnostic.fix is not None and len(diagnostic.fix.edits) == holders + 1
    assert diagnostic.fix.message == f"Rename reason 'NoMatch' to 'no_match' and {holders} uses"
