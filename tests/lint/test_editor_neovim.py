"""A real editor that is not our own test client: Neovim, headless, drives ``fusion-lint lsp``
(issue 21, DESIGN §9 and §12.4).

The Lua configuration is the snippet docs/editors.md gives for the running Neovim's version, read
from the page, so the documented setup is what runs. A small driver then does what a user does:
opens a file of the bundled example server, waits for the diagnostics, picks a quick fix and then
"Disable FL300 for this line" from the code-action menu (``vim.ui.select``, the menu Neovim shows),
and applies the fix-all; the test checks the diagnostics against the CLI's and the buffer after each
step. CI installs Debian's Neovim (0.7.2); ``FUSION_LINT_NVIM=/path/to/nvim`` runs another build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from editor_support import REPO_ROOT, example_project, path_with_fusion_lint
from editor_support import cli as run_cli

EDITORS_PAGE = REPO_ROOT / "docs" / "editors.md"
NVIM = os.environ.get("FUSION_LINT_NVIM") or shutil.which("nvim")
TIMEOUT_S = 120  # per wait inside the editor; generous for a busy CI machine (no timing is asserted)
#: The first line of each Neovim snippet on the page says which versions it is for.
SNIPPET_HEADER = re.compile(r"^-- Neovim (\d+)\.(\d+) (?:and later|to (\d+)\.(\d+))$")

DRIVER = r"""
local out = { notifications = {} }
local timeout_ms = tonumber(os.getenv("FL_TIMEOUT_MS"))
vim.notify = function(message) table.insert(out.notifications, tostring(message)) end

local function wait(what, ready)
  if not vim.wait(timeout_ms, ready, 50) then error("timed out waiting for " .. what, 0) end
end
local function find(buf, code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then return d end
  end
end
local function snapshot(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(found, { code = d.code, line = d.lnum + 1, source = d.source })
  end
  return { text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), "\n") .. "\n", diagnostics = found }
end

-- The code-action menu as the user sees it: pick the entry with this title; wait for its edit.
local function choose(buf, title, code)
  local d = assert(find(buf, code), "no " .. code .. " diagnostic to act on")
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  local tick, offered, picked = vim.api.nvim_buf_get_changedtick(buf), nil, nil
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    for _, item in ipairs(items) do
      local label = opts.format_item(item)
      table.insert(offered, label)
      if picked == nil and label:find(title, 1, true) then picked = item end
    end
    on_choice(picked)
  end
  vim.lsp.buf.code_action()
  wait("the code-action menu at " .. code, function() return offered ~= nil end)
  out.menus[code] = offered
  if picked == nil then error("no '" .. title .. "' in the menu: " .. table.concat(offered, " | "), 0) end
  wait("the edit of '" .. title .. "'", function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick end)
end

