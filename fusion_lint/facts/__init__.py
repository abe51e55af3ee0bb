"""The per-file facts: what the code *is* (DESIGN §2.1) — every definition, contract expression,
except clause, raise, return and call of a module, with spans placed only for what may be reported.

``extract`` turns CPython's tree of a module into ``FileFacts``, a pure function of the tree.
Imports ``base``."""
