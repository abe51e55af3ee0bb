"""``bench/resolution.py`` on a small synthetic corpus: it counts definitions, FL190, unresolved
handlers and callees by how they were followed. Nothing here needs the real corpus."""

from __future__ import annotations

from pathlib import Path

import resolution  # noqa: E402  (bench/resolution.py)
from test_census import make_corpus  # puts bench/ on the path, as bench/census.py is loaded

SERVER = """
from mcp_fusion import tool, Context, ErrorContract, JsonRpcErrorCode
from helpers import Repo

repo = Repo()
client = make_client()

@tool("get_item", errors=load_errors())
async def get_item(item_id: str, ctx: Context):
    repo.fetch(item_id)
    client.get(item_id)
    return len(item_id)

tool("find_item")(make_handler())
"""
HELPERS = """
class Repo:
    def fetch(self, item_id):
        return item_id
"""


def test_a_unit_is_measured(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path, {"acme/items": ("acme+items", 2, {"server.py": SERVER, "helpers.py": HELPERS})})
    [unit] = resolution.run(corpus, None)
    assert (unit["tools"], unit["handlers_unresolved"]) == (2, 1)
    assert unit["unresolved_handlers"][0]["handler"] == "a call to make_handler()"
    # FL190: the contract computed at run time and the handler that is no function.
    assert unit["fl190"] == 2
    # repo.fetch is followed; client.get names a project module's run-time value; len is outside.
    assert unit["callees"] == {"followed": 1, "class": 0, "unresolved": 1, "outside": 1}
    assert unit["not_followed"] == [{"function": "get_item", "file": "server.py", "call": "server.client.get"}]


def test_an_absent_corpus_is_a_message_and_exit_zero(tmp_path: Path, capsys) -> None:
    assert resolution.main(["--corpus", str(tmp_path / "nowhere")]) == 0
    assert "absent" in capsys.readouterr().out
