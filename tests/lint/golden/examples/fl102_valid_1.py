from mcp_fusion import tool, prompt, resource, ErrorContract, JsonRpcErrorCode
@tool("get_invoice", errors=[{"reason": "no_match", "code": -32001, "when": "No invoice", "recovery": "Call list_invoices to find valid ids."}])
async def get_invoice(invoice_id: str, ctx):
    return {}
