from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode
@prompt("summarize", errors=[ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id", recovery="Call list_invoices to find a valid invoice id.")])
def summarize(text: str) -> str:
    return text
