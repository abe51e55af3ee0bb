"""Adapters fail loudly (issue 33, DESIGN §13.4): each framework internal removed gives its named error.

For every internal ``mcp_fusion.internals`` lists for a framework installed here, the test removes it
(``monkeypatch.delattr``) and decorates a handler with ``@contract`` while the framework is loaded: the
adapter must raise ``FrameworkInternalsError`` naming the framework, its version and the piece, at
registration, before any call is served. ``tests/framework_matrix.sh`` runs this file on every
supported combination, so each internal is removed on the oldest and the newest version of its line.
"""

from __future__ import annotations

import importlib
import importlib.util
from importlib.metadata import version

import pytest
from framework_clients import FASTMCP_VERSION, MCP_MAJOR

from mcp_fusion import contract, internals
from mcp_fusion.internals import INTERNALS, LOADED_BY, MATRIX, SUPPORTED, FrameworkInternalsError


def _applies(internal: internals.Internal) -> bool:
    if internal.line == "mcp1":
        return MCP_MAJOR == 1
    if internal.line == "mcp2":
        return MCP_MAJOR == 2
    if FASTMCP_VERSION is None or importlib.util.find_spec("fastmcp") is None:
        return False
    return internal.majors is None or int(FASTMCP_VERSION.split(".")[0]) in internal.majors


APPLICABLE = [internal for internal in INTERNALS if _applies(internal)]


@pytest.fixture(autouse=True)
def fresh_checks():
    internals.checked.clear()
    yield
    internals.checked.clear()


def test_the_installed_frameworks_pass_their_checks() -> None:
    for line, module in LOADED_BY.items():
        if any(internal.line == line for internal in APPLICABLE):
            importlib.import_module(module)
            internals.check(line)
    contract(errors=[])(lambda: None)  # and registration goes through


@pytest.mark.skipif(not APPLICABLE, reason="no MCP framework installed (mcp, fastmcp)")
@pytest.mark.parametrize("internal", APPLICABLE, ids=lambda internal: internal.piece)
def test_removing_an_internal_fails_registration_naming_it(
    internal: internals.Internal, monkeypatch: pytest.MonkeyPatch
) -> None:
    importlib.import_module(LOADED_BY[internal.line])
    owner_path, _, name = internal.piece.rpartition(".")
    owner = internals._attribute(owner_path)
    fields = getattr(owner, "__pydantic_fields__", None) or {}
    if name in fields and name not in vars(owner):  # a pydantic field: gone from the model's field table
        monkeypatch.setattr(owner, "__pydantic_fields__", {key: value for key, value in fields.items() if key != name})
    else:
        monkeypatch.delattr(internal.piece)
    with pytest.raises(FrameworkInternalsError) as raised:

        @contract(errors=[])
        def handler() -> str:
            return "never registered"

    distribution = "fastmcp" if internal.line == "fastmcp" else "mcp"
    message = str(raised.value)
    assert raised.value.piece == internal.piece
    assert f"{distribution} {version(distribution)}: {internal.piece} " in message, message
    assert internal.used_for in message and "Supported:" in message


def test_the_matrix_holds_both_ends_of_every_supported_line() -> None:
    pinned = " ".join(requirements for _, requirements in MATRIX)
    for line, supported in SUPPORTED.items():
        if line == "mcp2":  # the default environment, pinned by pyproject's [server] extra
            continue
        for end in (supported.oldest, supported.newest):
            assert f"{supported.distribution}=={end}" in pinned, (line, end)
