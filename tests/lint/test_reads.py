"""What the rules of a shared item read, recorded as they run (``check/reads.py``, DESIGN §13.1):
the schema holds what was read and nothing is listed by hand; recording changes nothing a rule
sees (identity, equality, values) and leaves no object changed; the snapshot's digest of a file
moves with what was read of it, and only with that."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusion_lint.check.engine import Options, analyse, configure
from fusion_lint.check.reads import ALL, PROJECT, Reads, digests, neighbour_files
from fusion_lint.check.snapshot import shared_items
from fusion_lint.project.view import ProjectView

ROOT = "/memory/reads"
CONTRACTS = """\
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SHARED = [
    ErrorContract(reason="bad_page", code=JsonRpcErrorCode.INVALID_PARAMS, when="The page is out of range",
                  recovery="Call the same tool again with page set to 1."),
]
"""
TOOLS = """\
from mcp_fusion import tool

from contracts import SHARED


@tool("list_widgets", errors=[*SHARED])
async def list_widgets({params}ctx) -> list:
    {body}
    return []
"""


def view(params: str = "page: int, ", body: str = "pass") -> ProjectView:
    sources = {"contracts.py": CONTRACTS, "tools.py": TOOLS.format(params=params, body=body)}
    options = Options(
        paths=[f"{ROOT}/{name}" for name in sources],
        sources={f"{ROOT}/{name}": text.encode() for name, text in sources.items()},
        use_cache=False,
        jobs=1,
    )
    config, settings = configure(options)
    return analyse(options, config, settings).resolved()


def shared_entry(project: ProjectView) -> object:
    (entry,) = [e for e in project.entries if e.path.endswith("contracts.py")]
    return entry


def probe(entry: object, project: ProjectView) -> list[str]:
    """A rule as CONTRIBUTING.md writes one: it reads each holder's handler's parameters."""
    return [
        p
        for holder in entry.holders  # type: ignore[attr-defined]  # (a ResolvedEntry)
        if holder.handler is not None
        for p in holder.handler.function.params
    ]


def test_what_a_rule_reads_is_in_the_schema_and_nothing_is_left_changed() -> None:
    project = view()
    entry = shared_entry(project)
    holder = entry.holders[0]
    before = (type(entry), type(holder), type(holder.handler), entry.values.get("reason"))
    reads = Reads()
    with reads.recording("entry", entry, project):
        seen = probe(entry, project)
        assert entry.holders[0] is holder  # the same objects, only their class swapped
        assert holder.handler == holder.handler and holder.contract.entries[0] is entry
        assert entry.get("reason") is before[3]
    assert seen == ["page", "ctx"] == probe(entry, project)
    assert (type(entry), type(holder), type(holder.handler), entry.values.get("reason")) == before
    assert ("holders", ALL, "handler", "function", "params") in reads.schema["entry"]
    assert not any("label" in path for path in reads.schema["entry"])  # only what was read
    assert not reads.opaque


def test_a_read_of_the_project_beyond_what_the_snapshot_checks_makes_the_schema_opaque() -> None:
    project = view()
    entry = shared_entry(project)
    reads = Reads()
    with reads.recording("entry", entry, project):
        project.vocabulary  # noqa: B018 (compared by the snapshot itself)
        project.files.get(entry.path)  # (the item's own file: a fix's imports)
    assert not reads.opaque
    with reads.recording("entry", entry, project):
        project.function_view(entry.holders[0].handler.function)
    assert reads.opaque and (PROJECT, "function_view") in reads.schema["entry"]


@pytest.mark.parametrize(
    ("edited", "moves"),
    [
        ({"params": ""}, True),  # the probe read the parameters
        ({"body": "x = 1"}, False),  # nothing it read
    ],
)
def test_the_digest_of_a_file_moves_with_what_was_read_of_it_only(edited: dict[str, str], moves: bool) -> None:
    project = view()
    entry = shared_entry(project)
    assert neighbour_files(entry) == {f"{ROOT}/tools.py"}
    reads = Reads()
    with reads.recording("entry", entry, project):
        probe(entry, project)
    before = digests(shared_items(project), reads.schema)
    after = digests(shared_items(view(**edited)), reads.schema)
    assert set(before) == set(after) == {f"{ROOT}/tools.py"}
    assert (before != after) is moves
    # the same edit, without the probe's reads in the schema: nothing read moved
    assert digests(shared_items(project), {}) == digests(shared_items(view(**edited)), {})


def test_equal_objects_stay_equal_while_one_of_them_records(tmp_path: Path) -> None:
    project, twin = view(), view()
    entry, other = shared_entry(project), shared_entry(twin)
    assert entry.entry == other.entry
    reads = Reads()
    with reads.recording("entry", entry, project):
        assert entry.entry == other.entry and other.entry == entry.entry


def test_reading_another_files_facts_through_the_project_is_opaque() -> None:
    project = view()
    entry = shared_entry(project)
    reads = Reads()
    with reads.recording("entry", entry, project):
        project.files.get(entry.holders[0].path)
    assert reads.opaque
