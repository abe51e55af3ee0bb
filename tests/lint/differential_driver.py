"""The language server's side of the differential harness (``differential.py``): one long-lived
process, as the editor's server is, linting each buffer it is sent the way the server does
(``lsp.server.lint_buffer``, keeping what the server keeps between lints), and answering with the
exit status and the JSON output the CLI would give for the same findings.

Protocol: one JSON object per line on stdin (``{"path": ..., "text": ...}``), one per line on
stdout (``{"status": 0|1|2, "output": ...}``)."""

from __future__ import annotations

import json
import sys
import traceback


def main() -> None:
    from fusion_lint.lsp.server import lint_buffer
    from fusion_lint.output import FORMATTERS

    for line in sys.stdin:
        request = json.loads(line)
        try:
            report = lint_buffer(request["path"], request["text"])
            output = FORMATTERS["json"](report, show_source=False, quiet=False, statistics=False)
            answer = {"status": 1 if report.diagnostics else 0, "output": output}
        except BaseException:  # the harness reports it as a difference
            answer = {"status": 2, "output": traceback.format_exc()}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
