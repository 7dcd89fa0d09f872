package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.ToolServices;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.mcp.McpBridge;
import dev.toolhost.mcp.McpServerConfig;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.rabbitmq.RabbitBus;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/**
 * The loop end to end over the scripted model server with real tools: one on the MCP reference
 * server from the npm registry (over stdio, through the bridge), one on a worker of a group on the
 * RabbitMQ at 127.0.0.1:5672 (registered on the host by its announcement). The model is scripted to
 * call the tool; the tool's real result must be what the next request carries.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RealToolsLoopTest {

  private static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");
  private static final String EVERYTHING = "mcp-server-everything";

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final ModelClient client =
      ModelClient.builder(new ModelEndpoint(server.baseUrl(), "gpt-e2e", "KEY"))
          .environment(Map.of())
          .build();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    client.close();
    server.close();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (aliveChildren(EVERYTHING) > 0 && System.nanoTime() < until) {
      Thread.sleep(100);
    }
    assertThat(aliveChildren(EVERYTHING)).as("MCP server processes left behind").isZero();
  }

  private RunResult run(String message) {
    Agent agent =
        new Agent(
            AgentDefinition.of("assistant", client.endpoint()).withInstructions("Use tools."),
            client,
            dispatcher);
    return agent.run(
        Conversation.of("session-e2e", ToolSet.of(registry, ToolProfiles.MAIN)),
        message,
        RunListener.NONE);
  }

  /** Runs a turn in which the model calls the tool once (call_1), then answers; it completes. */
  private RunResult runCalling(String question, String tool, String arguments, String answer) {
    server.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_1", tool, arguments)));
    server.enqueue(ScriptedReply.answer(answer));
    RunResult result = run(question);
    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    return result;
  }

  /** The {@code tool} message of the second request, after checking the first offered the tool. */
  private JsonNode toolMessageAfterCalling(String tool) {
    JsonNode first = server.takeRequest().json();
    assertThat(OfferedTools.names(first)).contains(tool);
    JsonNode messages = server.takeRequest().json().get("messages");
    JsonNode last = messages.get(messages.size() - 1);
    assertThat(last.get("role").asString()).isEqualTo("tool");
    assertThat(last.get("tool_call_id").asString()).isEqualTo("call_1");
    return last;
  }

  @Test
  void aToolOnAnMcpServerOverStdioAnswersTheModel() {
    McpBridge bridge = McpBridge.builder(registry).build();
    closing.add(bridge);
    bridge.start(
        List.of(
            McpServerConfig.stdio("everything", NpmPackages.bin(EVERYTHING), List.of("stdio"))));
    RunResult result =
        runCalling("What is 19 + 23?", "everything_get-sum", "{\"a\": 19, \"b\": 23}", "It is 42.");

    assertThat(result.text()).isEqualTo("It is 42.");
    assertThat(toolMessageAfterCalling("everything_get-sum").get("content").asString())
        .contains("42");
  }

  /** A tool a worker hosts: looks up an order, noting the calls it gets. */
  public static final class Orders {
    final List<ToolCall> calls = Collections.synchronizedList(new ArrayList<>());

    @Tool(name = "order_status", description = "The status of an order.", readOnly = true)
    public String orderStatus(ToolCall call, @Param(description = "The order id.") String id) {
      calls.add(call);
      return "Order " + id + " shipped on 2025-11-14.";
    }
  }

  @Test
  void aRemoteToolOnARabbitMqWorkerAnswersTheModel() throws Exception {
    String group = "agent-e2e-" + UUID.randomUUID().toString().substring(0, 8);
    RabbitBus host = RabbitBus.connect(BROKER);
    closing.add(host);
    closing.add(() -> host.deleteQueue(ToolWorker.queue(group)));
    closing.add(new RemoteTools(host, registry, new ToolServices(host, registry)).start());
    MessageBus workerBus = RabbitBus.connect(BROKER);
    closing.add(workerBus);
    Orders orders = new Orders();
    ToolRegistry workerTools = new ToolRegistry();
    workerTools.registerAll(MethodTools.of(orders, "builtin:orders"));
    closing.add(
        new ToolWorker(
                workerBus,
                group,
                workerTools,
                ToolDispatcher.create(),
                new InMemoryResultStore(),
                4,
                Duration.ofSeconds(1))
            .start());
    await("the worker's announcement")
        .atMost(Duration.ofSeconds(10))
        .until(() -> registry.find("order_status").isPresent());
    assertThat(registry.find("order_status").get().spec().source()).isEqualTo("remote:" + group);
    runCalling("Where is order A-17?", "order_status", "{\"id\": \"A-17\"}", "It shipped.");

    assertThat(toolMessageAfterCalling("order_status").get("content").asString())
        .isEqualTo("Order A-17 shipped on 2025-11-14.");
    assertThat(orders.calls)
        .singleElement()
        .satisfies(
            call -> {
              assertThat(call.callId()).isEqualTo("call_1");
              assertThat(call.sessionId()).contains("session-e2e");
            });
  }

  private static long aliveChildren(String marker) {
    return ProcessHandle.current()
        .descendants()
        .filter(ProcessHandle::isAlive)
        .filter(p -> p.info().commandLine().map(line -> line.contains(marker)).orElse(false))
        .count();
  }
}
