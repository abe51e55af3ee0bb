"""Shared by both suites: this folder is on ``sys.path`` (for ``budget``)."""
