from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode
@tool("get_invoice", errors=[ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice has that id", recovery='Try again')])
async def get_invoice(invoice_id: str, ctx):
    return {}
