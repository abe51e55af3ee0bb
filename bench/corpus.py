"""Deterministic generators for the benchmark trees (DESIGN §10).

* ``write_dense_corpus``: a package of tool modules, 8 tools each (~237 lines a module), with a
  shared-contracts module and a service layer so that cross-file resolution is exercised; about one
  tool in six carries a realistic mistake, so the rules have something to report.
* ``write_mixed_tree``: a copy of the running interpreter's standard library plus a few tool modules.

Everything is seeded: the same arguments always give the same bytes.
"""

from __future__ import annotations

import random
import shutil
import sysconfig
from pathlib import Path

PACKAGE = "benchtools"
TOOLS_PER_MODULE = 8

_CODES = ("NOT_FOUND", "CONFLICT", "FORBIDDEN", "UNAUTHORIZED", "RATE_LIMITED", "INVALID_PARAMS", "DATABASE_ERROR")
_NOUNS = ("invoice", "article", "customer", "ticket", "order", "report", "dataset", "project", "user", "record")

_HEADER = '''"""Generated tool module {index}: {noun} operations."""
from __future__ import annotations

import asyncio
import json
import logging

from mcp_fusion import (
    Context,
    ErrorContract,
    JsonRpcErrorCode,
    McpError,
    conflict,
    not_found,
    resource,
    tool,
)

from {package}.contracts import SHARED_UPSTREAM, RATE_LIMIT_ENTRY
from {package}.services import fetch_{noun}, store_{noun}

log = logging.getLogger(__name__)

# Handlers below are registered by their decorators; nothing else is exported.
__all__: list[str] = []
'''

_DECORATED = '''

@tool(
    "{name}",
    description="{verb} a {noun} by id",
    errors=[
        *SHARED_UPSTREAM,
        ErrorContract(
            reason="{reason}",
            code=JsonRpcErrorCode.{code},
            when="No {noun} with that id",
            recovery="{recovery}",
        ),
        {{"reason": "{noun}_locked", "code": -32002, "when": "The {noun} is locked",
          "recovery": "Wait for the lock, then call {name} again."}},
    ],
)
async def {name}({noun}_id: str, ctx: Context, limit: int = 10) -> dict:
    """{verb} one {noun}."""
    log.debug("{name} called with %s", {noun}_id)
    limit = max(1, min(limit, 100))
    try:
        found = await fetch_{noun}({noun}_id, limit=limit)
    except KeyError as exc:
{except_body}
    if not found:
        raise ctx.fail("{reason}", f"No {noun} {{{noun}_id}}")
    if found.get("locked"):
{locked_body}
    total = sum(len(str(value)) for value in found.values())
    return {{"id": {noun}_id, "total": total, "items": [k for k in found if k]}}
'''

_DICT_CONTRACT = '''

{upper}_ERRORS = [
    RATE_LIMIT_ENTRY,
    {{"reason": "{reason}", "code": JsonRpcErrorCode.{code}, "when": "The {noun} cannot be saved",
      "recovery": "{recovery}"}},
]


def {name}({noun}_id: str, payload: dict, context: Context) -> dict:
    """Save a {noun} (sync handler, contract bound to a module constant)."""
    if not payload:
{empty_body}
    log.debug("saving %s (%d fields)", {noun}_id, len(payload))
    saved = store_{noun}({noun}_id, payload)
    if saved is None:
        raise context.fail("{reason}", data={{"id": {noun}_id}})
    log.info("saved %s", {noun}_id)
    return {{"id": {noun}_id, "saved": True}}


{name}_tool = tool("{name}", description="Save a {noun}", errors={upper}_ERRORS)({name})
'''

_RESOURCE = '''

@resource("{noun}://{index}/{{item_id}}", errors=[
    ErrorContract(reason="{reason}", code=JsonRpcErrorCode.NOT_FOUND, when="No such {noun}",
                  recovery="{recovery}"),
])
async def {name}(item_id: str, ctx: Context) -> str:
    """Read a {noun} as JSON."""
    log.debug("reading %s", item_id)
    for attempt in range(3):
        try:
            found = await fetch_{noun}(item_id, limit=1)
            break
        except TimeoutError:
            await asyncio.sleep(0.1 * attempt)
{cancel_clause}
    else:
        found = None
    if found is None:
        raise ctx.fail("{reason}")
    return json.dumps(found, sort_keys=True)
'''

# Mistakes, each a realistic slip the rules are meant to catch.
_GOOD_EXCEPT = '        raise ctx.fail("{reason}", f"no {noun} {{{noun}_id}}", cause=exc)'
_BAD_EXCEPTS = (
    '        raise not_found(f"no {noun} {{{noun}_id}}")',  # FL302: cause dropped
    '        raise ValueError("bad {noun} " + {noun}_id)',  # FL300
    '        raise McpError(JsonRpcErrorCode.NOT_FOUND, json.dumps({{"id": {noun}_id}}), cause=exc)',  # FL301, FL303
)
_GOOD_LOCKED = '        raise ctx.fail("{noun}_locked", data={{"id": {noun}_id}})'
_BAD_LOCKED = (
    '        ctx.fail("{noun}_locked")',  # FL204
    '        raise ctx.fail("{noun}_gone")',  # FL203
    '        raise conflict("locked")',  # FL201
)
_GOOD_EMPTY = '        raise context.fail("{reason}", "Nothing to save")'
_BAD_EMPTY = ('        raise McpError(JsonRpcErrorCode.INVALID_PARAMS, "empty payload")',)  # FL301, FL200
_GOOD_CANCEL = "        except asyncio.CancelledError:\n            raise"
_BAD_CANCEL = '        except asyncio.CancelledError:\n            log.warning("cancelled")'  # FL304


