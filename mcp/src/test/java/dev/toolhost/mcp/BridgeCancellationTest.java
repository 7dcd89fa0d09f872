package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolProgress;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import io.opentelemetry.context.Scope;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A call through the bridge that its caller cancels stops on the MCP server too: the bridge sends
 * {@code notifications/cancelled} with the call's request id, over stdio and over Streamable HTTP,
 * to our cancel peer on the TypeScript SDK, whose tool sleeps 60 s and records when the SDK aborted
 * it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BridgeCancellationTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  @TempDir Path temp;
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private McpBridge bridge;
  private Process httpPeer;

  @AfterEach
  void stop() throws InterruptedException {
    if (bridge != null) {
      bridge.close();
    }
    if (httpPeer != null) {
      httpPeer.destroy();
      assertThat(httpPeer.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void aCancelledCallStopsTheToolOfAStdioServerWithinASecond() throws Exception {
    Path record = temp.resolve("record.jsonl");
    List<String> command = NpmPackages.cancelPeer();
    connect(
        new McpServerConfig.Stdio(
            command.getFirst(),
            command.subList(1, command.size()),
            Map.of("CANCEL_PEER_RECORD", record.toString())));

    cancelledWithinASecond(record);
  }

  @Test
  void aCancelledCallStopsTheToolOfAnHttpServerWithinASecond() throws Exception {
    Path record = temp.resolve("record.jsonl");
    ProcessBuilder peer =
        new ProcessBuilder(NpmPackages.cancelPeer("http"))
            .redirectError(temp.resolve("peer.err").toFile());
    peer.environment().put("CANCEL_PEER_RECORD", record.toString());
    httpPeer = peer.start();
    String listening =
        new BufferedReader(new InputStreamReader(httpPeer.getInputStream(), StandardCharsets.UTF_8))
            .readLine();
    assertThat(listening).as("the peer's first line").startsWith("listening ");
    URI url = URI.create("http://127.0.0.1:" + listening.substring(10).trim() + "/mcp");
    connect(new McpServerConfig.StreamableHttp(url, Map.of()));

    cancelledWithinASecond(record);
  }

  private void connect(McpServerConfig.Transport transport) {
    bridge = McpBridge.builder(registry).stateDirectory(temp).build();
    bridge.start(
        List.of(new McpServerConfig("peer", transport, Optional.of("p."), Duration.ofSeconds(90))));
    assertThat(registry.find("p.sleep")).as("the peer's tool, registered").isPresent();
  }

  /**
   * Calls the sleeping tool, waits until it runs and its progress reaches the caller, interrupts
   * the caller, and checks that the caller answers {@code cancelled} and the server's tool was
   * aborted within a second of the interruption.
   */
  private void cancelledWithinASecond(Path record) throws Exception {
    AtomicInteger progress = new AtomicInteger();
    CompletableFuture<ToolResult> answer = new CompletableFuture<>();
    Thread caller =
        Thread.ofVirtual()
            .start(
                () -> {
                  try (Scope ignored =
                      ToolProgress.listen((done, total, message) -> progress.incrementAndGet())) {
                    answer.complete(
                        dispatcher.dispatch(
                            ToolSet.of(registry, ToolProfiles.MAIN),
                            ToolCall.of("p.sleep", "{}").withTimeout(Duration.ofSeconds(90))));
                  }
                });
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> events(record).contains("started") && progress.get() > 0);

    long cancelledAt = System.currentTimeMillis();
    caller.interrupt();

    ToolResult result = answer.get(5, TimeUnit.SECONDS);
    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.CANCELLED);
    await().atMost(Duration.ofSeconds(5)).until(() -> events(record).contains("cancelled"));
    JsonNode stopped =
        Files.readAllLines(record).stream()
            .map(JSON::readTree)
            .filter(line -> line.path("event").asString().equals("cancelled"))
            .findFirst()
            .orElseThrow();
    assertThat(stopped.path("at").asLong() - cancelledAt)
        .as("milliseconds from the caller's cancel to the server's tool seeing it")
        .isLessThan(1000);
    // Stopped by the bridge's notifications/cancelled, which names the call and says why.
    assertThat(stopped.path("reason").asString()).isEqualTo("The caller cancelled the call.");
  }

  private static List<String> events(Path record) {
    try {
      return Files.exists(record)
          ? Files.readAllLines(record).stream()
              .map(line -> JSON.readTree(line).path("event").asString())
              .toList()
          : List.of();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
