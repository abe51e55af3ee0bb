"""fusion-lint: a static checker for MCP error contracts (DESIGN §4–§11)."""

__version__ = "0.1.0"
