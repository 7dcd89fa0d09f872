package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpBridge;
import dev.toolhost.mcp.McpServerConfig;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.mcp.TestProcesses;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/** The MCP gateway driven by clients nobody here wrote, and by the bridge over stdio. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class McpGatewayTest {

  private static String inspector(String url, String... method)
      throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(
            List.of(NpmPackages.bin("mcp-inspector"), "--cli", url, "--transport", "http"));
    command.addAll(List.of(method));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    return output;
  }

  @Test
  void aCallFromAnMcpClientGetsTheToolsOwnTimeout() throws Exception {
    HostConfig config = HostConfig.defaults().withHttp(HostConfig.Http.defaults().withPort(0));
    try (Host host = new Host(config)) {
      host.registry().registerAll(MethodTools.of(new HostApiTest.DeadlineProbe(), "builtin:probe"));
      String base = host.start().toString() + "mcp";

      String called = inspector(base, "--method", "tools/call", "--tool-name", "timeLeft");

      Matcher left = Pattern.compile("\"text\": \"(\\d+)\"").matcher(called);
      assertThat(left.find()).as(called).isTrue();
      // MCP requests carry no deadline: past the 60 s default, the tool's two minutes.
      assertThat(Long.parseLong(left.group(1))).isBetween(60_001L, 120_000L);
    }
  }

  @Test
  void theInspectorListsAndCallsToolsThroughAProfileThatHidesOne() throws Exception {
    HostConfig config =
        HostConfig.defaults()
            .withHttp(HostConfig.Http.defaults().withPort(0))
            .withProfiles(
                List.of(
                    HostConfig.Profile.of("narrow")
                        .extending("main")
                        .denyingTools("get_tool_guide")));
    try (Host host = new Host(config)) {
      String base = host.start().toString() + "mcp";

      String all = inspector(base, "--method", "tools/list");
      assertThat(all).contains("\"list_tool_guides\"").contains("\"get_tool_guide\"");

      String narrow = inspector(base + "/narrow", "--method", "tools/list");
      assertThat(narrow)
          .contains("\"name\": \"list_tool_guides\"")
          .doesNotContain("\"name\": \"get_tool_guide\"");

      String called =
          inspector(base + "/narrow", "--method", "tools/call", "--tool-name", "list_tool_guides");
      assertThat(called).contains("tool-calls").contains("\"isError\": false");

      String invalid =
          inspector(
              base + "/main",
              "--method",
              "tools/call",
              "--tool-name",
              "get_tool_guide",
              "--tool-arg",
              "name=no-such-guide");
      assertThat(invalid).contains("\"isError\": true").contains("no-such-guide");
    }
  }

  @Test
  void aReplacedToolReachesAnMcpClientAsOneListChangeAndIsNeverMissing() throws Exception {
    HostConfig config = HostConfig.defaults().withHttp(HostConfig.Http.defaults().withPort(0));
    try (Host host = new Host(config)) {
      ExecutableTool first = host.registry().register(probe("probe", "The first definition."), OK);
      String base = host.start().toString();
      List<List<String>> lists = new CopyOnWriteArrayList<>();
      McpSyncClient client =
          McpClient.sync(
                  HttpClientStreamableHttpTransport.builder(base)
                      .endpoint("/mcp")
                      .jsonMapper(new JacksonMcpJsonMapper(JsonMapper.shared()))
                      .build())
              .requestTimeout(Duration.ofSeconds(30))
              .toolsChangeConsumer(
                  tools ->
                      lists.add(
                          tools.stream()
                              .filter(
                                  tool ->
                                      tool.name().equals("probe") || tool.name().equals("marker"))
                              .map(tool -> tool.name() + ": " + tool.description())
                              .sorted()
                              .toList()))
              .build();
      try {
        client.initialize();
        assertThat(client.listTools().tools())
            .anyMatch(tool -> "The first definition.".equals(tool.description()));

        host.registry()
            .replace(first, ExecutableTool.of(probe("probe", "The second definition."), OK));
        // A change after it, so that the test knows when the replacement's notices are all in.
        host.registry().register(probe("marker", "Registered last."), OK);

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (lists.size() < 2
            || lists.stream().noneMatch(list -> list.contains("marker: Registered last."))) {
          assertThat(System.nanoTime()).as("waited 30 s; heard %s", lists).isLessThan(deadline);
          Thread.sleep(50);
        }
        assertThat(lists)
            .as("one notice for the replacement, one for the marker")
            .hasSize(2)
            .allSatisfy(list -> assertThat(list).contains("probe: The second definition."));
      } finally {
        client.closeGracefully();
      }
    }
  }

  private static final ToolExecutor OK = (call, arguments) -> ToolResult.success("ok");

  private static ToolSpec probe(String name, String description) {
    return new ToolSpec(
        name,
        description,
        JsonMapper.shared().createObjectNode().put("type", "object"),
        "builtin:probe");
  }

  @Test
  void sixtyFourConcurrentCallsThroughToolhostMcpOverStdioAllAnswer() {
    ToolRegistry registry = new ToolRegistry();
    List<String> command = TestProcesses.javaMain(Main.class, "mcp", "--profile", "main");
    try (McpBridge bridge = McpBridge.builder(registry).build()) {
      bridge.start(
          List.of(
              new McpServerConfig(
                  "toolhost",
                  new McpServerConfig.Stdio(
                      command.getFirst(), command.subList(1, command.size()), java.util.Map.of()),
                  java.util.Optional.empty(),
                  McpServerConfig.DEFAULT_TIMEOUT)));
      assertThat(registry.find("toolhost_get_tool_guide")).isPresent();
      List<ToolCall> calls = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        calls.add(
            ToolCall.of("toolhost_get_tool_guide", "{\"name\": \"tool-calls\"}")
                .withTimeout(Duration.ofSeconds(60)));
      }

      List<ToolResult> results =
          ToolDispatcher.create().dispatchAll(ToolSet.of(registry, ToolProfiles.MAIN), calls);

      assertThat(results)
          .hasSize(64)
          .allSatisfy(result -> assertThat(result.isError()).as(result.text()).isFalse());
      assertThat(results)
          .allSatisfy(result -> assertThat(result.text()).isEqualTo(results.getFirst().text()));
    }
    assertThat(TestProcesses.aliveDescendants("dev.toolhost.server.Main")).isZero();
  }
}
