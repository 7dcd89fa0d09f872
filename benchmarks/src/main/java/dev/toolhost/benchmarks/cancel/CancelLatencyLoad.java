package dev.toolhost.benchmarks.cancel;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpBridge;
import dev.toolhost.mcp.McpServerConfig;
import dev.toolhost.server.Host;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.json.JsonMapper;

/**
 * The cancel latency load measures, per path, the time from a call's cancel to its tool seeing it
 * (the tool's sleeping thread interrupted), on a host in this process with a tool that sleeps a
 * minute:
 *
 * <ul>
 *   <li>{@code dispatcher}: the thread that dispatched the call is interrupted (a caller's cancel,
 *       an agent's Ctrl-C);
 *   <li>{@code http}: the client of {@code POST /v1/tools/sleep/invoke} closes its connection;
 *   <li>{@code gateway}: an MCP client of {@code /mcp} sends {@code notifications/cancelled};
 *   <li>{@code bridge}: a call to a bridged stdio MCP server (the mcp module's Node cancel peer, on
 *       the TypeScript SDK, installed under {@code mcp/target/npm} by that module's tests) is
 *       cancelled by interrupting its caller; the server records when its request's signal aborts,
 *       to the millisecond of the wall clock, so this path is measured in whole milliseconds.
 * </ul>
 *
 * <p>Beside them the raw baseline: a sleeping virtual thread interrupted by another, the floor any
 * path stands on. Prints p50 and p99 in microseconds, and each path's ratio to the baseline.
 *
 * <p>{@code java -cp benchmarks.jar dev.toolhost.benchmarks.cancel.CancelLatencyLoad [calls]}
 */
public final class CancelLatencyLoad {

  private static final JsonMapper JSON = JsonMapper.shared();

  private CancelLatencyLoad() {}

  /** One started call's clock: when its tool began sleeping, and when it saw the cancel. */
  private record Seen(long startedAt, CompletableFuture<Long> interruptedAt) {}

  public static void main(String[] args) throws Exception {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    SynchronousQueue<Seen> started = new SynchronousQueue<>();
    Path directory = Files.createTempDirectory("cancel-load");
    try (Host host =
        Host.builder(HostConfig.parse("http:\n  port: 0\n", "toolhost.yaml", directory)).build()) {
      host.registry()
          .register(
              ExecutableTool.of(
                  new ToolSpec(
                      "sleep",
                      "Sleeps a minute.",
                      JSON.createObjectNode().put("type", "object"),
                      "builtin:benchmark"),
                  (call, arguments) -> {
                    CompletableFuture<Long> seen = new CompletableFuture<>();
                    started.put(new Seen(System.nanoTime(), seen));
                    try {
                      Thread.sleep(Duration.ofMinutes(1));
                    } catch (InterruptedException e) {
                      seen.complete(System.nanoTime());
                      throw e;
                    }
                    return ToolResult.success("slept");
                  }));
      URI base = host.start();
      List<String> rows = new ArrayList<>();
      // Warm every path first, then measure them in turn, alternating, calls/10 at a time.
      baseline(calls / 4);
      dispatcher(host, started, calls / 4);
      http(base, started, calls / 4);
      gateway(base, started, calls / 4);
      List<Long> baseline = new ArrayList<>();
      List<Long> dispatcher = new ArrayList<>();
      List<Long> http = new ArrayList<>();
      List<Long> gateway = new ArrayList<>();
      for (int round = 0; round < 10; round++) {
        baseline.addAll(baseline(calls / 10));
        dispatcher.addAll(dispatcher(host, started, calls / 10));
        http.addAll(http(base, started, calls / 10));
        gateway.addAll(gateway(base, started, calls / 10));
      }
      List<Long> bridge = new ArrayList<>();
      Path peer = Path.of("mcp/target/npm/cancel-peer.mjs");
      if (Files.exists(peer)) {
        bridge = bridge(peer, directory, calls / 4);
      } else {
        System.err.println(peer + " is missing (run the mcp module's tests once): no bridge row.");
      }
      long base50 = percentile(baseline, 50);
      long base99 = percentile(baseline, 99);
      rows.add(row("baseline (thread interrupt)", baseline, base50, base99));
      rows.add(row("dispatcher (caller interrupted)", dispatcher, base50, base99));
      rows.add(row("http (client closes)", http, base50, base99));
      rows.add(row("gateway (notifications/cancelled)", gateway, base50, base99));
      if (!bridge.isEmpty()) {
        rows.add(row("bridge, stdio (notifications/cancelled)", bridge, base50, base99));
      }
      System.out.printf(
          "%-36s %8s %10s %10s %9s %9s%n", "path", "calls", "p50 us", "p99 us", "p50 x", "p99 x");
      rows.forEach(System.out::println);
    }
  }

