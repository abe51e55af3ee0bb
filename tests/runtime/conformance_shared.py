"""What both conformance fixtures serve alike (``conformance_fusion.py``, ``conformance_mcpserver.py``):
the scenarios' minimal media and the two declared failures."""

from __future__ import annotations

from mcp_fusion import ErrorContract, JsonRpcErrorCode

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

INTENTIONAL = ErrorContract(
    reason="intentional_error",
    code=JsonRpcErrorCode.INTERNAL_ERROR,
    when="Always: the scenario checks how a failing tool is reported",
    recovery="Do not call test_error_handling again; call test_simple_text to check the server instead.",
)
NO_CAPABILITY = ErrorContract(
    reason="client_capability_missing",
    code=JsonRpcErrorCode.INVALID_REQUEST,
    when="The client did not declare the capability the tool needs (sampling or elicitation)",
    recovery="Reconnect with a client that declares the capability, then call the tool again.",
)
MESSAGE = "This tool intentionally returns an error for testing"
