"""Discovery (DESIGN §2.1, §6, §12.4): which files a run looks at — the walk of the paths, the
default and configured excludes, ``.gitignore`` — and, for the language server, the walk's listings
kept between runs.

Imports ``base``."""
