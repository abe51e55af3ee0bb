"""The per-file facts: what the code is (DESIGN §2.1).

``extract`` turns CPython's tree of a module into ``FileFacts``.
"""
