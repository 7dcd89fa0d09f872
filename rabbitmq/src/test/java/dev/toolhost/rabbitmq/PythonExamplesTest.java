package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.bus.CallCancel;
import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.InvokeReply;
import dev.toolhost.bus.InvokeRequest;
import dev.toolhost.bus.Message;
import dev.toolhost.bus.RemotePathContractTest;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.Replies;
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
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Python examples in {@code examples/python}, written from {@code docs/wire-protocol.md} alone,
 * against Java parts on the RabbitMQ at 127.0.0.1:5672: the proof that the document is enough to
 * take part in another language, cancellation included.
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

  /** A line a process printed, with the instant it was read. */
  private record Line(String text, Instant at) {
    /** The event the line reports, when it is a JSON event line. */
    Optional<String> event() {
      try {
        JsonNode node = JsonMapper.shared().readTree(text);
        return node.isObject() && node.has("event")
            ? Optional.of(node.path("event").asString())
            : Optional.empty();
      } catch (JacksonException e) {
        return Optional.empty();
      }
    }
  }

  /** Starts a Python example whose standard output is read line by line as it comes. */
  private List<Line> startReading(String... arguments) throws IOException {
    List<String> command = new ArrayList<>(List.of(PYTHON));
    command.addAll(List.of(arguments));
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    processes.add(process);
    List<Line> lines = new CopyOnWriteArrayList<>();
    Thread.ofVirtual()
        .start(
            () -> {
              try (BufferedReader reader = process.inputReader(StandardCharsets.UTF_8)) {
                String line;
                while ((line = reader.readLine()) != null) {
                  lines.add(new Line(line, Instant.now()));
                }
              } catch (IOException e) {
                // The process ended.
              }
            });
    return lines;
  }

  private static List<Line> events(List<Line> lines, String event) {
    return lines.stream().filter(line -> line.event().equals(Optional.of(event))).toList();
  }

  /**
   * Calls the tool on a thread of its own, interrupts that thread (the caller's cancel) once the
   * process says the tool started, and checks that the caller got {@code cancelled} and the tool
   * saw the cancel within a second.
   */
  private void cancelMidCall(ToolRegistry registry, String tool, String arguments, List<Line> out)
      throws InterruptedException {
    AtomicReference<ToolResult> answer = new AtomicReference<>();
    Thread caller =
        Thread.ofVirtual()
            .start(
                () ->
                    answer.set(
                        ToolDispatcher.create()
                            .dispatch(
                                ToolSet.of(registry, ToolProfiles.MAIN),
                                ToolCall.of(tool, arguments).withTimeout(Duration.ofSeconds(90)))));
    await().atMost(Duration.ofSeconds(20)).until(() -> events(out, "started").size() == 1);
    Instant cancelled = Instant.now();
    caller.interrupt();
    assertThat(caller.join(Duration.ofSeconds(10))).isTrue();
    assertThat(((ToolResult.Failure) answer.get()).error().code()).isEqualTo(ErrorCode.CANCELLED);
    await().atMost(Duration.ofSeconds(10)).until(() -> events(out, "cancelled").size() == 1);
    assertThat(Duration.between(cancelled, events(out, "cancelled").getFirst().at()))
        .isLessThan(Duration.ofSeconds(1));
  }

  /** A host's registry that hears announcements on the test's bus. */
  private ToolRegistry hostRegistry() {
    ToolRegistry registry = new ToolRegistry();
    closing.add(new RemoteTools(bus, registry, new ToolServices(bus, registry)).start());
    return registry;
  }

  @Test
  void aPythonWorkerFromTheProtocolDocumentStopsACancelledCallWithinASecond() throws Exception {
    bus = RabbitBus.connect(RabbitBusTest.BROKER);
    ToolRegistry registry = hostRegistry();
    String group = "py-" + UUID.randomUUID().toString().substring(0, 8);
    queues.add(ToolWorker.queue(group));
    List<Line> out =
        startReading(
            EXAMPLES.resolve("worker.py").toString(),
            "--url",
            RabbitBusTest.BROKER.toString(),
            "--group",
            group,
            "--heartbeat-ms",
            "1000");
    RemotePathContractTest.waitForUpTo(
        Duration.ofSeconds(20), () -> registry.find("nap").isPresent());
    assertThat(registry.find("nap").orElseThrow().spec().source())
        .isEqualTo(RemoteToolExecutor.source(group));

    cancelMidCall(registry, "nap", "{\"seconds\":60}", out);

    assertThat(events(out, "finished")).isEmpty();
    // The worker answers its next call.
    ToolResult echoed =
        ToolDispatcher.create()
            .dispatch(
                ToolSet.of(registry, ToolProfiles.MAIN),
                ToolCall.of("echo", "{\"text\":\"still here\"}")
                    .withTimeout(Duration.ofSeconds(10)));
    assertThat(echoed).isEqualTo(ToolResult.success("echo: still here"));
  }

  @Test
  void aCancelThatArrivesBeforeItsRequestIsTakenWinsOnAPythonWorker() throws Exception {
    bus = RabbitBus.connect(RabbitBusTest.BROKER);
    String group = "py-" + UUID.randomUUID().toString().substring(0, 8);
    String queue = ToolWorker.queue(group);
    queues.add(queue);
    List<Line> out =
        startReading(
            EXAMPLES.resolve("worker.py").toString(),
            "--url",
            RabbitBusTest.BROKER.toString(),
            "--group",
            group,
            "--concurrency",
            "1");
    await().atMost(Duration.ofSeconds(20)).until(() -> events(out, "ready").size() == 1);
    ToolCall first = ToolCall.of("nap", "{\"seconds\":60}").withTimeout(Duration.ofSeconds(90));
    ToolCall second = ToolCall.of("nap", "{\"seconds\":60}").withTimeout(Duration.ofSeconds(90));
    InvokeRequest running = new InvokeRequest(first);
    InvokeRequest queued = new InvokeRequest(second);
    try (Replies runningReplies =
        bus.request(queue, Message.of(running.toJson()), first.deadline())) {
      await().atMost(Duration.ofSeconds(20)).until(() -> events(out, "started").size() == 1);
      try (Replies queuedReplies =
          bus.request(queue, Message.of(queued.toJson()), second.deadline())) {
        // The queued call's cancel, then the running one's, on one topic: the worker has heard
        // the first when the second frees its one slot.
        bus.publish(
            CallCancel.topic(group),
            new CallCancel(queued.callKey(), second.callId(), second.deadline()).message());
        bus.publish(
            CallCancel.topic(group),
            new CallCancel(running.callKey(), first.callId(), first.deadline()).message());
        ToolResult stopped =
            InvokeReply.parse(runningReplies.next(first.deadline()).orElseThrow().body()).result();
        assertThat(((ToolResult.Failure) stopped).error().code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(stopped.text()).contains("may have been done");
        ToolResult never =
            InvokeReply.parse(queuedReplies.next(second.deadline()).orElseThrow().body()).result();
        assertThat(((ToolResult.Failure) never).error().code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(never.text()).contains("before it ran");
      }
    }
    // Its result says cancelled: the same request again is answered from it, without running.
    try (Replies again = bus.request(queue, Message.of(queued.toJson()), second.deadline())) {
      ToolResult stored =
          InvokeReply.parse(again.next(second.deadline()).orElseThrow().body()).result();
      assertThat(((ToolResult.Failure) stored).error().code()).isEqualTo(ErrorCode.CANCELLED);
    }
    assertThat(events(out, "started")).hasSize(1);
    assertThat(events(out, "skipped")).hasSize(1);
  }

  @Test
  void aPythonToolServiceStopsACancelledRequestWithinASecond() throws Exception {
    bus = RabbitBus.connect(RabbitBusTest.BROKER);
    ToolRegistry registry = hostRegistry();
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String queue = "test.py-style-request." + suffix;
    String tool = "shout_" + suffix;
    queues.add(queue);
    List<Line> out =
        startReading(
            EXAMPLES.resolve("tool_service.py").toString(),
            "--url",
            RabbitBusTest.BROKER.toString(),
            "--service",
            "py-style-" + suffix,
            "--queue",
            queue,
            "--tool",
            tool);
    RemotePathContractTest.waitForUpTo(
        Duration.ofSeconds(20), () -> registry.find(tool).isPresent());

    cancelMidCall(registry, tool, "{\"text\":\"slow\",\"seconds\":60}", out);
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
