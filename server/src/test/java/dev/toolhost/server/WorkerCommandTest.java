package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.ToolServices;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.rabbitmq.RabbitBus;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/** The worker command and a host on the RabbitMQ at 127.0.0.1:5672, as an operator runs them. */
@Timeout(90)
class WorkerCommandTest {

  private static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");

  private final String group = "wc-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<AutoCloseable> closing = new ArrayList<>();
  private Process process;

  /** A tool that says which worker answered. */
  public static final class Named {
    private final String name;

    Named(String name) {
      this.name = name;
    }

    @Tool(description = "Says which worker answered.")
    public String which() {
      return name;
    }
  }

  @AfterEach
  void stopAll() throws Exception {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    try (RabbitBus admin = RabbitBus.connect(BROKER)) {
      admin.deleteQueue(ToolWorker.queue(group));
    }
  }

  @Test
  void aWorkerProcessHostsItsToolsForAHostAndSaysGoodbyeOnSigterm() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    process =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "worker",
                "--bus",
                BROKER.toString(),
                "--group",
                group)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String banner = out.readLine();
    assertThat(banner)
        .startsWith("Toolhost worker ")
        .contains("of group '" + group + "' on amqp://guest:***@127.0.0.1:5672/");

    RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
    ToolRegistry registry = new ToolRegistry();
    closeLater(new RemoteTools(bus, registry, new ToolServices(bus, registry)).start());
    waitFor(
        Duration.ofSeconds(20),
        () ->
            List.of("add", "echo", "worker_info").stream()
                .allMatch(name -> registry.find(name).isPresent()));
    assertThat(registry.find("add").orElseThrow().spec().source())
        .isEqualTo(RemoteToolExecutor.source(group));
    assertThat(registry.find("add").orElseThrow().spec().annotations().readOnly()).isTrue();
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    ToolDispatcher dispatcher = ToolDispatcher.create();
    assertThat(
            dispatcher.dispatch(
                tools, ToolCall.of("add", "{\"a\":2,\"b\":3}").withTimeout(Duration.ofSeconds(10))))
        .extracting(ToolResult::text)
        .isEqualTo("5.0");
    assertThat(
            dispatcher
                .dispatch(
                    tools, ToolCall.of("worker_info", "{}").withTimeout(Duration.ofSeconds(10)))
                .text())
        .endsWith("pid " + process.pid());

    process.destroy();
    assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
    waitFor(Duration.ofSeconds(10), () -> registry.find("add").isEmpty());
  }

  @Test
  void aHostOnRabbitMqSpreadsHttpCallsOverTwoWorkersOfOneGroup() throws Exception {
    RabbitBus hostBus = closeLater(RabbitBus.connect(BROKER));
    Host host =
        closeLater(
            Host.builder(HostConfig.parse("http:\n  port: 0\n", "test.yaml"))
                .environment(Map.of())
                .service(MessageBus.class, hostBus)
                .build());
    for (String name : List.of("first", "second")) {
      RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
      ToolRegistry hosted = new ToolRegistry();
      hosted.registerAll(MethodTools.of(new Named(name), "builtin:named"));
      closeLater(
          new ToolWorker(
                  bus,
                  group,
                  hosted,
                  ToolDispatcher.create(),
                  new InMemoryResultStore(),
                  8,
                  Duration.ofSeconds(5))
              .start());
    }
    URI base = host.start();
    waitFor(Duration.ofSeconds(10), () -> host.registry().find("which").isPresent());
    HttpClient client = closeLater(HttpClient.newHttpClient());

    Map<String, Integer> answered = new HashMap<>();
    for (int i = 0; i < 40; i++) {
      HttpResponse<String> response =
          client.send(
              HttpRequest.newBuilder(base.resolve("/v1/tools/which/invoke"))
                  .timeout(Duration.ofSeconds(10))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      var body = JsonMapper.shared().readTree(response.body());
      assertThat(body.get("is_error").asBoolean()).as(response.body()).isFalse();
      answered.merge(body.get("content").asString(), 1, Integer::sum);
    }

    assertThat(answered).containsOnlyKeys("first", "second");
    assertThat(host.registry().find("which").orElseThrow().spec().source())
        .isEqualTo(RemoteToolExecutor.source(group));
  }

  private <T extends AutoCloseable> T closeLater(T closeable) {
    closing.add(closeable);
    return closeable;
  }

  private static void waitFor(Duration time, BooleanSupplier condition)
      throws InterruptedException {
    Instant until = Instant.now().plus(time);
    while (!condition.getAsBoolean()) {
      assertThat(Instant.now()).as("condition met within %s", time).isBefore(until);
      Thread.sleep(20);
    }
  }
}
