"""The command line (DESIGN §6): ``fusion-lint [check] [PATH ...]``, ``rule``, ``lock``, ``lsp``;
``main`` is the console script. Exit codes: 0 clean, 1 findings, 2 usage, config or internal error.

Imports every other stage (the language server only when ``lsp`` runs)."""
