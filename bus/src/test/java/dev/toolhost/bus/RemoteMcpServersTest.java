package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/** Workers that bridge MCP servers, and a host that hears of them, on the in-memory bus. */
@Timeout(30)
class RemoteMcpServersTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final InMemoryBus bus = new InMemoryBus();
  private final ToolRegistry hostRegistry = new ToolRegistry();
  private final RemoteTools remote =
      new RemoteTools(bus, hostRegistry, new ToolServices(bus, hostRegistry));
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    remote.close();
    bus.close();
  }

  /** A worker hosting {@code srv_echo}, a tool of MCP server {@code srv}, and a plain tool. */
  private ToolWorker worker(String group, String state) {
    ToolRegistry hosted = new ToolRegistry();
    hosted.register(
        ExecutableTool.of(
            new ToolSpec(
                "srv_echo",
                "Echoes.",
                JSON.createObjectNode().put("type", "object"),
                "mcp:srv",
                ToolAnnotations.UNSPECIFIED),
            (call, arguments) -> ToolResult.success("echo " + arguments)));
    hosted.register(
        ExecutableTool.of(
            new ToolSpec(
                "plain",
                "A tool of no MCP server.",
                JSON.createObjectNode().put("type", "object"),
                "builtin:worker",
                ToolAnnotations.UNSPECIFIED),
            (call, arguments) -> ToolResult.success("plain")));
    ToolWorker worker =
        new ToolWorker(
                bus,
                group,
                hosted,
                ToolDispatcher.create(),
                new InMemoryResultStore(),
                4,
                // Short, so that a test sees several; long enough that a busy machine's pause
                // does not lapse the worker.
                Duration.ofMillis(250))
            .mcpServers(
                () ->
                    List.of(
                        new McpServerState(
                            "srv", state, "mcp-server --stdio", "", Map.of("srv_echo", "echo"))))
            .start();
    closing.add(worker);
    return worker;
  }

  private ToolResult call(String tool) {
    return ToolDispatcher.create()
        .dispatch(
            ToolSet.of(hostRegistry, ToolProfiles.MAIN),
            ToolCall.of(tool, "{\"x\": 1}").withTimeout(Duration.ofSeconds(5)));
  }

  private static ErrorCode code(ToolResult result) {
    return result instanceof ToolResult.Failure failure ? failure.error().code() : null;
  }

  @Test
  void aToolOfAnMcpServerIsRegisteredWithTheServersSourceAndListedWithItsGroup() {
    AtomicInteger heard = new AtomicInteger();
    remote.onMcpServers(heard::incrementAndGet);
    remote.start();
    worker("mcp-a", "connected");

    await().until(() -> hostRegistry.find("srv_echo").isPresent());
    assertThat(hostRegistry.find("srv_echo").orElseThrow().spec().source()).isEqualTo("mcp:srv");
    assertThat(hostRegistry.find("plain").orElseThrow().spec().source()).isEqualTo("remote:mcp-a");
    assertThat(remote.mcpServers())
        .containsExactly(
            new RemoteMcpServer(
                "srv",
                "mcp-a",
                "connected",
                "mcp-server --stdio",
                "",
                1,
                Map.of("srv_echo", "echo")));
    assertThat(call("srv_echo").text()).isEqualTo("echo {\"x\":1}");
    // Heard once, when the server appeared: not on any of the heartbeats of the next second.
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(3))
        .until(() -> heard.get() == 1);
  }

  @Test
  void workersOfAGroupAreOneServerThatOutlivesThemAsUnavailable() {
    remote.start();
    ToolWorker connecting = worker("mcp-b", "connecting");
    await().until(() -> remote.mcpServers().size() == 1);
    assertThat(remote.mcpServers().get(0).state()).isEqualTo("connecting");
    assertThat(remote.mcpServers().get(0).workers()).isZero();
    ToolWorker first = worker("mcp-b", "connected");
    ToolWorker second = worker("mcp-b", "connected");
    // The best state of the group's workers, and how many have it connected.
    await().until(() -> remote.mcpServers().get(0).workers() == 2);
    assertThat(remote.mcpServers()).hasSize(1);
    assertThat(remote.mcpServers().get(0).state()).isEqualTo("connected");

    connecting.close();
    first.close();
    second.close();

    await().until(() -> hostRegistry.find("srv_echo").isEmpty());
    RemoteMcpServer gone = remote.mcpServers().get(0);
    assertThat(gone.state()).isEqualTo(RemoteMcpServer.UNAVAILABLE);
    assertThat(gone.workers()).isZero();
    assertThat(gone.group()).isEqualTo("mcp-b");
    assertThat(gone.tools()).containsExactly(Map.entry("srv_echo", "echo"));
    assertThat(gone.lastError()).isEqualTo("no worker of group 'mcp-b' is running");

    worker("mcp-b", "connected");
    await().until(() -> remote.mcpServers().get(0).state().equals("connected"));
    assertThat(remote.mcpServers()).hasSize(1);
  }

  @Test
  void aRequestNamingAnotherServerThanTheToolsIsAnsweredToolNotFound() {
    worker("mcp-c", "connected");
    ToolRegistry caller = new ToolRegistry();
    for (String tool : List.of("srv_echo", "plain", "srv_later")) {
      caller.register(
          ExecutableTool.of(
              new ToolSpec(
                  tool,
                  "",
                  JSON.createObjectNode().put("type", "object"),
                  "mcp:srv",
                  ToolAnnotations.UNSPECIFIED),
              new RemoteToolExecutor(bus, "mcp-c", Optional.of("SRV"))));
    }
    ToolSet tools = ToolSet.of(caller, ToolProfiles.MAIN);
    ToolDispatcher dispatcher = ToolDispatcher.create();

    // The server's name matches ignoring case.
    assertThat(
            dispatcher
                .dispatch(tools, ToolCall.of("srv_echo", "{}").withTimeout(Duration.ofSeconds(5)))
                .text())
        .isEqualTo("echo {}");
    ToolResult plain =
        dispatcher.dispatch(tools, ToolCall.of("plain", "{}").withTimeout(Duration.ofSeconds(5)));
    assertThat(code(plain)).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    assertThat(plain.text())
        .isEqualTo("Tool 'plain' of this worker is not a tool of MCP server 'SRV'.");
    // One the worker does not host (yet): its server is not connected there, and a retry may
    // reach a worker that has it.
    ToolResult later =
        dispatcher.dispatch(
            tools, ToolCall.of("srv_later", "{}").withTimeout(Duration.ofSeconds(5)));
    assertThat(code(later)).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(later.text()).contains("is not connected on the worker that took the call");
  }

  @Test
  void aToolNamingAServerTheWorkerDoesNotAnnounceIsIgnored() {
    remote.start();
    bus.publish(
        ToolWorker.ANNOUNCE_TOPIC,
        Message.of(
            """
            {"type": "announce", "worker_id": "w1", "group": "mcp-d", "heartbeat_ms": 5000,
             "mcp_servers": [{"name": "srv", "state": "connected", "endpoint": "x"}],
             "tools": [{"name": "ghost_tool", "mcp_server": "ghost", "mcp_tool": "tool"},
                       {"name": "srv_tool", "mcp_server": "SRV", "mcp_tool": "tool"},
                       {"name": "plain_tool"}]}
            """));

    await().until(() -> hostRegistry.find("plain_tool").isPresent());
    assertThat(hostRegistry.find("ghost_tool")).isEmpty();
    assertThat(hostRegistry.find("srv_tool").orElseThrow().spec().source()).isEqualTo("mcp:srv");
    assertThat(remote.mcpServers().get(0).tools()).containsExactly(Map.entry("srv_tool", "tool"));
  }
}
