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
            recovery="Set MAX_RETRIES in settings.py or pass --force, then call _reload_index first.",
        )
    ],
)
async def get_invoice(invoice_id: str, ctx: Context) -> dict:
    raise ctx.fail("no_match")
