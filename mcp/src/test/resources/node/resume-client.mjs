// The resume client is an MCP client on the TypeScript SDK whose connection drops mid-call: it
// connects over Streamable HTTP to the URL given and calls the tool named first, asking for
// progress. Its fetch cuts that call's event stream right after the first event that carries a
// message, closing the connection; the SDK then resumes the stream with a GET that carries
// Last-Event-ID. Once the call has answered it calls the tool named second, in the same session.
// It prints one JSON line: the progress it got, both answers, the event ids it saw, and each
// request it sent (method and Last-Event-ID).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, second] = process.argv.slice(2);
const requests = [];
const errors = [];
let cutAfter = null;

// A fetch that closes the first tool call's event stream after its first message.
async function cutting(input, init = {}) {
  const headers = new Headers(init.headers);
  const method = init.method ?? "GET";
  requests.push({ method, lastEventId: headers.get("last-event-id") });
  const connection = new AbortController();
  const signal = init.signal ? AbortSignal.any([init.signal, connection.signal]) : connection.signal;
  const response = await fetch(input, { ...init, signal });
  const streamed = (response.headers.get("content-type") ?? "").includes("text/event-stream");
  const calls = typeof init.body === "string" && init.body.includes('"tools/call"');
  if (cutAfter !== null || method !== "POST" || !streamed || !calls) {
    return response;
  }
  cutAfter = "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let seen = "";
  const body = new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      seen += decoder.decode(value, { stream: true });
      let start = 0;
      let end;
      while ((end = seen.indexOf("\n\n", start)) >= 0) {
        const event = seen.slice(start, end);
        start = end + 2;
        if (/^data: *\S/m.test(event)) {
          // The first message: pass everything up to its end, then close the connection.
          controller.enqueue(encoder.encode(seen.slice(0, start)));
          cutAfter = (event.match(/^id: *(.*)$/m) ?? [])[1] ?? "";
          connection.abort();
          controller.error(new TypeError("the connection was cut"));
          return;
        }
      }
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

const client = new Client({ name: "resume-client", version: "1" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  fetch: cutting,
  reconnectionOptions: {
    initialReconnectionDelay: 200,
    maxReconnectionDelay: 1000,
    reconnectionDelayGrowFactor: 1.5,
    maxRetries: 3,
  },
});
transport.onerror = (error) => errors.push(String(error));
await client.connect(transport);
const began = Date.now();
const log = (what) => process.stderr.write(`${Date.now() - began} ms: ${what}\n`);
const progress = [];
const ids = [];
const answer = await client.callTool({ name: tool, arguments: {} }, undefined, {
  onprogress: (update) => { log(`progress ${update.progress}`); progress.push(update.progress); },
  onresumptiontoken: (id) => ids.push(id),
  timeout: 30_000,
});
log("answered");
const then = await client.callTool({ name: second, arguments: {} }, undefined, { timeout: 30_000 });
process.stdout.write(
  JSON.stringify({
    progress,
    answer: answer.content?.[0]?.text ?? null,
    second: then.content?.[0]?.text ?? null,
    cutAfter,
    ids,
    requests,
    errors,
  }) + "\n",
);
log("printed");
await client.close();
log("closed");