def _recovery(rng: random.Random, name: str) -> str:
    roll = rng.random()
    if roll < 0.05:
        return "Retry later."  # FL112
    if roll < 0.09:
        return "Call _reload_cache() and then try the same request again."  # FL400
    if roll < 0.12:
        return "Call list_everything_please first to find a valid id."  # FL401
    # Slot 3 of every module is a ``find_*`` tool: a real capability the agent can call.
    finder = "find_" + "_".join(name.split("_")[1:-1]) + "_3"
    again = "read the resource again" if name.startswith("read_") else f"call {name} again"
    return f"Call {finder} first to discover valid ids, then {again}."


def _reason(rng: random.Random, noun: str) -> str:
    return "Bad-Reason" if rng.random() < 0.04 else f"{noun}_not_found"  # FL107


def _pick(rng: random.Random, good: str, bad: tuple[str, ...], rate: float = 0.18) -> str:
    return rng.choice(bad) if rng.random() < rate else good


def tool_module(index: int, package: str = PACKAGE) -> str:
    rng = random.Random(index)
    noun = _NOUNS[index % len(_NOUNS)]
    parts = [_HEADER.format(index=index, noun=noun, package=package)]
    for slot in range(TOOLS_PER_MODULE):
        name = f"{('get', 'save', 'read', 'find')[slot % 4]}_{noun}_{index}_{slot}"
        roll = rng.random()
        # Mostly the code the handler's factories raise; sometimes another one (FL200), rarely a typo (FL104).
        code = "NOT_FOUND" if roll < 0.8 else "NOPE" if roll < 0.83 else rng.choice(_CODES)
        fields = dict(
            index=index,
            noun=noun,
            name=name,
            reason=_reason(rng, noun),
            code=code,
            recovery=_recovery(rng, name),
            upper=name.upper(),
            verb="Fetch",
        )
        if slot % 4 == 1:
            fields["empty_body"] = _pick(rng, _GOOD_EMPTY, _BAD_EMPTY).format(**fields)
            parts.append(_DICT_CONTRACT.format(**fields))
        elif slot % 4 == 2:
            fields["cancel_clause"] = _pick(rng, _GOOD_CANCEL, (_BAD_CANCEL,))
            parts.append(_RESOURCE.format(**fields))
        else:
            fields["except_body"] = _pick(rng, _GOOD_EXCEPT, _BAD_EXCEPTS).format(**fields)
            fields["locked_body"] = _pick(rng, _GOOD_LOCKED, _BAD_LOCKED).format(**fields)
            parts.append(_DECORATED.format(**fields))
    return "".join(parts)


def contracts_module() -> str:
    return '''"""Contract entries shared by every tool module."""
from mcp_fusion import ErrorContract, JsonRpcErrorCode

SHARED_UPSTREAM = [
    ErrorContract(reason="upstream_down", code=JsonRpcErrorCode.SERVICE_UNAVAILABLE,
                  when="The upstream API is unreachable after retries", retryable=True,
                  thrown_by="service", recovery="Wait a minute, then call the same tool again."),
]

RATE_LIMIT_ENTRY = ErrorContract(
    reason="slow_down", code=JsonRpcErrorCode.RATE_LIMITED, when="Too many requests",
    thrown_by="service", recovery="Wait thirty seconds, then call the same tool again.",
)
'''


def services_module() -> str:
    lines = [
        '"""The service layer the tools call: it raises the reasons marked thrown_by="service"."""',
        "from mcp_fusion import rate_limited, service_unavailable",
        "",
    ]
    for noun in _NOUNS:
        lines += [
            "",
            f"async def fetch_{noun}(item_id: str, limit: int = 10) -> dict:",
            "    if not item_id:",
            '        raise service_unavailable("upstream down", data={"reason": "upstream_down"})',
            f'    return {{"id": item_id, "kind": "{noun}", "limit": limit}}',
            "",
            "",
            f"def store_{noun}(item_id: str, payload: dict):",
            "    if len(payload) > 100:",
            '        raise rate_limited("slow down", data={"reason": "slow_down"})',
            "    return payload or None",
            "",
        ]
    return "\n".join(lines)


def write_tool_package(root: Path, modules: int, package: str = PACKAGE) -> list[Path]:
    """``root/<package>/`` with the shared modules and ``modules`` tool modules; returns them."""
    base = root / package
    (base / "tools").mkdir(parents=True, exist_ok=True)
    (base / "__init__.py").write_text('"""Generated benchmark package."""\n')
    (base / "contracts.py").write_text(contracts_module())
    (base / "services.py").write_text(services_module())
    (base / "tools" / "__init__.py").write_text("")
    written = [base / "__init__.py", base / "contracts.py", base / "services.py", base / "tools" / "__init__.py"]
    for index in range(modules):
        target = base / "tools" / f"m{index:03d}.py"
        target.write_text(tool_module(index, package))
        written.append(target)
    return written


def write_project_config(root: Path) -> None:
    """Make ``root`` the project root, with default settings."""
    (root / "pyproject.toml").write_text("[tool.fusion-lint]\n")


def write_dense_corpus(root: Path, modules: int = 300) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    write_project_config(root)
    return write_tool_package(root, modules)


def stdlib_directory() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def write_mixed_tree(root: Path, tool_modules: int = 20) -> list[Path]:
    """A copy of the standard library (without site-packages and bytecode) plus tool modules.

    Copied rather than linted in place so that the project root, config and cache are ours.
    """
    root.mkdir(parents=True, exist_ok=True)
    write_project_config(root)
    ignore = shutil.ignore_patterns("site-packages", "dist-packages", "__pycache__", "*.pyc")
    shutil.copytree(stdlib_directory(), root / "stdlib", ignore=ignore, symlinks=True, dirs_exist_ok=True)
    return write_tool_package(root, tool_modules)
