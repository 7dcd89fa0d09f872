package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bridge against the MCP reference server from the npm registry, over stdio and HTTP. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EverythingServerTest {

  private static final String MARKER = "mcp-server-everything";

  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final List<McpBridge.Progress> progress = new CopyOnWriteArrayList<>();
  private final McpBridge bridge =
      McpBridge.builder(registry).progressListener(progress::add).build();
  private Process httpServer;

  @AfterEach
  void stop() throws InterruptedException {
    bridge.close();
    if (httpServer != null) {
      httpServer.destroy();
      httpServer.waitFor(10, TimeUnit.SECONDS);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (TestProcesses.aliveDescendants(MARKER) > 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(TestProcesses.aliveDescendants(MARKER)).isZero();
  }

  private static McpServerConfig stdio() {
    return McpServerConfig.stdio("everything", NpmPackages.bin(MARKER), List.of("stdio"));
  }

  private ToolResult call(String tool, String arguments) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of(tool, arguments));
  }

  @Test
  void stdioServerToolsEnterTheRegistryWithPrefixSourceSchemaAndAnnotations() {
    bridge.start(List.of(stdio()));

    Optional<ToolSpec> echo = registry.find("everything_echo").map(tool -> tool.spec());
    assertThat(echo).isPresent();
    assertThat(echo.get().source()).isEqualTo("mcp:everything");
    assertThat(echo.get().parameters().path("required").toString()).contains("message");
    assertThat(echo.get().annotations().readOnly()).isTrue();
    assertThat(registry.specs().stream().filter(spec -> spec.source().equals("mcp:everything")))
        .hasSizeGreaterThan(5);
  }

  @Test
  void callsAnswerWithTheServersContent() {
    bridge.start(List.of(stdio()));

    assertThat(call("everything_echo", "{\"message\": \"hello\"}").text()).contains("hello");
    assertThat(call("everything_get-sum", "{\"a\": 2, \"b\": 3}").text()).contains("5");
  }

  @Test
  void argumentsThatBreakTheDeclaredSchemaAreRefusedBeforeTheCallLeavesTheHost() {
    bridge.start(List.of(stdio()));

    ToolResult result = call("everything_get-sum", "{\"a\": \"two\"}");

    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).contains("$.a").contains("b");
  }

  @Test
  void aLongRunningCallReportsProgress() {
    bridge.start(List.of(stdio()));

    ToolResult result =
        call("everything_trigger-long-running-operation", "{\"duration\": 2, \"steps\": 4}");

    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(progress).hasSizeGreaterThanOrEqualTo(2);
    assertThat(progress.getFirst().server()).isEqualTo("everything");
  }

  @Test
  void aServerKilledMidCallIsReconnectedAndTheCallRetriedOnce() throws Exception {
    bridge.start(List.of(stdio()));
    ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    try {
      Future<ToolResult> running =
          threads.submit(
              () ->
                  call(
                      "everything_trigger-long-running-operation",
                      "{\"duration\": 3, \"steps\": 3}"));
      // The server's first progress notice: the operation runs there now, with steps to go.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (progress.isEmpty()) {
        assertThat(System.nanoTime()).as("a progress notice within 20 s").isLessThan(until);
        Thread.sleep(20);
      }
      assertThat(TestProcesses.killDescendants(MARKER)).isPositive();

      ToolResult result = running.get(60, TimeUnit.SECONDS);

      // The documented behaviour: a call lost with the connection is retried once, after
      // reconnecting, within its own time; the retried operation runs to the end on the new
      // server process.
      assertThat(result.isError()).as(result.text()).isFalse();
      assertThat(result.text()).contains("Long running operation completed");
      assertThat(TestProcesses.aliveDescendants(MARKER)).isPositive();
      assertThat(call("everything_echo", "{\"message\": \"back\"}").text()).contains("back");
      assertThat(bridge.server("EVERYTHING").orElseThrow().state()).isEqualTo("connected");
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aDeadServerAnswersUnavailableWhileTheHostReconnects() throws Exception {
    bridge.start(
        List.of(McpServerConfig.stdio("ghost", "/nonexistent/mcp-server", List.of()), stdio()));

    assertThat(bridge.server("ghost").orElseThrow().state()).isEqualTo("broken");
    assertThat(call("everything_echo", "{\"message\": \"still here\"}").text())
        .contains("still here");
  }

  @Test
  void sixtyFourConcurrentCallsOverOneStdioConnectionAllAnswerCorrectly() throws Exception {
    bridge.start(List.of(stdio()));
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    List<ToolCall> calls = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      calls.add(
          ToolCall.of("everything_echo", "{\"message\": \"call " + i + "\"}")
              .withTimeout(Duration.ofSeconds(30)));
    }

    List<ToolResult> results = dispatcher.dispatchAll(tools, calls);

    for (int i = 0; i < 64; i++) {
      assertThat(results.get(i).isError()).as(results.get(i).text()).isFalse();
      assertThat(results.get(i).text()).endsWith("call " + i);
    }
  }

  /** Starts the reference server over that HTTP transport on a free port, and returns the port. */
  private int startHttpServer(String transport) throws Exception {
    int port = TestProcesses.freePort();
    ProcessBuilder builder =
        new ProcessBuilder(NpmPackages.bin(MARKER), transport)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD);
    builder.environment().put("PORT", String.valueOf(port));
    httpServer = builder.start();
    TestProcesses.awaitPort(port, Duration.ofSeconds(30));
    return port;
  }

  @Test
  void streamableHttpServerToolsAreCalledLikeStdioOnes() throws Exception {
    int port = startHttpServer("streamableHttp");

    bridge.start(
        List.of(McpServerConfig.http("remote", URI.create("http://127.0.0.1:" + port + "/mcp"))));

    assertThat(registry.find("remote_echo")).isPresent();
    assertThat(call("remote_echo", "{\"message\": \"over http\"}").text()).contains("over http");
    assertThat(call("remote_get-sum", "{\"a\": 1, \"b\": 41}").text()).contains("42");
  }

  @Test
  void legacySseServerToolsAreCalledLikeStdioOnes() throws Exception {
    int port = startHttpServer("sse");

    bridge.start(
        List.of(
            new McpServerConfig(
                "legacy",
                new McpServerConfig.Sse(URI.create("http://127.0.0.1:" + port + "/sse"), Map.of()),
                Optional.empty(),
                McpServerConfig.DEFAULT_TIMEOUT)));

    assertThat(bridge.server("legacy").orElseThrow().state()).isEqualTo("connected");
    assertThat(registry.find("legacy_echo").orElseThrow().spec().source()).isEqualTo("mcp:legacy");
    assertThat(call("legacy_echo", "{\"message\": \"over sse\"}").text()).contains("over sse");
    assertThat(call("legacy_get-sum", "{\"a\": 1, \"b\": 41}").text()).contains("42");
  }

  @Test
  void managementToolsListInspectAndInvokeIgnoringCase() {
    bridge.start(List.of(stdio()));
    registry.registerAll(bridge.managementTools(dispatcher));

    assertThat(call("mcp_list_services", "{}").text()).contains("\"server_name\" : \"everything\"");
    assertThat(
            call(
                    "mcp_get_service_details",
                    "{\"server_name\": \"Everything\", \"tool_name\": \"echo\"}")
                .text())
        .contains("everything_echo")
        .contains("input_schema");
    assertThat(
            call(
                    "mcp_invoke_tool",
                    "{\"server_name\": \"EVERYTHING\", \"tool_name\": \"echo\","
                        + " \"arguments\": {\"message\": \"via management\"}}")
                .text())
        .contains("via management");
    ToolResult unknown =
        call(
            "mcp_invoke_tool",
            "{\"server_name\": \"nowhere\", \"tool_name\": \"echo\", \"arguments\": {}}");
    assertThat(unknown.isError()).isTrue();
    assertThat(unknown.text()).contains("nowhere").contains("Connected servers: everything");
    assertThat(registry.find("mcp_list_services").orElseThrow().spec().source())
        .isEqualTo("mcp:management");
  }

  @Test
  void serversAreRegisteredAndUnregisteredAtRunTime() {
    // Registering a stdio server runs a program: only with the operator's opt-in.
    try (McpBridge bridge =
        McpBridge.builder(registry)
            .registration(new RegistrationPolicy(RegistrationPolicy.Allowed.STDIO, false))
            .build()) {
      registry.registerAll(bridge.managementTools(dispatcher));

      String registered =
          call(
                  "mcp_register_server",
                  "{\"server_name\": \"late\", \"command\": \""
                      + NpmPackages.bin(MARKER)
                      + "\", \"arguments\": [\"stdio\"]}")
              .text();
      assertThat(registered).contains("connected").contains("late_echo");
      assertThat(registry.find("late_echo")).isPresent();

      assertThat(call("mcp_unregister_server", "{\"server_name\": \"LATE\"}").text())
          .contains("disconnected");
      assertThat(registry.find("late_echo")).isEmpty();
      assertThat(
              ToolProfiles.withAllowed(McpExtension.GRANTS).stream()
                  .filter(profile -> profile.name().equals("subagent"))
                  .findFirst()
                  .orElseThrow()
                  .allows(registry.find("mcp_register_server").orElseThrow().spec()))
          .isFalse();
      assertThat(Map.of()).isEmpty();
    }
  }

  private ToolResult callAs(ToolProfile profile, String tool, String arguments) {
    return dispatcher.dispatch(ToolSet.of(registry, profile), ToolCall.of(tool, arguments));
  }

  @Test
  void aProfileThatHidesAServerHidesItFromEveryManagementTool() {
    bridge.start(List.of(stdio()));
    registry.registerAll(bridge.managementTools(dispatcher));
    ToolProfile hidden = ToolProfile.all("no-everything").withoutSources("mcp:everything");

    assertThat(callAs(hidden, "mcp_list_services", "{}").text()).doesNotContain("everything");
    ToolResult details =
        callAs(hidden, "mcp_get_service_details", "{\"server_name\": \"everything\"}");
    ToolResult invoked =
        callAs(
            hidden,
            "mcp_invoke_tool",
            "{\"server_name\": \"everything\", \"tool_name\": \"echo\","
                + " \"arguments\": {\"message\": \"through the side door\"}}");
    ToolResult nowhere =
        callAs(
            hidden,
            "mcp_invoke_tool",
            "{\"server_name\": \"nowhere\", \"tool_name\": \"echo\","
                + " \"arguments\": {\"message\": \"x\"}}");

    // Exactly as a server that does not exist.
    assertThat(invoked.isError()).isTrue();
    assertThat(invoked.text()).doesNotContain("through the side door");
    assertThat(invoked.text()).isEqualTo(nowhere.text().replace("nowhere", "everything"));
    assertThat(details.text()).isEqualTo(invoked.text());
    assertThat(((ToolResult.Failure) invoked).error().code())
        .isEqualTo(((ToolResult.Failure) nowhere).error().code());
  }

  @Test
  void aProfileThatHidesOneToolHidesItFromListingDetailsAndInvocation() {
    bridge.start(List.of(stdio()));
    registry.registerAll(bridge.managementTools(dispatcher));
    ToolProfile noEcho = ToolProfile.all("no-echo").withoutNames("everything_echo");

    assertThat(callAs(noEcho, "mcp_list_services", "{}").text())
        .contains("\"get-sum\"")
        .doesNotContain("\"echo\"");
    assertThat(
            callAs(noEcho, "mcp_get_service_details", "{\"server_name\": \"everything\"}").text())
        .contains("everything_get-sum")
        .doesNotContain("everything_echo");
    ToolResult invoked =
        callAs(
            noEcho,
            "mcp_invoke_tool",
            "{\"server_name\": \"everything\", \"tool_name\": \"echo\","
                + " \"arguments\": {\"message\": \"hidden\"}}");
    ToolResult missing =
        callAs(
            noEcho,
            "mcp_invoke_tool",
            "{\"server_name\": \"everything\", \"tool_name\": \"no-such-tool\","
                + " \"arguments\": {}}");
    assertThat(invoked.isError()).isTrue();
    assertThat(invoked.text()).isEqualTo(missing.text().replace("no-such-tool", "echo"));
    // What the profile shows is still called, through the dispatcher's validation.
    ToolResult sum =
        callAs(
            noEcho,
            "mcp_invoke_tool",
            "{\"server_name\": \"everything\", \"tool_name\": \"get-sum\","
                + " \"arguments\": {\"a\": 2, \"b\": 3}}");
    assertThat(sum.text()).contains("5");
    ToolResult invalid =
        callAs(
            noEcho,
            "mcp_invoke_tool",
            "{\"server_name\": \"everything\", \"tool_name\": \"get-sum\","
                + " \"arguments\": {\"a\": \"two\"}}");
    assertThat(((ToolResult.Failure) invalid).error().code())
        .isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(invalid.text()).contains("everything_get-sum").contains("$.a");
  }

  @Test
  void aStdioServerSeesOnlyTheBaseVariablesAndThoseItsConfigNames() {
    Map<String, String> host = new java.util.HashMap<>(System.getenv());
    host.put("TOOLHOST_TOKEN", "host-bearer-token-1234");
    host.put("OPENAI_API_KEY", "sk-model-key-abcdefghijklmnop");
    host.put("PASSED_ON", "passed-value");
    host.put("LC_TIME", "C");
    McpBridge scoped = McpBridge.builder(registry).environment(host).build();
    try {
      scoped.start(
          List.of(
              new McpServerConfig(
                  "everything",
                  new McpServerConfig.Stdio(
                      NpmPackages.bin(MARKER),
                      List.of("stdio"),
                      Map.of("SET_BY_CONFIG", "configured"),
                      List.of("PASSED_ON")),
                  Optional.empty(),
                  McpServerConfig.DEFAULT_TIMEOUT)));

      String env = call("everything_get-env", "{}").text();

      assertThat(env)
          .contains("\"PATH\"", "\"HOME\"", "\"LC_TIME\"")
          .contains("passed-value", "configured")
          .doesNotContain("host-bearer-token-1234", "sk-model-key", "TOOLHOST_TOKEN");
    } finally {
      scoped.close();
    }
  }

  @Test
  void aStdioServerDoesNotInheritTheHostsEnvironment() {
    // The test JVM's environment has TOOLHOST_TEST_SECRET (mcp/pom.xml).
    assertThat(System.getenv("TOOLHOST_TEST_SECRET")).isNotBlank();
    bridge.start(List.of(stdio()));

    String env = call("everything_get-env", "{}").text();

    assertThat(env).contains("\"PATH\"").doesNotContain("TOOLHOST_TEST_SECRET");
    assertThat(env).doesNotContain(System.getenv("TOOLHOST_TEST_SECRET"));
  }
}
