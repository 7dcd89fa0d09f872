package dev.toolhost.mcp;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The conformance client is the bridge as the MCP conformance suite's client scenarios run it: it
 * connects to the server at the URL it is given, as a Streamable HTTP server, and calls what the
 * scenario named in {@code MCP_CONFORMANCE_SCENARIO} expects ({@code add_numbers} for {@code
 * tools_call}, {@code test_reconnection} for {@code sse-retry}; nothing more for {@code
 * initialize}). It exits 0 when every call answered, 1 otherwise.
 */
public final class ConformanceClient {

  private static final Map<String, String> CALLS =
      Map.of("add_numbers", "{\"a\": 2, \"b\": 3}", "test_reconnection", "{}");

  private ConformanceClient() {}

  public static void main(String[] args) throws Exception {
    ToolRegistry registry = new ToolRegistry();
    ToolDispatcher dispatcher = ToolDispatcher.create();
    Path state = Files.createTempDirectory("toolhost-conformance");
    int failed = 0;
    McpBridge bridge = McpBridge.builder(registry).stateDirectory(state).build();
    try {
      bridge.start(
          List.of(
              new McpServerConfig(
                  "conformance",
                  new McpServerConfig.StreamableHttp(URI.create(args[0]), Map.of()),
                  Optional.of("c."),
                  Duration.ofSeconds(20))));
      for (Map.Entry<String, String> call : CALLS.entrySet()) {
        if (registry.find("c." + call.getKey()).isEmpty()) {
          continue;
        }
        ToolResult result =
            dispatcher.dispatch(
                ToolSet.of(registry, ToolProfiles.MAIN),
                ToolCall.of("c." + call.getKey(), call.getValue()));
        System.out.println(call.getKey() + ": " + result);
        if (result instanceof ToolResult.Failure) {
          failed++;
        }
      }
    } finally {
      bridge.close();
    }
    System.exit(failed == 0 ? 0 : 1);
  }
}
