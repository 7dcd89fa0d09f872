package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolProgress;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpBridge;
import dev.toolhost.mcp.McpServerConfig;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.mcp.TestProcesses;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host that bridges the MCP reference server from its config file and serves its tools through
 * its MCP gateway: to this process's own bridge (with progress and the trace), and to the MCP
 * Inspector. (The bridged tools in a host without the gateway: the mcp module's {@code
 * HostMcpTest}.)
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostMcpTest {

  private static final String MARKER = "mcp-server-everything";

  @TempDir Path dir;
  private Host host;

  @AfterEach
  void closeHost() throws InterruptedException {
    if (host != null) {
      host.close();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (TestProcesses.aliveDescendants(MARKER) > 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(TestProcesses.aliveDescendants(MARKER)).isZero();
  }

  private Path config() throws Exception {
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(
        file,
        "http:\n  port: 0\n"
            + NpmPackages.everythingAndGhostSection("allow_register: stdio", dir.resolve("state")));
    return file;
  }

  /** The host's own MCP gateway, as a server this process's bridge connects to. */
  private McpServerConfig theHostsGateway() {
    return new McpServerConfig(
        "host",
        new McpServerConfig.StreamableHttp(host.uri().resolve("mcp"), Map.of()),
        Optional.empty(),
        Duration.ofSeconds(60));
  }

  @Test
  void aBridgedToolsProgressReachesTheMcpClientThatAskedForIt() throws Exception {
    host = Host.builder(HostConfig.load(config())).environment(Map.of()).build();
    host.start();
    ToolRegistry client = new ToolRegistry();
    List<String> heard = new CopyOnWriteArrayList<>();

    // The client is this process's own bridge, through the gateway to the host, which bridges the
    // reference server: progress goes server -> host's bridge -> gateway -> client's bridge.
    ToolResult result;
    try (McpBridge bridge =
        McpBridge.builder(client).startTimeout(Duration.ofSeconds(30)).build()) {
      bridge.start(List.of(theHostsGateway()));
      try (Scope ignored =
          ToolProgress.listen(
              (progress, total, message) -> heard.add(progress + "/" + total.orElse(-1.0)))) {
        result =
            ToolDispatcher.create()
                .dispatch(
                    ToolSet.of(client, ToolProfiles.MAIN),
                    ToolCall.of(
                        "host_everything_trigger-long-running-operation",
                        "{\"duration\": 1, \"steps\": 3}"));
      }
    }

    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(result.text()).contains("Steps: 3");
    assertThat(heard).containsExactly("1.0/3.0", "2.0/3.0", "3.0/3.0");
  }

  @Test
  void aCallThroughTheGatewayJoinsTheCallersTrace() throws Exception {
    InMemorySpanExporter onHost = InMemorySpanExporter.create();
    host =
        Host.builder(HostConfig.load(config()))
            .environment(Map.of())
            .spanProcessor(SimpleSpanProcessor.create(onHost))
            .build();
    host.start();
    InMemorySpanExporter here = InMemorySpanExporter.create();
    ToolRegistry client = new ToolRegistry();

    ToolResult result;
    List<SpanData> spansHere;
    try (OpenTelemetrySdk sdk =
            OpenTelemetrySdk.builder()
                .setTracerProvider(
                    SdkTracerProvider.builder()
                        .addSpanProcessor(SimpleSpanProcessor.create(here))
                        .build())
                .build();
        McpBridge bridge = McpBridge.builder(client).startTimeout(Duration.ofSeconds(30)).build()) {
      bridge.start(List.of(theHostsGateway()));
      result =
          ToolDispatcher.builder()
              .openTelemetry(sdk)
              .build()
              .dispatch(
                  ToolSet.of(client, ToolProfiles.MAIN),
                  ToolCall.of("host_everything_echo", "{\"message\": \"traced\"}"));
      // Read before the SDK closes: shutting down clears the exporter.
      spansHere = here.getFinishedSpanItems();
    }

    assertThat(result.isError()).as(result.text()).isFalse();
    SpanData caller =
        spansHere.stream()
            .filter(span -> span.getName().equals("execute_tool host_everything_echo"))
            .findFirst()
            .orElseThrow();
    // The host's span of the same call (sent in the request's _meta) is the caller's child.
    SpanData served =
        onHost.getFinishedSpanItems().stream()
            .filter(span -> span.getName().equals("execute_tool everything_echo"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no host span in " + onHost));
    assertThat(served.getTraceId()).isEqualTo(caller.getTraceId());
    assertThat(served.getParentSpanId()).isEqualTo(caller.getSpanId());
    assertThat(served.getParentSpanContext().isRemote()).isTrue();
  }

  @Test
  void theInspectorSeesTheBridgedToolsThroughTheGateway() throws Exception {
    host = Host.builder(HostConfig.load(config())).environment(Map.of()).build();
    String url = host.start() + "mcp";

    String output =
        InspectorCli.run(
            url,
            "--method",
            "tools/call",
            "--tool-name",
            "everything_echo",
            "--tool-arg",
            "message=through the gateway");

    assertThat(output).contains("through the gateway").contains("\"isError\": false");
  }
}
