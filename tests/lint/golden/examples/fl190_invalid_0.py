from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode
@tool("get_invoice", errors=build_errors())
async def get_invoice(invoice_id: str, ctx):
    return {}
