from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context, McpError, not_found, conflict
ENTRIES = [ErrorContract(reason="no_match", code=JsonRpcErrorCode.NOT_FOUND, when="No invoice", recovery="Call list_invoices to find a valid id.")]
@tool("get_invoice", errors=ENTRIES + [ErrorContract(reason='locked', code=JsonRpcErrorCode.CONFLICT, when='Locked', recovery='Wait a minute then call get_invoice again.')])
async def get_invoice(invoice_id: str, ctx: Context):
    if invoice_id:
        raise ctx.fail('no_match')
    lookup()
def lookup():
    raise conflict('locked', {'reason': 'locked'})
