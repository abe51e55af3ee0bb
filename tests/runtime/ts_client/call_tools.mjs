// The TypeScript SDK's client calling tools of any server, over stdio or Streamable HTTP (issue 33).
// Usage: node call_tools.mjs <sdk package dir> <calls JSON> stdio <cwd> <command> [args...]
//        node call_tools.mjs <sdk package dir> <calls JSON> http <url>
// <calls JSON>: [[tool, arguments], ...]. Prints one JSON array: for each call, {"ok": true, "value":
// <result>} or {"ok": false, "error": {...}} (a JSON-RPC error: what the SDK threw).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, callsJson, kind, ...rest] = process.argv.slice(2);
const load = (relative) => import(pathToFileURL(join(sdkDir, "dist", "esm", relative)).href);
const { Client } = await load("client/index.js");
let transport;
if (kind === "stdio") {
  const { StdioClientTransport } = await load("client/stdio.js");
  const [cwd, command, ...args] = rest;
  transport = new StdioClientTransport({ command, args, cwd, env: { ...process.env }, stderr: "ignore" });
} else {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
}
const client = new Client({ name: "fusion-lint-ts-test", version: "1.0.0" });
await client.connect(transport);
const outcomes = [];
for (const [name, args] of JSON.parse(callsJson)) {
  try {
    outcomes.push({ ok: true, value: await client.callTool({ name, arguments: args }) });
  } catch (error) {
    outcomes.push({ ok: false, error: { name: error.name, code: error.code, message: error.message, data: error.data } });
  }
}
await client.close();
process.stdout.write(JSON.stringify(outcomes) + "\n");