local ok, err = pcall(function()
  out.menus = {}
  dofile(os.getenv("FL_SNIPPET"))
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("FL_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[buf].filetype
  wait("diagnostics", function() return #vim.diagnostic.get(buf) > 0 end)
  out.opened = snapshot(buf)

  choose(buf, "(FL204)", "FL204")
  wait("FL204 to be gone", function() return find(buf, "FL204") == nil end)
  out.fixed = snapshot(buf)

  choose(buf, "Disable FL300 for this line", "FL300")
  wait("FL300 to be gone", function() return find(buf, "FL300") == nil end)
  out.disabled = snapshot(buf)

  -- Round two (DESIGN §13.5), asked as the editor's own requests: hover on a diagnostic, pull
  -- diagnostics, and the fix-all asked for by this server's kind (codeActionsOnSave's name).
  local d302 = assert(find(buf, "FL302"), "no FL302 to hover on")
  local position = { line = d302.lnum, character = d302.col }
  local uri = vim.uri_from_bufnr(buf)
  local hovered = vim.lsp.buf_request_sync(buf, "textDocument/hover",
    { textDocument = { uri = uri }, position = position }, timeout_ms)
  for _, answer in pairs(hovered or {}) do
    if answer.result then out.hover = answer.result.contents.value end
  end
  local pulled = vim.lsp.buf_request_sync(buf, "textDocument/diagnostic", { textDocument = { uri = uri } }, timeout_ms)
  out.pulled = {}
  for _, answer in pairs(pulled or {}) do
    for _, item in ipairs((answer.result or {}).items or {}) do table.insert(out.pulled, item.code) end
  end
  local kinds = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } },
    context = { diagnostics = {}, only = { "source.fixAll.fusion-lint" } },
  }, timeout_ms)
  out.fix_all_kinds = {}
  for _, answer in pairs(kinds or {}) do
    for _, action in ipairs(answer.result or {}) do table.insert(out.fix_all_kinds, action.kind) end
  end

  local tick = vim.api.nvim_buf_get_changedtick(buf)
  if vim.fn.has("nvim-0.8") == 1 then
    -- what docs/editors.md gives for 0.8 and later
    vim.lsp.buf.code_action({ context = { only = { "source.fixAll" } }, apply = true })
  else
    choose(buf, "fix all safely fixable problems", "FL302")
  end
  wait("the fix-all edit", function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick end)
  wait("FL302 to be gone", function() return find(buf, "FL302") == nil end)
  out.fixed_all = snapshot(buf)

  -- The project's config changes on disk, no buffer is edited: the open buffer's diagnostics are
  -- published again. Neovim before 0.9 watches no files, so the driver says what a watcher would.
  local config = assert(io.open(os.getenv("FL_CONFIG"), "w"))
  config:write('[tool.fusion-lint]\nignore = ["FL3"]\n')
  config:close()
  for _, client in pairs(vim.lsp.get_active_clients()) do
    client.notify("workspace/didChangeWatchedFiles",
      { changes = { { uri = vim.uri_from_fname(os.getenv("FL_CONFIG")), type = 2 } } })
  end
  wait("the config change to reach the buffer", function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code:sub(1, 3) == "FL3" then return false end
    end
    return true
  end)
  out.reconfigured = snapshot(buf)
