from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode
@prompt("summarize")
def summarize(text: str) -> str:
    return text
