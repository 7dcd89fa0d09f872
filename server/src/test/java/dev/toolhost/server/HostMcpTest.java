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
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A host that bridges the MCP reference server from its config file and serves its tools. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostMcpTest {

  private static final String MARKER = "mcp-server-everything";
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.builder().build();

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

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  private Path config() throws Exception {
    return config("allow_register: stdio");
  }

  private Path config(String registration) throws Exception {
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(
        file,
        """
        http:
          port: 0
        mcp:
          %s
          state_dir: %s
          servers:
            everything:
              command: %s
              args: [stdio]
              timeout: 30s
            ghost:
              command: /nonexistent/mcp-server
        """
            .formatted(registration, dir.resolve("state"), NpmPackages.bin(MARKER)));
    return file;
  }

  private HttpResponse<String> get(String path) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(host.uri().resolve(path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(host.uri().resolve(path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static List<String> names(JsonNode tools) {
    List<String> names = new ArrayList<>();
    tools.get("tools").forEach(tool -> names.add(tool.at("/function/name").asString()));
    return names;
  }

  private static String source(JsonNode tools, String name) {
    for (JsonNode tool : tools.get("tools")) {
      if (tool.at("/function/name").asString().equals(name)) {
        return tool.get("source").asString();
      }
    }
    throw new AssertionError("no tool " + name);
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
  void theHttpApiServesTheConfiguredServersToolsBesideABrokenOne() throws Exception {
    host = Host.builder(HostConfig.load(config())).environment(Map.of()).build();
    host.start();

    JsonNode tools = JSON.readTree(get("/v1/tools").body());
    assertThat(names(tools))
        .contains("everything_echo", "everything_get-sum")
        .contains(
            "mcp_list_services",
            "mcp_get_service_details",
            "mcp_invoke_tool",
            "mcp_register_server",
            "mcp_unregister_server");
    assertThat(source(tools, "everything_echo")).isEqualTo("mcp:everything");
    assertThat(source(tools, "mcp_invoke_tool")).isEqualTo(McpBridge.MANAGEMENT_SOURCE);
    assertThat(host.service(McpBridge.class).orElseThrow().server("ghost").orElseThrow().state())
        .isEqualTo("broken");

    HttpResponse<String> echo =
        post("/v1/tools/everything_echo/invoke", "{\"arguments\": {\"message\": \"from config\"}}");
    assertThat(echo.statusCode()).isEqualTo(200);
    JsonNode answer = JSON.readTree(echo.body());
    assertThat(answer.get("is_error").asBoolean()).as(echo.body()).isFalse();
    assertThat(answer.get("content").asString()).contains("from config");

    JsonNode found = JSON.readTree(get("/v1/services/search?q=everything+echo").body());
    assertThat(found.get("results")).hasSize(1);
    assertThat(found.at("/results/0/id").asString()).isEqualTo("everything");
    assertThat(found.at("/results/0/type").asString()).isEqualTo("mcp");
    // Derived from its tools' descriptions, the echo tool's among them.
    assertThat(found.at("/results/0/summary").asString())
        .startsWith("MCP server everything: ")
        .containsIgnoringCase("echo");

    JsonNode services =
        JSON.readTree(post("/v1/tools/mcp_list_services/invoke", "{\"arguments\": {}}").body());
    assertThat(services.get("content").asString()).contains("everything").contains("ghost");

    JsonNode guide =
        JSON.readTree(
            post(
                    "/v1/tools/get_tool_guide/invoke",
                    "{\"arguments\": {\"name\": \"mcp-tool-guide\"}}")
                .body());
    assertThat(guide.get("is_error").asBoolean()).as(guide.toString()).isFalse();
    assertThat(Files.exists(dir.resolve("state/mcp-pins.json"))).isTrue();
  }

  @Test
  void theSubagentProfileHidesServerRegistrationButNotTheServersTools() throws Exception {
    host = Host.builder(HostConfig.load(config())).environment(Map.of()).build();
    host.start();

    JsonNode tools = JSON.readTree(get("/v1/tools?profile=subagent").body());

    assertThat(names(tools))
        .contains("everything_echo", "mcp_list_services", "mcp_invoke_tool")
        .doesNotContain("mcp_register_server", "mcp_unregister_server");
    JsonNode refused =
        JSON.readTree(
            post(
                    "/v1/tools/mcp_register_server/invoke?profile=subagent",
                    "{\"arguments\": {\"server_name\": \"x\", \"command\": \"x\"}}")
                .body());
    assertThat(refused.get("is_error").asBoolean()).isTrue();
    assertThat(refused.at("/error/code").asString()).isEqualTo("tool_not_found");
  }

  @Test
  void withoutOptingInTheHostOffersNoWayForAModelToRegisterAServer() throws Exception {
    host = Host.builder(HostConfig.load(config("approved: []"))).environment(Map.of()).build();
    host.start();

    assertThat(names(JSON.readTree(get("/v1/tools").body())))
        .contains("everything_echo", "mcp_list_services", "mcp_invoke_tool")
        .doesNotContain("mcp_register_server", "mcp_unregister_server");
    JsonNode refused =
        JSON.readTree(
            post(
                    "/v1/tools/mcp_register_server/invoke",
                    "{\"arguments\": {\"server_name\": \"x\", \"command\": \"/bin/sh\"}}")
                .body());
    assertThat(refused.at("/error/code").asString()).isEqualTo("tool_not_found");
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

  @Test
  void closingTheHostStopsTheServersItStarted() throws Exception {
    host = Host.builder(HostConfig.load(config())).environment(Map.of()).build();
    assertThat(TestProcesses.aliveDescendants(MARKER)).isPositive();

    host.close();

    assertThat(host.registry().find("everything_echo")).isEmpty();
  }
}
