"""Reuse of work (DESIGN §10, §12.4, §13.1): the cache's own directory (``CACHEDIR.TAG``, a
signature, entries signed with a per-user key, never anything outside it), what a file contributed and
what a run reported, and change detection by ``stat`` before hashing.

Imports ``base`` and ``config``."""
