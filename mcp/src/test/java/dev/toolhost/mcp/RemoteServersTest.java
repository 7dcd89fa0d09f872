package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.bus.InMemoryBus;
import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.McpServerState;
import dev.toolhost.bus.RemoteMcpServer;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolAnnotations;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The management tools over the MCP servers that workers bridge, as the bus's remote tools report
 * them (the whole path over RabbitMQ is the server module's {@code WorkerMcpTest}).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RemoteServersTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final InMemoryBus bus = new InMemoryBus();
  private final List<ToolWorker> workers = new CopyOnWriteArrayList<>();
  private final List<RemoteMcpServer> remote = new CopyOnWriteArrayList<>();
  private final McpBridge bridge =
      McpBridge.builder(registry).connectTimeout(Duration.ofSeconds(2)).build();

  @AfterEach
  void stop() {
    workers.forEach(ToolWorker::close);
    bridge.close();
    bus.close();
  }

  private void start(Map<String, String> registering) {
    registry.registerAll(
        bridge.managementTools(dispatcher, () -> List.copyOf(remote), () -> registering, bus));
  }

  /** A tool as the host registers a remote server's: source {@code mcp:{server}}. */
  private void registered(String name, String server, String answer) {
    registry.register(
        ExecutableTool.of(
            new ToolSpec(
                name,
                "Echoes.",
                JSON.createObjectNode().put("type", "object"),
                "mcp:" + server,
                ToolAnnotations.UNSPECIFIED),
            (call, arguments) -> ToolResult.success(answer + " " + arguments)));
  }

  private ToolResult call(ToolProfile profile, String tool, String arguments) {
    return dispatcher.dispatch(ToolSet.of(registry, profile), ToolCall.of(tool, arguments));
  }

  private ToolResult call(String tool, String arguments) {
    return call(ToolProfiles.MAIN, tool, arguments);
  }

  private static ErrorCode code(ToolResult result) {
    return result instanceof ToolResult.Failure failure ? failure.error().code() : null;
  }

  @Test
  void aRemoteServerIsListedWithItsGroupAndReachedByNameIgnoringCase() {
    start(Map.of());
    registered("far_echo", "far", "from far");
    remote.add(
        new RemoteMcpServer(
            "far", "tools-a", "connected", "mcp-far --stdio", "", 2, Map.of("far_echo", "echo")));

    JsonNode listed = JSON.readTree(call("mcp_list_services", "{}").text()).at("/servers/0");
    assertThat(listed.path("server_name").asString()).isEqualTo("far");
    assertThat(listed.path("location").asString()).isEqualTo("worker_group");
    assertThat(listed.path("worker_group").asString()).isEqualTo("tools-a");
    assertThat(listed.path("workers").asInt()).isEqualTo(2);
    assertThat(listed.path("tools").get(0).asString()).isEqualTo("echo");

    ToolResult invoked =
        call(
            "mcp_invoke_tool",
            "{\"server_name\": \"FAR\", \"tool_name\": \"echo\", \"arguments\": {\"m\": 1}}");
    assertThat(invoked.text()).isEqualTo("from far {\"m\":1}");
    JsonNode details =
        JSON.readTree(call("mcp_get_service_details", "{\"server_name\": \"Far\"}").text());
    assertThat(details.path("endpoint").asString()).isEqualTo("mcp-far --stdio");
    assertThat(details.at("/tools/0/registered_as").asString()).isEqualTo("far_echo");
  }

  @Test
  void aServerWhoseGroupHasNoWorkerLeftAnswersUnavailable() {
    start(Map.of());
    remote.add(
        new RemoteMcpServer(
            "far",
            "tools-a",
            RemoteMcpServer.UNAVAILABLE,
            "mcp-far --stdio",
            "no worker of group 'tools-a' is running",
            0,
            Map.of("far_echo", "echo")));

    JsonNode listed = JSON.readTree(call("mcp_list_services", "{}").text()).at("/servers/0");
    assertThat(listed.path("state").asString()).isEqualTo("unavailable");
    assertThat(listed.path("not_callable").get(0).asString()).isEqualTo("echo (unavailable)");
    ToolResult invoked =
        call(
            "mcp_invoke_tool",
            "{\"server_name\": \"far\", \"tool_name\": \"echo\", \"arguments\": {}}");
    assertThat(code(invoked)).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(invoked.text()).contains("no worker of group 'tools-a' hosts it now");
    // A profile that hides the server's source hides the server too.
    ToolResult hidden =
        call(
            ToolProfile.all("no-far").withoutSources("mcp:far"),
            "mcp_invoke_tool",
            "{\"server_name\": \"far\", \"tool_name\": \"echo\", \"arguments\": {}}");
    assertThat(hidden.text()).contains("There is no MCP server named 'far'");
  }

  /**
   * A worker of the group, started on the bus: it hosts a management tool of that name, which
   * answers at once.
   */
  private void worker(String group, String tool, String answer) {
    ToolRegistry hosted = new ToolRegistry();
    hosted.register(
        ExecutableTool.of(
            new ToolSpec(
                tool,
                "Answers at once.",
                JSON.createObjectNode().put("type", "object"),
                McpServerState.MANAGEMENT_SOURCE,
                ToolAnnotations.UNSPECIFIED),
            (call, arguments) -> ToolResult.success(answer)));
    workers.add(
        new ToolWorker(
                bus,
                group,
                hosted,
                ToolDispatcher.create(),
                new InMemoryResultStore(),
                4,
                Duration.ofSeconds(5))
            .start());
  }

  /**
   * Server {@code far} on group {@code tools-a}, whose live workers let a model register servers
   * (while the map says so) and whose queue nobody consumes; after the given delay, the action.
   */
  private void farWhileNobodyConsumes(
      Map<String, String> registering, long afterMillis, Runnable then) {
    start(registering);
    remote.add(
        new RemoteMcpServer(
            "far", "tools-a", "connected", "mcp-far --stdio", "", 1, Map.of("far_echo", "echo")));
    bus.declareQueue(ToolWorker.queue("tools-a"));
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                Thread.sleep(afterMillis);
                then.run();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
  }

  @Test
  void aManagementCallWaitsForALiveGroupsWorkerThatIsReconnecting() {
    // The group's worker announced itself and lives, but consumes nothing now: it is reconnecting.
    farWhileNobodyConsumes(
        Map.of("tools-a", "http"),
        1_000,
        () -> worker("tools-a", "mcp_unregister_server", "Unregistered 'far'."));

    ToolResult result = call("mcp_unregister_server", "{\"server_name\": \"far\"}");

    assertThat(result.text()).isEqualTo("Unregistered 'far'.");
  }

  @Test
  void aManagementCallToAGroupWhoseWorkersLapsedAnswersThatNoneRuns() {
    Map<String, String> registering = new ConcurrentHashMap<>(Map.of("tools-a", "http"));
    // The group's last worker misses its heartbeats while the call waits for it.
    farWhileNobodyConsumes(registering, 500, registering::clear);
    long start = System.nanoTime();

    ToolResult result = call("mcp_unregister_server", "{\"server_name\": \"far\"}");

    assertThat(code(result)).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(result.text()).contains("no worker of group 'tools-a' is running");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("answered once the workers lapsed, not after the whole wait for a reconnecting one")
        .isLessThan(RemoteToolExecutor.RECONNECT_WAIT);
  }

  @Test
  void aLocalServerHidesARemoteOneOfTheSameName() {
    start(Map.of());
    McpServerConfig local = McpServerConfig.stdio("far", "/nonexistent/mcp-server", List.of());
    bridge.add(local);
    remote.add(
        new RemoteMcpServer(
            "FAR", "tools-a", "connected", "mcp-far --stdio", "", 1, Map.of("far_echo", "echo")));

    JsonNode servers = JSON.readTree(call("mcp_list_services", "{}").text()).path("servers");
    assertThat(servers).hasSize(1);
    assertThat(servers.get(0).path("location").asString()).isEqualTo("local");
  }

  @Test
  void registeringOnAGroupFollowsWhatTheGroupAllows() {
    start(Map.of("tools-b", "http"));
    registered("far_echo", "far", "from far");
    remote.add(
        new RemoteMcpServer(
            "far", "tools-a", "connected", "mcp-far --stdio", "", 1, Map.of("far_echo", "echo")));

    ToolResult notThere =
        call(
            "mcp_register_server",
            "{\"server_name\": \"late\", \"command\": \"x\", \"worker_group\": \"tools-a\"}");
    assertThat(code(notThere)).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(notThere.text())
        .isEqualTo(
            "No running worker of group 'tools-a' lets a model register MCP servers; groups that"
                + " do: tools-b (http).");
    ToolResult local =
        call("mcp_register_server", "{\"server_name\": \"late\", \"command\": \"x\"}");
    assertThat(local.text()).contains("Give worker_group, one of: tools-b (http).");
    ToolResult taken =
        call(
            "mcp_register_server",
            "{\"server_name\": \"FAR\", \"command\": \"x\", \"worker_group\": \"tools-b\"}");
    assertThat(taken.text()).contains("An MCP server named 'FAR' is already registered");
    // Its group's workers do not let a model unregister it.
    ToolResult unregister = call("mcp_unregister_server", "{\"server_name\": \"far\"}");
    assertThat(unregister.text())
        .isEqualTo(
            "MCP server 'far' runs on worker group 'tools-a', whose workers do not let a model"
                + " unregister servers.");
  }
}
