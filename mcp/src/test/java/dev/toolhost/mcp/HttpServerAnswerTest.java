package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolAnnotations;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/** The bridge against a Streamable HTTP server of our own: the gateway, in Jetty. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class HttpServerAnswerTest {

  private final ToolRegistry served = new ToolRegistry();
  private final ToolRegistry bridged = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private McpGateway gateway;
  private ServedGateway http;
  private McpBridge bridge;

  @AfterEach
  void stop() throws Exception {
    if (bridge != null) {
      bridge.close();
    }
    if (http != null) {
      http.close();
    }
    if (gateway != null) {
      gateway.close();
    }
  }

  private URI serve() throws Exception {
    served.register(
        ExecutableTool.of(
            new ToolSpec(
                "big",
                "Answers with the given number of characters.",
                JsonMapper.shared()
                    .readValue(
                        "{\"type\": \"object\", \"properties\": {\"chars\": {\"type\":"
                            + " \"integer\"}}, \"required\": [\"chars\"]}",
                        tools.jackson.databind.node.ObjectNode.class),
                "test",
                ToolAnnotations.READ_ONLY),
            (call, arguments) -> ToolResult.success("x".repeat(arguments.get("chars").asInt()))));
    gateway =
        McpGateway.http(
            served,
            ToolSet.of(served, ToolProfiles.MAIN),
            dispatcher,
            "/mcp",
            List.of("127.0.0.1:*"),
            List.of("http://127.0.0.1:*"));
    http = ServedGateway.serve(gateway);
    return http.endpoint();
  }

  @Test
  void anOversizedAnswerOverHttpFailsThatCallAndTheServerAnswersAgain() throws Exception {
    // A read-only tool: were the failure taken for a lost connection, it would be retried.
    URI url = serve();
    bridge = McpBridge.builder(bridged).build();
    bridge.start(List.of(McpServerConfig.http("remote", url)));
    ToolSet tools = ToolSet.of(bridged, ToolProfiles.MAIN);

    ToolResult result =
        dispatcher.dispatch(
            tools,
            ToolCall.of("remote_big", "{\"chars\": 20000000}").withTimeout(Duration.ofSeconds(60)));

    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(result.text()).contains("larger than the host accepts").contains("Ask for less");
    // The connection was recycled, and the state said so until it was back.
    assertThat(bridge.server("remote").orElseThrow().lastError()).contains("maximum");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!bridge.server("remote").orElseThrow().state().equals("connected")) {
      assertThat(System.nanoTime()).as("reconnected within 20 s").isLessThan(deadline);
      Thread.sleep(50);
    }
    ToolResult small =
        dispatcher.dispatch(
            tools,
            ToolCall.of("remote_big", "{\"chars\": 10}").withTimeout(Duration.ofSeconds(30)));
    assertThat(small.text()).isEqualTo("x".repeat(10));
  }
}
