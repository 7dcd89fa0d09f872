// The cancel peer is an MCP server on the TypeScript SDK, over stdio ("stdio") or Streamable HTTP
// ("http", on a free port of 127.0.0.1 that it prints as "listening PORT"), whose one tool, sleep,
// sleeps 60 s and records in the file named by CANCEL_PEER_RECORD, one JSON line each, when it
// started and when it was cancelled (the SDK aborts a request's signal on notifications/cancelled,
// with its reason) or finished. While it sleeps it reports progress every 100 ms to a caller that sent a token.
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const record = process.env.CANCEL_PEER_RECORD;

function note(event) {
  appendFileSync(record, JSON.stringify({ ...event, at: Date.now() }) + "\n");
}

function server() {
  const server = new Server({ name: "cancel-peer", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "sleep",
        description: "Sleeps 60 s, or until cancelled.",
        inputSchema: { type: "object", properties: {} },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    note({ event: "started", request: extra.requestId });
    let reported = 0;
    const progress =
      token === undefined
        ? undefined
        : setInterval(() => {
            reported += 1;
            extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, progress: reported, total: 600 },
              })
              .catch(() => {});
          }, 100);
    const cancelled = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), 60_000);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    clearInterval(progress);
    note({
      event: cancelled ? "cancelled" : "finished",
      request: extra.requestId,
      reason: cancelled ? String(extra.signal.reason) : "",
    });
    return { content: [{ type: "text", text: cancelled ? "cancelled" : "slept 60 s" }] };
  });
  return server;
}

if (process.argv[2] === "http") {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = id === undefined ? undefined : transports.get(id);
    if (transport === undefined) {
      if (id !== undefined) {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (session) => transports.set(session, transport),
      });
      await server().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  http.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening ${http.address().port}\n`);
  });
} else {
  await server().connect(new StdioServerTransport());
}
