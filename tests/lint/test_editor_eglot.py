"""A second real editor: Emacs, in batch, with eglot driving ``fusion-lint lsp`` (DESIGN §13.5).

The init snippet is the one docs/editors.md gives, read from the page. The driver opens a file of
the bundled example server, waits for Flymake's diagnostics, asks hover and pull diagnostics through
eglot's own connection (eglot 1.9 asks for neither by itself), applies the fix-all by this server's
kind as ``C-u M-x eglot-code-actions`` does, and changes the project's config on disk: the open
buffer's diagnostics must come again without an edit. Skips, saying why, without Emacs or eglot
(Debian: ``apt-get install emacs-nox elpa-eglot``; .ci/run does).
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
EMACS = os.environ.get("FUSION_LINT_EMACS") or shutil.which("emacs")
TIMEOUT_S = 120  # per wait inside the editor; generous for a busy CI machine (no timing is asserted)

DRIVER = r"""
(require 'json)
(defvar fl-out nil)
(defvar fl-timeout (string-to-number (getenv "FL_TIMEOUT_S")))
(defun fl-wait (what ready)
  (let ((deadline (+ (float-time) fl-timeout)))
    (while (not (funcall ready))
      (when (> (float-time) deadline) (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))
(defun fl-codes ()
  (mapcar (lambda (d) (let ((text (flymake-diagnostic-text d)))
                        (if (string-match "\\(FL[0-9]+\\)" text) (match-string 1 text) text)))
          (flymake-diagnostics)))
(defun fl-put (key value) (push (cons key value) fl-out))
(condition-case err
    (progn
      (load (getenv "FL_SNIPPET"))
      (require 'eglot)
      (fl-put "eglot" (if (boundp 'eglot-version) eglot-version "?"))
      (find-file (getenv "FL_FILE"))
      (run-hooks 'post-command-hook)   ; eglot-ensure connects after the command that opened the file
      (fl-wait "the connection" (lambda () (eglot-current-server)))
      (flymake-start)
      (fl-wait "diagnostics" (lambda () (flymake-diagnostics)))
      (fl-put "opened" (fl-codes))
      (let* ((server (eglot-current-server))
             (d302 (seq-find (lambda (d) (string-match-p "FL302" (flymake-diagnostic-text d)))
                             (flymake-diagnostics))))
        ;; Hover and pull, through eglot's own connection (eglot 1.9 asks for neither itself).
        (goto-char (flymake-diagnostic-beg d302))
        (fl-put "hover" (let ((answer (jsonrpc-request server :textDocument/hover
                                                       (eglot--TextDocumentPositionParams))))
                          (and answer (plist-get (plist-get answer :contents) :value))))
        (fl-put "pulled" (mapcar (lambda (item) (plist-get item :code))
                                 (plist-get (jsonrpc-request server :textDocument/diagnostic
                                                             `(:textDocument ,(eglot--TextDocumentIdentifier)))
                                            :items)))
        ;; The fix-all by this server's own kind, as C-u M-x eglot-code-actions asks for it.
        (let ((tick (buffer-chars-modified-tick)))
          (eglot-code-actions (point-min) (point-max) "source.fixAll.fusion-lint" t)
          (fl-wait "the fix-all edit" (lambda () (/= tick (buffer-chars-modified-tick)))))
        (save-buffer)
        (fl-wait "FL302 to be gone" (lambda () (not (member "FL302" (fl-codes)))))
        (fl-put "fixed_all" (buffer-substring-no-properties (point-min) (point-max)))
        (fl-put "after_fix" (fl-codes))
        ;; The config changes on disk, no buffer is edited: the buffer's diagnostics come again.
        (with-temp-file (getenv "FL_CONFIG") (insert "[tool.fusion-lint]\nignore = [\"FL3\"]\n"))
        (jsonrpc-notify server :workspace/didChangeWatchedFiles
                        `(:changes [(:uri ,(eglot--path-to-uri (getenv "FL_CONFIG")) :type 2)]))
        (fl-wait "the config change to reach the buffer"
                 (lambda () (not (seq-some (lambda (c) (string-prefix-p "FL3" c)) (fl-codes)))))
        (fl-put "reconfigured" (fl-codes))))
  (error (fl-put "error" (error-message-string err))))
(with-temp-file (getenv "FL_OUT") (insert (json-encode fl-out)))
(kill-emacs 0)
"""


def eglot_snippet() -> str:
    (snippet,) = re.findall(r"^```elisp\n(.*?)^```", EDITORS_PAGE.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    return snippet


def _has_eglot(emacs: str) -> bool:
    done = subprocess.run([emacs, "--batch", "--eval", "(require 'eglot)"], capture_output=True, text=True, timeout=120)
    return done.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(EMACS is None, reason="emacs is not installed (Debian: apt-get install emacs-nox elpa-eglot)")
def test_eglot_shows_the_diagnostics_hover_pull_fix_all_and_a_config_change(tmp_path: Path) -> None:
    pytest.importorskip("pygls", reason="the language server needs the [lsp] extra")
    assert EMACS is not None
    if not _has_eglot(EMACS):
        pytest.skip("this Emacs has no eglot (Emacs 29 has it built in; Debian 12: apt-get install elpa-eglot)")
    project = example_project(tmp_path)
    tools = project / "example_server" / "tools.py"
    original = tools.read_text(encoding="utf-8")
    (tmp_path / "snippet.el").write_text(eglot_snippet())
    (tmp_path / "driver.el").write_text(DRIVER)
    environment = {
        **os.environ,
        "PATH": path_with_fusion_lint(tmp_path),  # the snippet starts `fusion-lint` by name
        "HOME": str(tmp_path / "home"),  # no user configuration
        "FL_SNIPPET": str(tmp_path / "snippet.el"),
        "FL_FILE": str(tools),
        "FL_OUT": str(tmp_path / "out.json"),
        "FL_CONFIG": str(project / "pyproject.toml"),
        "FL_TIMEOUT_S": str(TIMEOUT_S),
    }
    run = subprocess.run(
        [EMACS, "--batch", "-l", str(tmp_path / "driver.el")],
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=6 * TIMEOUT_S,
    )
    assert (tmp_path / "out.json").exists(), f"emacs wrote no result (exit {run.returncode}):\n{run.stderr}"
    result = json.loads((tmp_path / "out.json").read_text())
    assert "error" not in result, f"{result}\n{run.stderr}"
    (project / "pyproject.toml").write_text("[tool.fusion-lint]\n")  # as it was, for the CLI below

    # What Flymake shows is what the CLI reports for the file; a pull answers the same.
    cli = json.loads(
        run_cli(
            project,
            "--output-format",
            "json",
            "--no-cache",
            "--stdin-filename",
            "example_server/tools.py",
            "-",
            stdin=original,
        ).stdout
    )  # the file as it was opened (the driver saved the fixed buffer)
    expected = sorted(d["code"] for d in cli)
    assert sorted(result["opened"]) == expected and {"FL204", "FL300", "FL302"} <= set(expected)
    assert sorted(result["pulled"]) == expected
    # Hover on a diagnostic: the rule's page.
    assert result["hover"].startswith("### FL302") and "**What it does.**" in result["hover"], result["hover"]
    # The fix-all: what `fusion-lint --fix` makes of the file; its fixed findings are gone.
    cli_fixed = run_cli(project, "--fix", "--stdin-filename", "example_server/tools.py", "-", stdin=original)
    assert cli_fixed.stdout != original, cli_fixed.stderr
    assert result["fixed_all"] == cli_fixed.stdout
    assert "FL302" not in result["after_fix"] and "FL300" in result["after_fix"]
    # The config edit on disk re-published the buffer's diagnostics: no FL3xx left, the rest kept.
    assert result["reconfigured"] and not any(code.startswith("FL3") for code in result["reconfigured"])
    assert set(result["reconfigured"]) == {code for code in result["after_fix"] if not code.startswith("FL3")}