  private static String row(String name, List<Long> nanos, long base50, long base99) {
    long p50 = percentile(nanos, 50);
    long p99 = percentile(nanos, 99);
    return String.format(
        Locale.ROOT,
        "%-36s %8d %10.1f %10.1f %9.2f %9.2f",
        name,
        nanos.size(),
        p50 / 1000.0,
        p99 / 1000.0,
        (double) p50 / base50,
        (double) p99 / base99);
  }

  private static long percentile(List<Long> values, int percent) {
    List<Long> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int index = (int) Math.ceil(percent / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, index));
  }

  /** A sleeping virtual thread, interrupted: from the interrupt to its catch. */
  private static List<Long> baseline(int calls) throws Exception {
    List<Long> nanos = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      CompletableFuture<Long> seen = new CompletableFuture<>();
      CompletableFuture<Void> sleeping = new CompletableFuture<>();
      Thread sleeper =
          Thread.ofVirtual()
              .start(
                  () -> {
                    sleeping.complete(null);
                    try {
                      Thread.sleep(Duration.ofMinutes(1));
                    } catch (InterruptedException e) {
                      seen.complete(System.nanoTime());
                    }
                  });
      sleeping.get();
      Thread.sleep(1); // Asleep, as the tools are when their cancel comes.
      long cancelledAt = System.nanoTime();
      sleeper.interrupt();
      nanos.add(seen.get(10, TimeUnit.SECONDS) - cancelledAt);
    }
    return nanos;
  }

  /** A call dispatched on a thread that is then interrupted. */
  private static List<Long> dispatcher(Host host, SynchronousQueue<Seen> started, int calls)
      throws Exception {
    List<Long> nanos = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      Thread caller =
          Thread.ofVirtual()
              .start(
                  () ->
                      host.dispatcher()
                          .dispatch(
                              host.toolSet("main"),
                              ToolCall.of("sleep", "{}").withTimeout(Duration.ofMinutes(2))));
      Seen seen = started.take();
      Thread.sleep(1);
      long cancelledAt = System.nanoTime();
      caller.interrupt();
      nanos.add(seen.interruptedAt().get(10, TimeUnit.SECONDS) - cancelledAt);
      caller.join();
    }
    return nanos;
  }

  /** An HTTP invoke whose client closes its connection while the tool runs. */
  private static List<Long> http(URI base, SynchronousQueue<Seen> started, int calls)
      throws Exception {
    List<Long> nanos = new ArrayList<>();
    byte[] request =
        ("POST /v1/tools/sleep/invoke HTTP/1.1\r\nHost: 127.0.0.1:"
                + base.getPort()
                + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            .getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i < calls; i++) {
      Seen seen;
      long cancelledAt;
      try (Socket socket = new Socket(base.getHost(), base.getPort())) {
        OutputStream out = socket.getOutputStream();
        out.write(request);
        out.flush();
        seen = started.take();
        Thread.sleep(1);
        cancelledAt = System.nanoTime();
      }
      nanos.add(seen.interruptedAt().get(10, TimeUnit.SECONDS) - cancelledAt);
    }
    return nanos;
  }

  /** An MCP tools/call over the gateway, cancelled with notifications/cancelled. */
  private static List<Long> gateway(URI base, SynchronousQueue<Seen> started, int calls)
      throws Exception {
    List<Long> nanos = new ArrayList<>();
    URI mcp = base.resolve("/mcp");
    try (HttpClient client = HttpClient.newHttpClient()) {
      HttpResponse<String> opened =
          client.send(
              post(
                  mcp,
                  null,
                  "{\"jsonrpc\": \"2.0\", \"id\": 0, \"method\": \"initialize\", \"params\":"
                      + " {\"protocolVersion\": \"2025-06-18\", \"capabilities\": {},"
                      + " \"clientInfo\": {\"name\": \"cancel-load\", \"version\": \"1\"}}}"),
              HttpResponse.BodyHandlers.ofString());
      String session = opened.headers().firstValue("mcp-session-id").orElseThrow();
      client.send(
          post(mcp, session, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}"),
          HttpResponse.BodyHandlers.discarding());
      for (int i = 1; i <= calls; i++) {
        CompletableFuture<HttpResponse<String>> call =
            client.sendAsync(
                post(
                    mcp,
                    session,
                    "{\"jsonrpc\": \"2.0\", \"id\": "
                        + i
                        + ", \"method\": \"tools/call\", \"params\": {\"name\": \"sleep\","
                        + " \"arguments\": {}}}"),
                HttpResponse.BodyHandlers.ofString());
        Seen seen = started.take();
        Thread.sleep(1);
        long cancelledAt = System.nanoTime();
        client.send(
            post(
                mcp,
                session,
                "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\", \"params\":"
                    + " {\"requestId\": "
                    + i
                    + ", \"reason\": \"load\"}}"),
            HttpResponse.BodyHandlers.discarding());
        nanos.add(seen.interruptedAt().get(10, TimeUnit.SECONDS) - cancelledAt);
        // The SDK answers the cancelled call (its isError result): the next call waits for it.
        call.get(10, TimeUnit.SECONDS);
      }
    }
    return nanos;
  }

  /** Calls to a bridged stdio MCP server's sleeping tool, each cancelled once it runs. */
  private static List<Long> bridge(Path peer, Path directory, int calls) throws Exception {
    Path record = directory.resolve("peer.jsonl");
    ToolRegistry registry = new ToolRegistry();
    ToolDispatcher dispatcher = ToolDispatcher.create();
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    List<Long> nanos = new ArrayList<>();
    try (McpBridge bridge = McpBridge.builder(registry).stateDirectory(directory).build()) {
      bridge.start(
          List.of(
              new McpServerConfig(
                  "peer",
                  new McpServerConfig.Stdio(
                      "node",
                      List.of(peer.toAbsolutePath().toString(), "stdio"),
                      Map.of("CANCEL_PEER_RECORD", record.toString())),
                  Optional.of("p."),
                  Duration.ofSeconds(90))));
      if (registry.find("p.sleep").isEmpty()) {
        throw new IllegalStateException("the bridge did not reach the cancel peer");
      }
      // Warm up, then measure.
      for (int i = -calls / 4; i < calls; i++) {
        long linesBefore = lines(record);
        Thread caller =
            Thread.ofVirtual()
                .start(() -> dispatcher.dispatch(tools, ToolCall.of("p.sleep", "{}")));
        while (lines(record) < linesBefore + 1) {
          Thread.sleep(1);
        }
        long cancelledAt = System.currentTimeMillis();
        caller.interrupt();
        caller.join();
        while (lines(record) < linesBefore + 2) {
          Thread.sleep(1);
        }
        List<String> all = Files.readAllLines(record);
        long seenAt = JSON.readTree(all.getLast()).get("at").asLong();
        if (i >= 0) {
          nanos.add(Math.max(0, seenAt - cancelledAt) * 1_000_000);
        }
      }
    }
    return nanos;
  }

  private static long lines(Path file) throws java.io.IOException {
    return Files.exists(file) ? Files.readAllLines(file).size() : 0;
  }

  private static HttpRequest post(URI uri, String session, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      request.header("Mcp-Session-Id", session);
    }
    return request.build();
  }
}
