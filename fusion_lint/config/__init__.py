"""Configuration (DESIGN §6, §12.4): ``[tool.fusion-lint]`` in ``pyproject.toml``,
``fusion-lint.toml`` or ``.fusion-lint.toml``, read as data (never code), validated with the key and the
file named in every error; each file's closest config (``tree``).

Imports ``base`` and ``discovery`` (whose pattern checks validate ``exclude`` and ``per-file-ignores``)."""
