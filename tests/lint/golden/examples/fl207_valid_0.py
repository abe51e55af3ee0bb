from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context, McpError, not_found, conflict
ENTRIES = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice", recovery="Call list_invoices to find a valid id.")]
@tool("get_invoice", errors=[ErrorContract(reason='gone', code=JsonRpcErrorCode.NOT_FOUND, when='Gone', recovery='Call list_invoices to find a valid id.', thrown_by='service')])
async def get_invoice(invoice_id: str, ctx: Context):
    lookup()
def lookup():
    raise not_found('gone', {'reason': 'gone'})
