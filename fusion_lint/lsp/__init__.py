"""The language server (DESIGN §9, §12.4): ``fusion-lint lsp`` on stdio (pygls). All editor
code lives here: nothing outside this package imports pygls, lsprotocol or these modules.

Imports ``check``, ``fix``, ``output`` and the stages before them."""
