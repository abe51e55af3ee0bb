from mcp_fusion import tool, ErrorContract, JsonRpcErrorCode, Context
@tool("list_invoices")
async def list_invoices(customer_id: str) -> list:
    return []

@tool(
    "get_invoice",
    errors=[
        ErrorContract(
            reason="no_match",
            code=JsonRpcErrorCode.NOT_FOUND,
            when="No invoice has that id",
            recovery="Run billing.cache.reset() and then retry get_invoice.",
        )
    ],
)
async def get_invoice(invoice_id: str, ctx: Context) -> dict:
    raise ctx.fail("no_match")
