package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpGroupRegistrations;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.mcp.TestProcesses;
import dev.toolhost.rabbitmq.RabbitBus;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * MCP servers on remote workers, over the RabbitMQ at 127.0.0.1:5672: a host with no {@code mcp:}
 * section, and {@code toolhost worker} processes whose config bridges the MCP reference server.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class WorkerMcpTest {

  private static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");
  private static final String MARKER = "mcp-server-everything";
  private static final JsonMapper JSON = JsonMapper.shared();

  // A group of its own: suites sharing the broker never see each other's workers.
  private final String group = "wm-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<ToolhostProcess> workers = new ArrayList<>();
  @TempDir Path dir;
  private RabbitBus hostBus;
  private Host host;

  @AfterEach
  void stopAll() throws Exception {
    for (ToolhostProcess worker : workers) {
      if (worker.alive()) {
        worker.stop(Duration.ofSeconds(20));
      }
    }
    if (host != null) {
      host.close();
    }
    if (hostBus != null) {
      hostBus.close();
    }
    try (RabbitBus admin = RabbitBus.connect(BROKER)) {
      admin.deleteQueue(ToolWorker.queue(group));
    }
    // The group's registration exchange, declared by its workers, goes with the group.
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(BROKER);
    factory.setVirtualHost("/");
    try (Connection connection = factory.newConnection();
        Channel channel = connection.createChannel()) {
      channel.exchangeDelete(McpGroupRegistrations.topic(group));
    }
    waitFor(Duration.ofSeconds(10), () -> TestProcesses.aliveDescendants(MARKER) == 0);
  }

  /** A worker's config bridging the reference server, which sees the worker's name in WORKER. */
  private Path workerConfig(String worker) throws Exception {
    Path file = dir.resolve(worker + ".yaml");
    Files.writeString(
        file,
        """
        mcp:
          servers:
            everything:
              command: %s
              args: [stdio]
              env:
                WORKER: %s
              timeout: 30s
        """
            .formatted(NpmPackages.bin(MARKER), worker));
    return file;
  }

  private ToolhostProcess startWorker(String name, Path config) throws Exception {
    ToolhostProcess worker =
        ToolhostProcess.worker(dir, name, BROKER, group, "--config", config.toString());
    workers.add(worker);
    worker.awaitOut(
        Pattern.compile("^Toolhost worker .* of group '" + group + "' .* hosting \\d+ tools"),
        Duration.ofSeconds(90));
    return worker;
  }

  private ToolResult call(String tool, String arguments) {
    return host.dispatcher()
        .dispatch(
            host.toolSet("main"), ToolCall.of(tool, arguments).withTimeout(Duration.ofSeconds(15)));
  }

  private JsonNode servers() {
    ToolResult listed = call("mcp_list_services", "{}");
    assertThat(listed.isError()).as(listed.text()).isFalse();
    return JSON.readTree(listed.text()).path("servers");
  }

  private JsonNode everything() {
    for (JsonNode server : servers()) {
      if (server.path("server_name").asString("").equals("everything")) {
        return server;
      }
    }
    return JSON.createObjectNode();
  }

  @Test
  void aHostWithNoMcpSectionReachesTheMcpServerOfAWorkerGroupAndASecondWorkerTakesOver()
      throws Exception {
    hostBus = RabbitBus.connect(BROKER);
    host =
        Host.builder(HostConfig.parse("http:\n  port: 0\n", "host.yaml"))
            .environment(Map.of())
            .service(MessageBus.class, hostBus)
            .build();
    // No MCP server anywhere yet: no management tools either.
    assertThat(host.registry().find("mcp_list_services")).isEmpty();

    ToolhostProcess first = startWorker("first", workerConfig("first"));
    waitFor(
        Duration.ofSeconds(30),
        () ->
            host.registry().find("everything_echo").isPresent()
                && host.registry().find("mcp_list_services").isPresent());

    // The workers' config lets no model register servers: the host offers no registration.
    assertThat(host.registry().find("mcp_register_server")).isEmpty();
    assertThat(host.registry().find("mcp_unregister_server")).isEmpty();
    // Registered as if the server were the host's own.
    assertThat(host.registry().find("everything_echo").orElseThrow().spec().source())
        .isEqualTo("mcp:everything");
    assertThat(host.registry().find("worker_info").orElseThrow().spec().source())
        .isEqualTo("remote:" + group);
    assertThat(host.toolSet("main").names()).contains("everything_echo", "everything_get-sum");
    assertThat(call("everything_echo", "{\"message\": \"direct\"}").text()).contains("direct");
    assertThat(call("everything_get-sum", "{\"a\": 2, \"b\": 3}").text()).contains("5");

    JsonNode listed = everything();
    assertThat(listed.path("location").asString()).isEqualTo("worker_group");
    assertThat(listed.path("worker_group").asString()).isEqualTo(group);
    assertThat(listed.path("workers").asInt()).isEqualTo(1);
    assertThat(listed.path("state").asString()).isEqualTo("connected");
    List<String> tools = new ArrayList<>();
    listed.path("tools").forEach(tool -> tools.add(tool.asString()));
    assertThat(tools).contains("echo", "get-sum");

    ToolResult details =
        call(
            "mcp_get_service_details",
            "{\"server_name\": \"Everything\", \"tool_name\": \"echo\"}");
    assertThat(details.isError()).as(details.text()).isFalse();
    JsonNode detail = JSON.readTree(details.text());
    assertThat(detail.path("worker_group").asString()).isEqualTo(group);
    assertThat(detail.at("/tools/0/registered_as").asString()).isEqualTo("everything_echo");
    assertThat(detail.at("/tools/0/input_schema/properties/message").isObject()).isTrue();

    // Routed by server name, ignoring case, to a worker of the group.
    ToolResult invoked = invoke("EVERYTHING");
    assertThat(invoked.isError()).as(invoked.text()).isFalse();
    assertThat(invoked.text()).contains("over the bus");
    ToolResult unknown =
        call(
            "mcp_invoke_tool",
            "{\"server_name\": \"nothing\", \"tool_name\": \"echo\", \"arguments\": {}}");
    assertThat(code(unknown)).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(unknown.text()).contains("no MCP server named 'nothing'", "everything");

    // The worker dies (kill -9, its MCP server with it): its tools answer unavailable.
    List<ProcessHandle> children =
        ProcessHandle.of(first.pid()).orElseThrow().descendants().toList();
    ProcessHandle.of(first.pid()).orElseThrow().destroyForcibly();
    children.forEach(ProcessHandle::destroyForcibly);
    waitFor(Duration.ofSeconds(10), () -> !first.alive());
    // The broker drops the dead worker's consumer. The host trusts a count above zero for a second
    // (RabbitBus): a count taken before the drop has lapsed once a second has passed since it.
    waitFor(Duration.ofSeconds(10), () -> hostBus.consumerCount(ToolWorker.queue(group)) == 0);
    long dropped = System.nanoTime();
    waitFor(Duration.ofSeconds(10), () -> System.nanoTime() - dropped > 1_000_000_000L);
    ToolResult direct = call("everything_echo", "{\"message\": \"direct\"}");
    assertThat(code(direct)).as(direct.text()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(direct.text()).contains("no worker of group '" + group + "' is running");
    ToolResult viaManagement = invoke("everything");
    assertThat(code(viaManagement)).as(viaManagement.text()).isEqualTo(ErrorCode.UNAVAILABLE);
    // Once its heartbeats lapse, the server stays listed, unavailable, and so do its tools.
    waitFor(
        Duration.ofSeconds(30),
        () -> everything().path("state").asString("").equals("unavailable"));
    JsonNode gone = everything();
    assertThat(gone.path("worker_group").asString()).isEqualTo(group);
    assertThat(gone.path("workers").asInt()).isZero();
    assertThat(host.registry().find("everything_echo")).isEmpty();
    ToolResult refused = invoke("everything");
    assertThat(code(refused)).as(refused.text()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(refused.text()).contains("no worker of group '" + group + "'");

    // A second worker of the group takes over.
    ToolhostProcess second = startWorker("second", workerConfig("second"));
    waitFor(
        Duration.ofSeconds(30), () -> everything().path("state").asString("").equals("connected"));
    ToolResult back = invoke("everything");
    assertThat(back.isError()).as(back.text()).isFalse();
    assertThat(back.text()).contains("over the bus");
    assertThat(call("worker_info", "{}").text()).endsWith("pid " + second.pid());
    assertThat(everything().path("workers").asInt()).isEqualTo(1);

    // A third worker of the group: the server's calls are shared between the two.
    startWorker("third", workerConfig("third"));
    waitFor(Duration.ofSeconds(30), () -> everything().path("workers").asInt() == 2);
    Set<String> answered = new HashSet<>();
    for (int i = 0; i < 30 && answered.size() < 2; i++) {
      ToolResult env = call("everything_get-env", "{}");
      assertThat(env.isError()).as(env.text()).isFalse();
      // The server's environment as JSON: "WORKER": "second" (its quotes escaped or not).
      Matcher worker = Pattern.compile("WORKER\\\\?\"\\s*:\\s*\\\\?\"(\\w+)").matcher(env.text());
      assertThat(worker.find()).as(env.text()).isTrue();
      answered.add(worker.group(1));
    }
    assertThat(answered).containsExactlyInAnyOrder("second", "third");
  }

  private ToolResult invoke(String server) {
    return call(
        "mcp_invoke_tool",
        "{\"server_name\": \""
            + server
            + "\", \"tool_name\": \"echo\", \"arguments\": {\"message\": \"over the bus\"}}");
  }

  private JsonNode server(String name) {
    for (JsonNode server : servers()) {
      if (server.path("server_name").asString("").equalsIgnoreCase(name)) {
        return server;
      }
    }
    return JSON.createObjectNode();
  }

  @Test
  void aModelRegistersAServerOnEveryWorkerOfAGroupWhoseConfigAllowsItAndUnregistersIt()
      throws Exception {
    Path config = dir.resolve("registering.yaml");
    Files.writeString(config, "mcp:\n  allow_register: stdio\n");
    hostBus = RabbitBus.connect(BROKER);
    host =
        Host.builder(HostConfig.parse("http:\n  port: 0\n", "host.yaml"))
            .environment(Map.of())
            .service(MessageBus.class, hostBus)
            .build();
    startWorker("first", config);
    startWorker("second", config);
    // The group lets a model register servers: the host offers registration.
    waitFor(Duration.ofSeconds(30), () -> host.registry().find("mcp_register_server").isPresent());

    // Not on the host itself: it has no mcp: section, so no policy of its own.
    ToolResult local =
        call(
            "mcp_register_server",
            "{\"server_name\": \"late\", \"command\": \"" + NpmPackages.bin(MARKER) + "\"}");
    assertThat(code(local)).as(local.text()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(local.text()).contains("Give worker_group, one of: " + group + " (stdio)");

    ToolResult registered =
        call(
            "mcp_register_server",
            "{\"server_name\": \"late\", \"command\": \""
                + NpmPackages.bin(MARKER)
                + "\", \"arguments\": [\"stdio\"], \"worker_group\": \""
                + group
                + "\"}");
    assertThat(registered.isError()).as(registered.text()).isFalse();
    assertThat(registered.text())
        .contains("MCP server 'late' is connected", "It runs on the workers of group '" + group);
    // Every worker of the group has it connected: the one that took the call told the other.
    waitFor(Duration.ofSeconds(30), () -> server("late").path("workers").asInt() == 2);
    assertThat(server("late").path("worker_group").asString()).isEqualTo(group);
    assertThat(host.registry().find("late_echo").orElseThrow().spec().source())
        .isEqualTo("mcp:late");
    for (int i = 0; i < 4; i++) {
      ToolResult echoed =
          call(
              "mcp_invoke_tool",
              "{\"server_name\": \"Late\", \"tool_name\": \"echo\","
                  + " \"arguments\": {\"message\": \"registered\"}}");
      assertThat(echoed.isError()).as(echoed.text()).isFalse();
      assertThat(echoed.text()).contains("registered");
    }
    ToolResult again =
        call(
            "mcp_register_server",
            "{\"server_name\": \"LATE\", \"command\": \"x\", \"worker_group\": \"" + group + "\"}");
    assertThat(again.text()).contains("already registered");

    ToolResult unregistered = call("mcp_unregister_server", "{\"server_name\": \"LATE\"}");
    assertThat(unregistered.isError()).as(unregistered.text()).isFalse();
    assertThat(unregistered.text()).contains("'late' is disconnected");
    waitFor(
        Duration.ofSeconds(30),
        () -> server("late").isEmpty() && host.registry().find("late_echo").isEmpty());
  }

  private static ErrorCode code(ToolResult result) {
    return result instanceof ToolResult.Failure failure ? failure.error().code() : null;
  }

  private static void waitFor(Duration time, BooleanSupplier condition)
      throws InterruptedException {
    Instant until = Instant.now().plus(time);
    while (!condition.getAsBoolean()) {
      assertThat(Instant.now()).as("condition met within %s", time).isBefore(until);
      Thread.sleep(100);
    }
  }
}
