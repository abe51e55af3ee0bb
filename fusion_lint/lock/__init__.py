"""The contract lockfile (DESIGN §8): ``fusion-lint lock`` writes every tool's and resource's
declared failure surface; ``--check`` classifies each delta (BREAKING, RISKY, SAFE).

Imports ``check`` (the project's analysis), ``output`` and the stages before them."""
