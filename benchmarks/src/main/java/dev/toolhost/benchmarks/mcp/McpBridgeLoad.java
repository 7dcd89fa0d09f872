package dev.toolhost.benchmarks.mcp;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.mcp.McpBridge;
import dev.toolhost.mcp.McpServerConfig;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * The MCP bridge load is a latency comparison, in one run, of one tool call made through the bridge
 * (the registry, the {@link ToolDispatcher} with its validation and interceptors, the bridge's
 * executor, and a stdio MCP server) beside the same call made with the bare SDK client ({@link
 * McpSyncClient#callTool}) against a second process of the same server: the reference server's
 * {@code echo} tool with the same message.
 *
 * <p>Calls are sequential (one in flight), after a warm-up of 20,000 calls per side (the JIT's last
 * tier compiles a method after about 10,000 of them), in alternating blocks so that noise from
 * other processes on the machine falls on both sides alike. It prints p50, p90, p99 and the mean of
 * each side and their ratios.
 *
 * <p>Usage: {@code McpBridgeLoad [--calls N] [--warmup N] [--block N] [SERVER-COMMAND ARGS...]};
 * the server command defaults to {@code mcp/target/npm/node_modules/.bin/mcp-server-everything
 * stdio} (installed by the mcp module's tests).
 */
public final class McpBridgeLoad {

  private static final String MESSAGE = "hello from the benchmark";

  private McpBridgeLoad() {}

  /** Runs the comparison and prints its table. */
  public static void main(String[] args) {
    int calls = 4000;
    // Long enough for the JIT's last tier: with 1,000 calls the dispatcher's path, run once per
    // call, was still partly in the early tiers (16 µs before the executor instead of about 1).
    int warmup = 20_000;
    int block = 200;
    List<String> command = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--calls" -> calls = Integer.parseInt(args[++i]);
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        case "--block" -> block = Integer.parseInt(args[++i]);
        default -> command.add(args[i]);
      }
    }
    if (command.isEmpty()) {
      Path everything = Path.of("mcp/target/npm/node_modules/.bin/mcp-server-everything");
      if (!Files.isExecutable(everything)) {
        System.err.println(
            everything
                + " is missing: run the mcp module's tests once (they install it), or pass the"
                + " server command.");
        System.exit(2);
      }
      command = List.of(everything.toAbsolutePath().toString(), "stdio");
    }

    ToolRegistry registry = new ToolRegistry();
    ToolDispatcher dispatcher = ToolDispatcher.create();
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    String arguments = "{\"message\": \"" + MESSAGE + "\"}";
    McpSchema.CallToolRequest request =
        McpSchema.CallToolRequest.builder("echo").arguments(Map.of("message", MESSAGE)).build();

    try (McpBridge bridge = McpBridge.builder(registry).build();
        McpSyncClient bare = bareClient(command)) {
      bridge.start(
          List.of(
              McpServerConfig.stdio(
                  "everything", command.getFirst(), command.subList(1, command.size()))));
      if (registry.find("everything_echo").isEmpty()) {
        throw new IllegalStateException(
            "the bridge did not connect: " + bridge.server("everything").orElseThrow());
      }
      bare.initialize();

      Runnable throughBridge =
          () -> {
            ToolResult result =
                dispatcher.dispatch(tools, ToolCall.of("everything_echo", arguments));
            if (result.isError() || !result.text().contains(MESSAGE)) {
              throw new IllegalStateException("bridge call failed: " + result.text());
            }
          };
      Runnable bareSdk =
          () -> {
            McpSchema.CallToolResult result = bare.callTool(request);
            if (Boolean.TRUE.equals(result.isError())) {
              throw new IllegalStateException("bare call failed: " + result);
            }
          };

      for (int i = 0; i < warmup; i++) {
        throughBridge.run();
        bareSdk.run();
      }
      long[] bridgeNanos = new long[calls];
      long[] bareNanos = new long[calls];
      int done = 0;
      boolean bridgeFirst = true;
      while (done < calls) {
        int n = Math.min(block, calls - done);
        if (bridgeFirst) {
          time(throughBridge, bridgeNanos, done, n);
          time(bareSdk, bareNanos, done, n);
        } else {
          time(bareSdk, bareNanos, done, n);
          time(throughBridge, bridgeNanos, done, n);
        }
        bridgeFirst = !bridgeFirst;
        done += n;
      }
      report(calls, warmup, command, bridgeNanos, bareNanos);
    }
  }

  private static McpSyncClient bareClient(List<String> command) {
    StdioClientTransport transport =
        new StdioClientTransport(
            ServerParameters.builder(command.getFirst())
                .args(command.subList(1, command.size()))
                .build(),
            new JacksonMcpJsonMapper(JsonMapper.shared()));
    return McpClient.sync(transport)
        .clientInfo(McpSchema.Implementation.builder("bare-sdk", "1").build())
        .requestTimeout(Duration.ofSeconds(30))
        .initializationTimeout(Duration.ofSeconds(30))
        .build();
  }

  private static void time(Runnable call, long[] into, int from, int count) {
    for (int i = from; i < from + count; i++) {
      long start = System.nanoTime();
      call.run();
      into[i] = System.nanoTime() - start;
    }
  }

  private static void report(
      int calls, int warmup, List<String> command, long[] bridge, long[] bare) {
    Arrays.sort(bridge);
    Arrays.sort(bare);
    System.out.printf(
        Locale.ROOT,
        "%d sequential calls of 'echo' per side after %d warm-up calls each; server: %s;"
            + " %d processors%n%n",
        calls,
        warmup,
        String.join(" ", command),
        Runtime.getRuntime().availableProcessors());
    System.out.println("| side | p50 (us) | p90 (us) | p99 (us) | mean (us) |");
    System.out.println("| --- | ---: | ---: | ---: | ---: |");
    row("bare SDK (McpSyncClient.callTool)", bare);
    row("bridge (registry + dispatcher + bridge)", bridge);
    System.out.printf(
        Locale.ROOT,
        "| ratio bridge / bare | %.2fx | %.2fx | %.2fx | %.2fx |%n",
        (double) percentile(bridge, 50) / percentile(bare, 50),
        (double) percentile(bridge, 90) / percentile(bare, 90),
        (double) percentile(bridge, 99) / percentile(bare, 99),
        mean(bridge) / mean(bare));
  }

  private static void row(String name, long[] sorted) {
    System.out.printf(
        Locale.ROOT,
        "| %s | %.0f | %.0f | %.0f | %.0f |%n",
        name,
        percentile(sorted, 50) / 1000.0,
        percentile(sorted, 90) / 1000.0,
        percentile(sorted, 99) / 1000.0,
        mean(sorted) / 1000.0);
  }

  private static long percentile(long[] sorted, int percent) {
    int index = (int) Math.ceil(percent / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  private static double mean(long[] values) {
    return Arrays.stream(values).average().orElse(0);
  }
}