end)
if not ok then out.error = tostring(err) end
local file = assert(io.open(os.getenv("FL_OUT"), "w"))
file:write(vim.fn.json_encode(out))
file:close()
vim.cmd("qall!")
"""


def neovim_version(nvim: str) -> tuple[int, int]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60).stdout.splitlines()[0]
    match = re.match(r"NVIM v(\d+)\.(\d+)", first)
    assert match, first
    return int(match.group(1)), int(match.group(2))


def neovim_snippets() -> list[tuple[tuple[int, int], tuple[int, int] | None, str]]:
    """(first version, last version or None, Lua) for each Neovim snippet of docs/editors.md."""
    blocks = re.findall(r"^```lua\n(.*?)^```", EDITORS_PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    snippets = []
    for block in blocks:
        header = SNIPPET_HEADER.match(block.split("\n", 1)[0])
        if header:
            low, high = (int(header.group(1)), int(header.group(2))), None
            if header.group(3):
                high = (int(header.group(3)), int(header.group(4)))
            snippets.append((low, high, block))
    return snippets


def snippet_for(version: tuple[int, int]) -> str | None:
    for low, high, lua in neovim_snippets():
        if low <= version and (high is None or version <= high):
            return lua
    return None


def test_the_page_has_one_neovim_snippet_for_every_version_from_0_7() -> None:
    ranges = sorted((low, high) for low, high, _ in neovim_snippets())
    assert ranges[0][0] == (0, 7) and ranges[-1][1] is None, ranges
    for (_, high), (low, _) in zip(ranges, ranges[1:]):
        assert high is not None and (high[0], high[1] + 1) == low, f"a gap or an overlap after {high}"
    assert snippet_for((0, 7)) != snippet_for((0, 11))
    assert "vim.lsp.start_client" in snippet_for((0, 10)) and "vim.lsp.enable" in snippet_for((0, 12))


@pytest.mark.slow
@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (Debian: apt-get install neovim; .ci/run does)")
def test_neovim_shows_the_diagnostics_and_applies_the_code_actions(tmp_path: Path) -> None:
    pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")
    assert NVIM is not None
    version = neovim_version(NVIM)
    snippet = snippet_for(version)
    if snippet is None:
        pytest.skip(f"docs/editors.md has no snippet for Neovim {version[0]}.{version[1]}")
    project = example_project(tmp_path)
    tools = project / "example_server" / "tools.py"
    original = tools.read_text(encoding="utf-8")
    (tmp_path / "snippet.lua").write_text(snippet)
    (tmp_path / "driver.lua").write_text(DRIVER)
    home = tmp_path / "home"  # no user configuration, logs where the test can show them
    environment = {
        **os.environ,
        "PATH": path_with_fusion_lint(tmp_path),  # the snippet starts `fusion-lint` by name
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "FL_SNIPPET": str(tmp_path / "snippet.lua"),
        "FL_FILE": str(tools),
        "FL_OUT": str(tmp_path / "out.json"),
        "FL_CONFIG": str(project / "pyproject.toml"),
        "FL_TIMEOUT_MS": str(TIMEOUT_S * 1000),
    }
    run = subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {tmp_path / 'driver.lua'}"],
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=6 * TIMEOUT_S,
    )
    logs = "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-4000:]}" for log in home.rglob("*.log"))
    assert (tmp_path / "out.json").exists(), f"nvim wrote no result (exit {run.returncode}):\n{run.stderr}\n{logs}"
    result = json.loads((tmp_path / "out.json").read_text())
    assert "error" not in result, f"{result}\n{logs}"
    assert result["filetype"] == "python"
    (project / "pyproject.toml").write_text("[tool.fusion-lint]\n")  # as it was, for the CLI below

    # What the editor shows is what the CLI reports for the file.
    cli = json.loads(run_cli(project, "example_server/tools.py", "--output-format", "json", "--no-cache").stdout)
    expected = sorted((d["code"], d["location"]["row"]) for d in cli)
    shown = result["opened"]["diagnostics"]
    assert sorted((d["code"], d["line"]) for d in shown) == expected
    assert {d["source"] for d in shown} == {"fusion-lint"}
    assert {"FL204", "FL300", "FL302"} <= {code for code, _ in expected}
    assert result["opened"]["text"] == original

    # The quick fix: only the discarded ctx.fail changed.
    assert result["menus"]["FL204"][0].startswith("Raise the error (FL204)"), result["menus"]
    assert any(label.startswith("Disable FL204 for this line") for label in result["menus"]["FL204"])
    fixed = original.replace(
        '        ctx.fail("already_void")  # demo: FL204', '        raise ctx.fail("already_void")  # demo: FL204'
    )
    assert fixed != original and result["fixed"]["text"] == fixed
    # "Disable FL300 for this line": a noqa after the line's own comment, nothing else touched.
    flagged = next(line for line in fixed.splitlines() if line.endswith("# demo: FL300"))
    disabled = fixed.replace(flagged, flagged + "  # noqa: FL300")
    assert result["disabled"]["text"] == disabled
    assert "FL300" not in {d["code"] for d in result["disabled"]["diagnostics"]}
    # The fix-all: what `fusion-lint --fix` makes of that buffer.
    cli_fixed = run_cli(project, "--fix", "--stdin-filename", "example_server/tools.py", "-", stdin=disabled)
    assert cli_fixed.stdout != disabled, cli_fixed.stderr
    assert result["fixed_all"]["text"] == cli_fixed.stdout

    # Hover shows the rule's page; a pull answers what was pushed; the server's own fix-all kind.
    assert result["hover"].startswith("### FL302"), result.get("hover")
    assert "**What it does.**" in result["hover"]
    assert sorted(result["pulled"]) == sorted(d["code"] for d in result["disabled"]["diagnostics"])
    assert result["fix_all_kinds"] == ["source.fixAll.fusion-lint"]
    # The config edit on disk re-published the buffer's diagnostics: no FL3xx left, the rest kept.
    left = {d["code"] for d in result["reconfigured"]["diagnostics"]}
    assert left and not any(code.startswith("FL3") for code in left)
    assert result["reconfigured"]["text"] == result["fixed_all"]["text"]
