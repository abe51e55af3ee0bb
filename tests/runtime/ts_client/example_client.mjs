// The TypeScript SDK's client against the bundled example server over stdio (issue 16).
// Usage: node example_client.mjs <sdk package dir> <python> <repo root>
// Prints one JSON object: for each step, {"ok": true, "value": <result>} or {"ok": false, "error": {...}}.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, python, repoRoot] = process.argv.slice(2);
const load = (relative) => import(pathToFileURL(join(sdkDir, "dist", "esm", relative)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const transport = new StdioClientTransport({
  command: python,
  args: ["-m", "fixtures.example_server.server"],
  cwd: repoRoot,
  stderr: "ignore",
});
const client = new Client({ name: "fusion-lint-ts-test", version: "1.0.0" });
await client.connect(transport);

const report = {};
async function step(name, call) {
  try {
    report[name] = { ok: true, value: await call() };
  } catch (error) {
    report[name] = { ok: false, error: { name: error.name, code: error.code, message: error.message, data: error.data } };
  }
}

await step("list", () => client.listTools());
await step("success", () => client.callTool({ name: "get_invoice", arguments: { invoice_id: "inv_2026_0001" } }));
await step("declared_failure", () => client.callTool({ name: "get_invoice", arguments: { invoice_id: "inv_missing" } }));
await step("validation_failure", () => client.callTool({ name: "get_invoice", arguments: { invoice_id: 42, extra: true } }));
await step("unknown_tool", () => client.callTool({ name: "no_such_tool", arguments: {} }));
await step("warning_with_output_schema", () => client.callTool({ name: "list_invoices", arguments: { limit: 1 } }));
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
