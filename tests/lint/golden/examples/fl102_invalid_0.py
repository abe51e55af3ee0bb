from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode
@tool("get_invoice", errors=["no_match"])
async def get_invoice(invoice_id: str, ctx):
    return {}
