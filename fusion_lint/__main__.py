"""``python -m fusion_lint``: the console script, run without importing code from the working directory.

``-m`` puts the working directory first on ``sys.path``; run in a checkout, a local ``click/`` or a
vendored ``mcp_fusion/`` would be imported instead of the installed ones (code of the linted tree
would run, DESIGN §11). So that entry goes before anything else is imported, unless it is where
fusion-lint itself lives (a source checkout of fusion-lint, run from its top).
"""

import os
import sys


def _drop_working_directory() -> None:
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed: nothing there to import
        return
    home = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if here == home:
        return
    sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or os.curdir) != here]


_drop_working_directory()

if __name__ == "__main__":
    from fusion_lint.cli.main import main

    main()
