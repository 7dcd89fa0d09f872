package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.RemotePathContractTest;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.ToolServiceExecutor;
import dev.toolhost.bus.ToolServices;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Python examples in {@code examples/python}, written from {@code docs/wire-protocol.md} alone,
 * against Java parts on the RabbitMQ at 127.0.0.1:5672: the proof that the document is enough to
 * take part in another language.
 */
@Timeout(60)
class PythonExamplesTest {

  private static final String PYTHON = "/usr/bin/python3";
  private static final Path EXAMPLES = Path.of("..", "examples", "python").toAbsolutePath();

  private final List<Process> processes = new ArrayList<>();
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final List<String> queues = new ArrayList<>();
  private RabbitBus bus;

  @BeforeAll
  static void pythonHasPika() throws Exception {
    Process check =
        new ProcessBuilder(PYTHON, "-c", "import pika").redirectErrorStream(true).start();
    String output = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(check.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(check.exitValue())
        .as(
            "%s -c 'import pika' failed; install Debian's python3-pika (.ci/run does): %s",
            PYTHON, output)
        .isZero();
  }

  @AfterEach
  void stopAll() throws Exception {
    for (Process process : processes) {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    if (bus != null) {
      queues.forEach(bus::deleteQueue);
      bus.close();
    }
  }

  @Test
  void aJavaHostCallsAToolOfAPythonToolService() throws Exception {
    bus = RabbitBus.connect(RabbitBusTest.BROKER);
    ToolRegistry registry = new ToolRegistry();
    closing.add(new RemoteTools(bus, registry, new ToolServices(bus, registry)).start());
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String service = "py-style-" + suffix;
    String queue = "test.py-style-request." + suffix;
    String tool = "shout_" + suffix;
    queues.add(queue);
    Process python =
        start(
            EXAMPLES.resolve("tool_service.py").toString(),
            "--url",
            RabbitBusTest.BROKER.toString(),
            "--service",
            service,
            "--queue",
            queue,
            "--tool",
            tool);

    RemotePathContractTest.waitForUpTo(
        Duration.ofSeconds(20), () -> registry.find(tool).isPresent());
    assertThat(registry.find(tool).orElseThrow().spec().source())
        .isEqualTo(ToolServiceExecutor.source(service));
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    ToolDispatcher dispatcher = ToolDispatcher.create();
    ToolResult answer =
        dispatcher.dispatch(
            tools,
            ToolCall.of(tool, "{\"text\":\"late deliveries\"}")
                .withUser("alice")
                .withTimeout(Duration.ofSeconds(10)));
    assertThat(answer).isEqualTo(ToolResult.success("LATE DELIVERIES (for alice)"));
    ToolResult refused =
        dispatcher.dispatch(
            tools, ToolCall.of(tool, "{\"text\":\"\"}").withTimeout(Duration.ofSeconds(10)));
    assertThat(refused).isInstanceOf(ToolResult.Failure.class);
    ToolResult.Failure failure = (ToolResult.Failure) refused;
    assertThat(failure.error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    // The model reads the service's message; its error type is the operator's detail.
    assertThat(failure.error().message()).endsWith("failed: text is empty");
    assertThat(failure.error().detail()).contains("bad-request");

    python.destroy();
    assertThat(python.waitFor(10, TimeUnit.SECONDS)).isTrue();
    RemotePathContractTest.waitForUpTo(Duration.ofSeconds(10), () -> registry.find(tool).isEmpty());
  }

  @Test
  void aPythonCallerCallsAToolOfAJavaWorker() throws Exception {
    bus = RabbitBus.connect(RabbitBusTest.BROKER);
    String group = "py-" + UUID.randomUUID().toString().substring(0, 8);
    queues.add(ToolWorker.queue(group));
    ToolRegistry hosted = new ToolRegistry();
    hosted.registerAll(MethodTools.of(new RemotePathContractTest.Sample(), "builtin:sample"));
    closing.add(
        new ToolWorker(
                bus,
                group,
                hosted,
                ToolDispatcher.create(),
                new InMemoryResultStore(),
                4,
                Duration.ofSeconds(5))
            .start());

    Result echoed = run("--group", group, "--user", "bob", "echo", "{\"text\":\"from python\"}");
    assertThat(echoed.exit()).as(echoed.output()).isZero();
    JsonNode reply = JsonMapper.shared().readTree(echoed.output());
    assertThat(reply.path("content").asString()).isEqualTo("echo: from python");
    assertThat(reply.path("is_error").asBoolean()).isFalse();
    assertThat(reply.path("tool_name").asString()).isEqualTo("echo");

    Result broken = run("--group", group, "broken", "{\"text\":\"x\"}");
    assertThat(broken.exit()).as(broken.output()).isZero();
    JsonNode error = JsonMapper.shared().readTree(broken.output());
    assertThat(error.path("is_error").asBoolean()).isTrue();
    assertThat(error.path("error").path("code").asString()).isEqualTo("execution_failed");

    Result nobody = run("--group", group + "-none", "echo", "{\"text\":\"x\"}");
    assertThat(nobody.exit()).as(nobody.output()).isEqualTo(2);
  }

  private record Result(int exit, String output) {}

  private Result run(String... arguments) throws Exception {
    List<String> command = new ArrayList<>(List.of(EXAMPLES.resolve("caller.py").toString()));
    command.add("--url");
    command.add(RabbitBusTest.BROKER.toString());
    command.addAll(List.of(arguments));
    Path errors = Files.createTempFile("caller", ".err");
    try {
      Process process = start(errors, command.toArray(String[]::new));
      String output =
          new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      return new Result(
          process.exitValue(), output.isEmpty() ? Files.readString(errors).strip() : output);
    } finally {
      Files.deleteIfExists(errors);
    }
  }

  private Process start(String... arguments) throws IOException {
    return start(null, arguments);
  }

  private Process start(Path errors, String... arguments) throws IOException {
    List<String> command = new ArrayList<>(List.of(PYTHON));
    command.addAll(List.of(arguments));
    ProcessBuilder builder = new ProcessBuilder(command);
    if (errors == null) {
      builder.inheritIO();
    } else {
      builder.redirectError(errors.toFile());
    }
    Process process = builder.start();
    processes.add(process);
    return process;
  }
}
