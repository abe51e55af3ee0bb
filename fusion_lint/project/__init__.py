"""The project view (DESIGN §2.1): every file's facts meet, names are resolved across files, and
every definition is resolved — its contract entries with their values, its handler, its reach
through calls, the tool vocabulary — before any rule runs (``resolve``).

Imports ``base``, ``facts`` and ``source`` (to load the facts of a file a definition leads to)."""
