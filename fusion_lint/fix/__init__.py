"""Applying fixes and suppressions to files (DESIGN §6 ``--fix``/``--diff``/``--add-noqa``, §11):
in rounds, never losing data, each file written back atomically keeping its owner, group and mode.

Imports ``check`` (to lint the fixed texts again) and the stages before it."""
