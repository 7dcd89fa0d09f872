// The cancel client is an MCP client on the TypeScript SDK: it connects over Streamable HTTP to the
// URL given, or over stdio to the command given after "stdio" (its arguments last), calls the tool
// named with no arguments, and aborts the call after the milliseconds given, which has the SDK send
// notifications/cancelled. It prints one JSON line: when it aborted (epoch milliseconds) and what
// the call ended with.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, after, ...command] = process.argv.slice(2);
const client = new Client({ name: "cancel-client", version: "1" });
await client.connect(
  url === "stdio"
    ? new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(url)),
);
const abort = new AbortController();
let abortedAt = 0;
setTimeout(() => {
  abortedAt = Date.now();
  abort.abort("The user stopped the call.");
}, Number(after));
let ended;
try {
  await client.callTool({ name: tool, arguments: {} }, undefined, {
    signal: abort.signal,
    timeout: 120_000,
  });
  ended = "answered";
} catch (error) {
  ended = String(error);
}
process.stdout.write(JSON.stringify({ abortedAt, ended }) + "\n");
// The SDK sends notifications/cancelled without awaiting it; closing now would abort that POST.
await new Promise((resolve) => setTimeout(resolve, 2000));
await client.close();
