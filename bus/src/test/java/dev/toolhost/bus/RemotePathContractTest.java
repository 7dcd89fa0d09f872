package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.RegistryChanges;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolAnnotations;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The remote path (remote executor, bus, invoke handler, self-announcement, tool services), written
 * once and run on every bus. The host and the workers each get a bus of their own where the bus can
 * connect twice.
 */
@Timeout(60)
public abstract class RemotePathContractTest {

  /** A bus for a host. */
  protected abstract MessageBus hostBus();

  /** A bus for a worker, reaching the same queues as the host's. */
  protected abstract MessageBus workerBus();

  /** A lease short enough for a call to outlive it, renewed often enough to survive a pause. */
  private static final Duration LEASE = Duration.ofSeconds(1);

  protected MessageBus host;
  protected final ToolRegistry registry = new ToolRegistry();
  protected final ToolDispatcher dispatcher = ToolDispatcher.create();
  protected RemoteTools remote;
  protected String group;
  private final List<AutoCloseable> closing = new ArrayList<>();

  /** Tools a test worker hosts; counts how often each ran. */
  public static final class Sample {
    public final AtomicInteger runs = new AtomicInteger();
    public final AtomicInteger slowRunsEnded = new AtomicInteger();

    @Tool(
        description = "Echoes the text.",
        readOnly = true,
        destructive = false,
        idempotent = true,
        openWorld = false)
    public String echo(@Param(description = "What to echo.") String text) {
      runs.incrementAndGet();
      return "echo: " + text;
    }

    @Tool(description = "Sleeps, then answers.", timeoutSeconds = 300)
    public String slow(@Param(description = "How long, in ms.") int millis)
        throws InterruptedException {
      runs.incrementAndGet();
      try {
        Thread.sleep(millis);
      } finally {
        slowRunsEnded.incrementAndGet();
      }
      return "slept " + millis;
    }

    @Tool(description = "Refuses its arguments.")
    public String picky(String text) {
      throw ToolException.invalidArguments("text must be shouting");
    }

    @Tool(description = "Always breaks.")
    public String broken(String text) {
      throw new IllegalStateException("disk on fire");
    }
  }

  /** A tool that sleeps for a minute and records whether, and when, it was interrupted. */
  public static final class Napper {
    public final AtomicInteger started = new AtomicInteger();
    public final AtomicInteger finished = new AtomicInteger();
    public final AtomicReference<Instant> interrupted = new AtomicReference<>();

    @Tool(description = "Sleeps for a minute unless stopped.", timeoutSeconds = 300)
    public String nap(@Param(description = "A label.") String label) throws InterruptedException {
      started.incrementAndGet();
      try {
        Thread.sleep(Duration.ofSeconds(60));
      } catch (InterruptedException e) {
        interrupted.compareAndSet(null, Instant.now());
        throw e;
      }
      finished.incrementAndGet();
      return "rested " + label;
    }

    /** Runs as {@link #nap}, on a tool service's request thread. */
    public Object napOnService() throws InterruptedException {
      return nap("service");
    }
  }

  /** Tools that tell which thread they ran on. */
  public static final class Threads {
    public final List<String> names = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Tool(description = "Answers at once.", inline = true)
    public String quick(String text) {
      names.add(Thread.currentThread().getName());
      return "quick: " + text;
    }

    @Tool(description = "Answers when it is ready.")
    public String careful(String text) {
      names.add(Thread.currentThread().getName());
      return "careful: " + text;
    }
  }

  @BeforeEach
  void startHost() {
    host = hostBus();
    group = "test-" + UUID.randomUUID().toString().substring(0, 8);
    remote = new RemoteTools(host, registry, new ToolServices(host, registry)).start();
  }

  @AfterEach
  void stopAll() throws Exception {
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    remote.close();
    host.deleteQueue(ToolWorker.queue(group));
    host.close();
  }

  protected <T extends AutoCloseable> T closeLater(T closeable) {
    closing.add(closeable);
    return closeable;
  }

  /**
   * A result store of the kind this suite's workers share, closed after the test: in-process by
   * default; a subclass for a shared store (Redis) runs every case with it.
   */
  protected ResultStore resultStore() {
    return new InMemoryResultStore();
  }

  private ResultStore store() {
    return closeLater(resultStore());
  }

  protected ToolWorker worker(Object sample, ResultStore store) {
    return worker(sample, store, ToolDispatcher.create());
  }

  protected ToolWorker worker(Object sample, ResultStore store, ToolDispatcher workerDispatcher) {
    return worker(sample, store, workerDispatcher, ResultStore.DEFAULT_LEASE);
  }

  protected ToolWorker worker(
      Object sample, ResultStore store, ToolDispatcher workerDispatcher, Duration lease) {
    return worker(sample, store, workerDispatcher, lease, 16);
  }

  protected ToolWorker worker(
      Object sample,
      ResultStore store,
      ToolDispatcher workerDispatcher,
      Duration lease,
      int concurrency) {
    MessageBus bus = workerBus();
    if (bus != host) {
      closing.add(bus);
    }
    ToolRegistry tools = new ToolRegistry();
    tools.registerAll(MethodTools.of(sample, "builtin:sample"));
    return closeLater(
        new ToolWorker(
                bus,
                group,
                tools,
                workerDispatcher,
                store,
                concurrency,
                // Long enough that a busy machine's pause does not lapse a live worker.
                Duration.ofSeconds(1),
                lease)
            .start());
  }

  protected ToolResult call(String tool, String arguments, Duration timeout) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of(tool, arguments).withTimeout(timeout));
  }

  /** Waits until every tool of {@link Sample} is registered (they register one by one). */
  protected void waitForSample() {
    waitFor(
        () ->
            List.of("echo", "slow", "picky", "broken").stream()
                .allMatch(name -> registry.find(name).isPresent()));
  }

  /** Waits until the condition holds, failing the test when it does not within the time. */
  public static void waitForUpTo(Duration time, java.util.function.BooleanSupplier condition) {
    Instant until = Instant.now().plus(time);
    while (!condition.getAsBoolean()) {
      if (Instant.now().isAfter(until)) {
        throw new AssertionError("condition not met within " + time);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted");
      }
    }
  }

  protected static void waitFor(java.util.function.BooleanSupplier condition) {
    MessageBusContractTest.waitFor(condition);
  }

  @Test
  void anAnnouncedToolIsRegisteredAsRemoteAndRunsOnTheWorker() {
    Sample sample = new Sample();
    worker(sample, new InMemoryResultStore());
    waitForSample();
    assertThat(registry.find("echo").orElseThrow().spec().source()).isEqualTo("remote:" + group);
    ToolResult result = call("echo", "{\"text\":\"hi\"}", Duration.ofSeconds(10));
    assertThat(result).isEqualTo(ToolResult.success("echo: hi"));
    assertThat(sample.runs).hasValue(1);
  }

  @Test
  void aRemoteCallJoinsTheCallersTraceOnTheWorker() {
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    try (OpenTelemetrySdk sdk =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(spans))
                    .build())
            .build()) {
      worker(
          new Sample(),
          new InMemoryResultStore(),
          ToolDispatcher.builder().openTelemetry(sdk).build());
      waitForSample();

      ToolResult result =
          ToolDispatcher.builder()
              .openTelemetry(sdk)
              .build()
              .dispatch(
                  ToolSet.of(registry, ToolProfiles.MAIN),
                  ToolCall.of("echo", "{\"text\":\"traced\"}").withTimeout(Duration.ofSeconds(10)));

      assertThat(result.text()).isEqualTo("echo: traced");
      List<SpanData> echoes =
          spans.getFinishedSpanItems().stream()
              .filter(span -> span.getName().equals("execute_tool echo"))
              .toList();
      assertThat(echoes).hasSize(2);
      SpanData caller =
          echoes.stream()
              .filter(span -> !span.getParentSpanContext().isValid())
              .findFirst()
              .orElseThrow();
      SpanData onWorker = echoes.stream().filter(span -> span != caller).findFirst().orElseThrow();
      assertThat(onWorker.getTraceId()).isEqualTo(caller.getTraceId());
      assertThat(onWorker.getParentSpanId()).isEqualTo(caller.getSpanId());
      assertThat(onWorker.getParentSpanContext().isRemote()).isTrue();
    }
  }

  @Test
  void failuresAreClassifiedAsTheCoreDoes() {
    worker(new Sample(), new InMemoryResultStore());
    // Tools register one by one: 'broken' first, 'picky' after it.
    waitForSample();
    ToolResult picky = call("picky", "{\"text\":\"x\"}", Duration.ofSeconds(10));
    ToolResult broken = call("broken", "{\"text\":\"x\"}", Duration.ofSeconds(10));
    assertThat(((ToolResult.Failure) picky).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(picky.text()).contains("text must be shouting");
    assertThat(((ToolResult.Failure) broken).error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(broken.text()).doesNotContain("IllegalStateException").doesNotContain("fire");
  }

  @Test
  void aCallOverTheBussMaximumSizeIsRefusedAtOnceAsInvalidArguments() {
    worker(new Sample(), new InMemoryResultStore());
    waitForSample();
    MessageBus small = smallHostBus(1024);
    if (small != host) {
      closeLater(small);
    }
    registry.register(
        remoteSpec("big_echo", "Echoes through a bus with a small limit."),
        (call, arguments) ->
            new RemoteToolExecutor(small, group)
                .execute(
                    ToolCall.of("echo", call.arguments()).withDeadline(call.deadline()),
                    arguments));
    Instant start = Instant.now();
    ToolResult result =
        call("big_echo", "{\"text\":\"" + "x".repeat(2000) + "\"}", Duration.ofSeconds(30));
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).contains("1024 bytes");
    assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(2));
  }

  /** A spec of the test group's remote tool, taking any object. */
  private dev.toolhost.core.ToolSpec remoteSpec(String name, String description) {
    return new dev.toolhost.core.ToolSpec(
        name,
        description,
        tools.jackson.databind.json.JsonMapper.shared().createObjectNode().put("type", "object"),
        RemoteToolExecutor.source(group));
  }

  /** A host bus with the given maximum message size, reaching the same queues. */
  protected abstract MessageBus smallHostBus(int maxMessageSize);

  @Test
  void aCallWaitingForAWorkerToReconnectPastItsDeadlineIsAnsweredThatNoneRuns() {
    // The group's workers are known to live (their heartbeats), but none consumes: the call waits
    // for one until its deadline, 2 s, shorter than the reconnect wait, and says it did not run.
    registry.register(
        remoteSpec("reconnecting", "Its worker is reconnecting."),
        new RemoteToolExecutor(host, group, java.util.Optional.empty(), () -> true));
    Instant start = Instant.now();
    ToolResult result = call("reconnecting", "{}", Duration.ofSeconds(2));
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(result.text()).contains("no worker of group '" + group + "' is running");
    assertThat(Duration.between(start, Instant.now()))
        .isGreaterThan(Duration.ofMillis(500))
        .isLessThan(RemoteToolExecutor.RECONNECT_WAIT);
  }

  @Test
  void aToolNoWorkerHostsIsUnavailableAtOnce() {
    registry.register(
        remoteSpec("nobody", "Nobody runs this."), new RemoteToolExecutor(host, group));
    Instant start = Instant.now();
    ToolResult result = call("nobody", "{}", Duration.ofSeconds(30));
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void aCallerThatTimesOutGetsTimeoutAndTheToolRunsOnce() throws Exception {
    Sample sample = new Sample();
    worker(sample, new InMemoryResultStore());
    waitFor(() -> registry.find("slow").isPresent());
    ToolResult result = call("slow", "{\"millis\":1000}", Duration.ofMillis(300));
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.TIMEOUT);
    // A second run would start while the first still runs (after it, the result is in the store):
    // once the first has ended, there was none.
    await().atMost(Duration.ofSeconds(10)).until(() -> sample.slowRunsEnded.get() == 1);
    assertThat(sample.runs).hasValue(1);
    assertThat(call("echo", "{\"text\":\"after\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("echo: after");
  }

  @Test
  void twoWorkersOfOneGroupAreOneToolAndShareTheCalls() {
    Sample first = new Sample();
    Sample second = new Sample();
    worker(first, new InMemoryResultStore());
    worker(second, new InMemoryResultStore());
    waitForSample();
    assertThat(registry.specs().stream().filter(s -> s.name().equals("echo"))).hasSize(1);
    List<ToolResult> results = new ArrayList<>();
    List<ToolCall> calls = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      calls.add(ToolCall.of("slow", "{\"millis\":20}").withTimeout(Duration.ofSeconds(20)));
    }
    results.addAll(dispatcher.dispatchAll(ToolSet.of(registry, ToolProfiles.MAIN), calls));
    assertThat(results).allMatch(r -> r.text().equals("slept 20"));
    assertThat(first.runs.get() + second.runs.get()).isEqualTo(40);
    assertThat(first.runs.get()).isPositive();
    assertThat(second.runs.get()).isPositive();
  }

  @Test
  void toolsAreUnregisteredWhenTheWorkerSaysGoodbyeOrItsHeartbeatLapses() {
    ToolWorker worker = worker(new Sample(), new InMemoryResultStore());
    waitForSample();
    worker.close();
    waitFor(() -> registry.find("echo").isEmpty());
    // Heard, not polled: the ghost lives only three of its heartbeats, shorter than a busy
    // machine's pause of the polling thread.
    List<String> heard = RegistryChanges.of(registry);
    host.publish(
        ToolWorker.ANNOUNCE_TOPIC,
        Message.of(
            "{\"type\":\"announce\",\"worker_id\":\"ghost\",\"group\":\""
                + group
                + "\",\"heartbeat_ms\":100,\"tools\":[{\"name\":\"ghostly\",\"description\":\"d\","
                + "\"parameters\":{\"type\":\"object\"}}]}"));
    waitFor(() -> heard.contains("-ghostly"));
    assertThat(heard)
        .filteredOn(change -> change.endsWith("ghostly"))
        .containsExactly("+ghostly", "-ghostly");
  }

  @Test
  void aWorkerJoiningAndLeavingIsOneLogLineEachNamingItsTools() {
    try (LogCapture log = LogCapture.start()) {
      ToolWorker worker = worker(new Sample(), new InMemoryResultStore());
      String registered =
          "Registered remote tools of group '"
              + group
              + "', announced by worker "
              + worker.workerId()
              + ": broken, echo, picky, slow";
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> log.messages(RemoteTools.class, "INFO").contains(registered));
      worker.close();
      String gone =
          "Worker "
              + worker.workerId()
              + " of group '"
              + group
              + "' said goodbye; unregistered its tools that no other worker hosts: broken, echo,"
              + " picky, slow";
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> log.messages(RemoteTools.class, "INFO").contains(gone));

      assertThat(log.messages(RemoteTools.class, "INFO"))
          .filteredOn(message -> message.contains("'" + group + "'"))
          .containsExactly(registered, gone);
    }
  }

  @Test
  void aWorkerWithoutASharedResultStoreOnABrokerWarnsOnceAtStartThatCallsMayFinishTwice() {
    try (LogCapture log = LogCapture.start()) {
      ResultStore store = store();
      ToolWorker worker = worker(new Sample(), store);
      waitForSample();
      // Heartbeats and a call after the start: the warning is still the one of the start.
      assertThat(call("echo", "{\"text\":\"hi\"}", Duration.ofSeconds(10)).text())
          .isEqualTo("echo: hi");
      List<String> warnings =
          log.messages(ToolWorker.class, "WARN").stream()
              .filter(message -> message.contains(worker.workerId()))
              .toList();
      // Shared results, or a bus inside one process that never delivers to another worker: no
      // warning.
      if (store.shared() || !host.spansProcesses()) {
        assertThat(warnings).isEmpty();
      } else {
        assertThat(warnings).hasSize(1);
        assertThat(warnings.getFirst())
            .contains("group '" + group + "'")
            .contains("in this process only")
            .contains("may finish twice")
            .contains("--results-redis URI");
      }
    }
  }

  @Test
  void aNameTakenByAnotherGroupOrByTheHostIsLoggedOnceNamingWhoHasIt() {
    registry.register(
        MethodTools.of(new Sample(), "builtin:local").stream()
            .filter(tool -> tool.name().equals("picky"))
            .findFirst()
            .orElseThrow());
    String other = group + "-b";
    java.util.concurrent.atomic.AtomicInteger heardFromOther =
        new java.util.concurrent.atomic.AtomicInteger();
    closeLater(
        host.subscribe(
            ToolWorker.ANNOUNCE_TOPIC,
            delivery -> {
              delivery.ack();
              if (delivery.message().body().contains("\"group\":\"" + other + "\"")) {
                heardFromOther.incrementAndGet();
              }
            }));
    try (LogCapture log = LogCapture.start()) {
      worker(new Sample(), new InMemoryResultStore());
      waitFor(() -> registry.find("echo").isPresent());
      MessageBus otherBus = workerBus();
      if (otherBus != host) {
        closeLater(otherBus);
      }
      ToolRegistry tools = new ToolRegistry();
      tools.registerAll(MethodTools.of(new Sample(), "builtin:sample"));
      ToolWorker second =
          closeLater(
              new ToolWorker(
                      otherBus,
                      other,
                      tools,
                      ToolDispatcher.create(),
                      new InMemoryResultStore(),
                      4,
                      // Many heartbeats soon, none so close that a pause lapses the worker.
                      Duration.ofMillis(250))
                  .start());
      try {
        // Many heartbeats of the second group, each announcing the four names that clash.
        await().atMost(Duration.ofSeconds(20)).until(() -> heardFromOther.get() >= 10);
        String taken =
            "Tool '%s' of group '%s' (announced by worker %s) is not registered: the name is"
                + " taken by %s; rename the tool in one of them";
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () ->
                    assertThat(log.messages(RemoteTools.class, "WARN"))
                        .filteredOn(message -> message.contains(" of group '" + other + "'"))
                        .containsExactlyInAnyOrder(
                            taken.formatted(
                                "broken", other, second.workerId(), "group '" + group + "'"),
                            taken.formatted(
                                "echo", other, second.workerId(), "group '" + group + "'"),
                            taken.formatted(
                                "slow", other, second.workerId(), "group '" + group + "'"),
                            taken.formatted("picky", other, second.workerId(), "builtin:local")));
        assertThat(log.messages(RemoteTools.class, "WARN"))
            .filteredOn(message -> message.contains(" of group '" + group + "'"))
            .hasSize(1)
            .allMatch(message -> message.startsWith("Tool 'picky' of group '" + group + "'"))
            .allMatch(message -> message.contains("taken by builtin:local"));
        assertThat(registry.find("echo").orElseThrow().spec().source())
            .isEqualTo(RemoteToolExecutor.source(group));
      } finally {
        second.close();
        host.deleteQueue(ToolWorker.queue(other));
      }
    }
  }

  @Test
  void aNewlyJoinedWorkersDefinitionReplacesItsGroupsToolAndOldHeartbeatsDoNotTakeItBack() {
    List<String> heard = RegistryChanges.of(registry);
    announce("old", "Looks up a word.", "lookup");
    waitFor(() -> registry.find("lookup").isPresent());

    announce("new", "Looks up a word, with its etymology.", "lookup");
    waitFor(
        () ->
            registry
                .find("lookup")
                .map(t -> t.spec().description().endsWith("etymology."))
                .orElse(false));
    // The old worker's heartbeat, then a marker: announcements are handled in order.
    announce("old", "Looks up a word.", "lookup");
    announce("new", "Looks up a word, with its etymology.", "lookup", "marker");
    waitFor(() -> registry.find("marker").isPresent());

    assertThat(registry.find("lookup").orElseThrow().spec().description())
        .isEqualTo("Looks up a word, with its etymology.");
    assertThat(heard).containsExactly("+lookup", "~lookup", "+marker");
  }

  @Test
  void aNewlyJoinedWorkersBrokenDefinitionLeavesTheWorkingOneRegistered() {
    announce("old", "Looks up a word.", "lookup");
    waitFor(() -> registry.find("lookup").isPresent());
    ExecutableTool working = registry.find("lookup").orElseThrow();

    announceWith(
        "new",
        "Looks up a word, badly.",
        "{\"type\":\"object\",\"properties\":{\"word\":{\"type\":5}}}",
        "lookup");
    // A marker after it: announcements are handled in order.
    announce("new", "Marks the end.", "marker");
    waitFor(() -> registry.find("marker").isPresent());

    assertThat(registry.find("lookup")).containsSame(working);
  }

  private void announce(String worker, String description, String... tools) {
    announceWith(worker, description, "{\"type\":\"object\"}", tools);
  }

  private void announceWith(String worker, String description, String parameters, String... tools) {
    StringBuilder list = new StringBuilder();
    for (String tool : tools) {
      list.append(list.isEmpty() ? "" : ",")
          .append("{\"name\":\"")
          .append(tool)
          .append("\",\"description\":\"")
          .append(description)
          .append("\",\"parameters\":")
          .append(parameters)
          .append("}");
    }
    host.publish(
        ToolWorker.ANNOUNCE_TOPIC,
        Message.of(
            "{\"type\":\"announce\",\"worker_id\":\""
                + worker
                + "-"
                + group
                + "\",\"group\":\""
                + group
                + "\",\"heartbeat_ms\":60000,\"tools\":["
                + list
                + "]}"));
  }

  @Test
  void aPoisonMessageIsDeadLetteredAndTheWorkerKeepsWorking() {
    Sample sample = new Sample();
    worker(sample, new InMemoryResultStore());
    waitForSample();
    String marker = UUID.randomUUID().toString();
    host.send(ToolWorker.queue(group), Message.of("this is not json { " + marker));
    host.send(
        ToolWorker.queue(group),
        Message.of("{\"json\":\"but not a request\",\"marker\":\"" + marker + "\"}"));
    assertThat(call("echo", "{\"text\":\"still here\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("echo: still here");
    assertThat(sample.runs).hasValue(1);
    assertThat(takeDeadLettered(marker, 2)).isEqualTo(2);
  }

  /**
   * Takes the messages holding the marker off the shared dead-letter queue, leaving the others
   * there, so that tests leave nothing behind.
   *
   * @return how many were taken before {@code expected} arrived or 10 seconds passed
   */
  protected int takeDeadLettered(String marker, int expected) {
    AtomicInteger taken = new AtomicInteger();
    try (Subscription dead =
        host.consume(
            MessageBus.DEAD_LETTER_QUEUE,
            100,
            delivery -> {
              // Others' messages stay unsettled and go back to the queue when this one closes.
              if (delivery.message().body().contains(marker)) {
                delivery.ack();
                taken.incrementAndGet();
              }
            })) {
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (taken.get() < expected && System.nanoTime() < until) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    return taken.get();
  }

  @Test
  void announcedToolsKeepTheirTimeout() {
    worker(new Sample(), new InMemoryResultStore());
    waitForSample();
    assertThat(registry.find("slow").orElseThrow().timeout()).hasValue(Duration.ofMinutes(5));
    assertThat(registry.find("echo").orElseThrow().timeout()).isEmpty();
  }

  @Test
  void anAnnouncedTimeoutThatIsNotAPositiveWholeNumberLeavesTheDefault() {
    host.publish(
        ToolWorker.ANNOUNCE_TOPIC,
        Message.of(
            "{\"type\":\"announce\",\"worker_id\":\"odd\",\"group\":\""
                + group
                + "\",\"heartbeat_ms\":60000,\"tools\":["
                + "{\"name\":\"negative\",\"parameters\":{\"type\":\"object\"},\"timeout_ms\":-5},"
                + "{\"name\":\"fractional\",\"parameters\":{\"type\":\"object\"},\"timeout_ms\":1.5},"
                + "{\"name\":\"worded\",\"parameters\":{\"type\":\"object\"},\"timeout_ms\":\"1m\"},"
                + "{\"name\":\"fine\",\"parameters\":{\"type\":\"object\"},\"timeout_ms\":90000}]}"));

    waitFor(() -> registry.find("fine").isPresent());

    assertThat(registry.find("fine").orElseThrow().timeout()).hasValue(Duration.ofSeconds(90));
    for (String name : List.of("negative", "fractional", "worded")) {
      assertThat(registry.find(name)).as(name).isPresent();
      assertThat(registry.find(name).orElseThrow().timeout()).as(name).isEmpty();
    }
  }

  @Test
  void announcedToolsKeepTheirAnnotations() {
    worker(new Sample(), new InMemoryResultStore());
    waitForSample();
    assertThat(registry.find("echo").orElseThrow().spec().annotations())
        .isEqualTo(new ToolAnnotations(true, false, true, false));
    assertThat(registry.find("broken").orElseThrow().spec().annotations())
        .isEqualTo(ToolAnnotations.UNSPECIFIED);
  }

  private ToolResult call(ToolCall call) {
    return dispatcher.dispatch(ToolSet.of(registry, ToolProfiles.MAIN), call);
  }

  /** The bus a tool service of the queue runs on; the queue is deleted after the test. */
  private MessageBus serviceBus(String queue) {
    MessageBus bus = workerBus();
    if (bus != host) {
      closeLater(bus);
    }
    closeLater(() -> host.deleteQueue(queue));
    return bus;
  }

  /** A worker of the sample tools over the path's result store, once the host sees its tools. */
  private Sample sampleWorker() {
    Sample sample = new Sample();
    worker(sample, store());
    waitForSample();
    return sample;
  }

  /** A user's call numbered call_0, as agent stacks number the first call of every turn. */
  private static ToolCall firstOfATurn(String tool, String arguments, String user) {
    return ToolCall.of(tool, arguments)
        .withCallId("call_0")
        .withUser(user)
        .withTimeout(Duration.ofSeconds(10));
  }

  @Test
  void twoUsersCallingOneToolWithOneCallIdAndOtherArgumentsBothRunAndEachGetsItsOwnAnswer() {
    Sample sample = sampleWorker();
    ToolCall alice = firstOfATurn("echo", "{\"text\":\"alice-order\"}", "alice");
    ToolCall bob = firstOfATurn("echo", "{\"text\":\"bob-order\"}", "bob");
    ToolCall bobsOtherTool = firstOfATurn("slow", "{\"millis\":1}", "bob");

    assertThat(call(alice)).isEqualTo(ToolResult.success("echo: alice-order"));
    assertThat(call(bob)).isEqualTo(ToolResult.success("echo: bob-order"));
    assertThat(call(bobsOtherTool)).isEqualTo(ToolResult.success("slept 1"));
    assertThat(sample.runs).hasValue(3);
  }

  @Test
  void aNewCallWithAnEarlierCallsIdUserSessionAndArgumentsRunsAgain() {
    // Agent stacks number the calls of every turn from call_0: the same call next turn is a new
    // call, not a copy of the last one.
    Sample sample = sampleWorker();
    ToolCall call = firstOfATurn("echo", "{\"text\":\"again\"}", "alice").withSessionId("s-1");
    assertThat(call(call)).isEqualTo(ToolResult.success("echo: again"));
    assertThat(call(call)).isEqualTo(ToolResult.success("echo: again"));
    assertThat(sample.runs).hasValue(2);
  }

  @Test
  void aRequestWithoutACallKeyIsKnownByItsWholeContentNotItsCallIdAlone() throws Exception {
    // A caller from before call keys: its requests carry none.
    Sample sample = sampleWorker();
    String deadline = Instant.now().plusSeconds(10).toString();
    String alice =
        "{\"tool_call_id\":\"call_0\",\"tool_name\":\"echo\",\"user\":\"alice\","
            + "\"arguments\":{\"text\":\"alice-order\"},\"deadline\":\""
            + deadline
            + "\"}";
    String bob = alice.replace("alice", "bob");
    for (String body : List.of(alice, bob, alice)) {
      try (Replies replies =
          host.request(ToolWorker.queue(group), Message.of(body), Instant.parse(deadline))) {
        InvokeReply reply =
            InvokeReply.parse(replies.next(Instant.parse(deadline)).orElseThrow().body());
        assertThat(reply.toolCallId()).isEqualTo("call_0");
        assertThat(reply.result())
            .isEqualTo(
                ToolResult.success(
                    body.contains("alice") ? "echo: alice-order" : "echo: bob-order"));
      }
    }
    // Alice's request delivered again is the one call it was.
    assertThat(sample.runs).hasValue(2);
  }

  @Test
  void aRequestDeliveredAgainAfterItFinishedIsAnsweredFromItsResult() throws Exception {
    Sample sample = sampleWorker();
    ToolCall call = ToolCall.of("echo", "{\"text\":\"once\"}").withTimeout(Duration.ofSeconds(10));
    Message request = Message.of(new InvokeRequest(call).toJson());
    for (int i = 0; i < 2; i++) {
      try (Replies replies = host.request(ToolWorker.queue(group), request, call.deadline())) {
        Message reply = replies.next(call.deadline()).orElseThrow();
        assertThat(InvokeReply.parse(reply.body()).result())
            .isEqualTo(ToolResult.success("echo: once"));
      }
    }
    assertThat(sample.runs).hasValue(1);
  }

  @Test
  void aCallThatOutlivesItsLeaseKeepsItsClaimAndASecondDeliveryGetsItsOneResult() throws Exception {
    Sample first = new Sample();
    Sample second = new Sample();
    ResultStore shared = store();
    // The call runs three leases long: only renewing keeps the second delivery from running it. A
    // lease of a second is renewed every third of one, so a busy machine's pause does not lapse it.
    worker(first, shared, ToolDispatcher.create(), LEASE);
    worker(second, shared, ToolDispatcher.create(), LEASE);
    waitFor(() -> registry.find("slow").isPresent());
    ToolCall call = ToolCall.of("slow", "{\"millis\":3000}").withTimeout(Duration.ofSeconds(20));
    Message request = Message.of(new InvokeRequest(call).toJson());
    try (Replies once = host.request(ToolWorker.queue(group), request, call.deadline())) {
      await().atMost(Duration.ofSeconds(10)).until(() -> first.runs.get() + second.runs.get() == 1);
      try (Replies again = host.request(ToolWorker.queue(group), request, call.deadline())) {
        for (Replies replies : List.of(once, again)) {
          assertThat(InvokeReply.parse(replies.next(call.deadline()).orElseThrow().body()).result())
              .isEqualTo(ToolResult.success("slept 3000"));
        }
      }
    }
    assertThat(first.runs.get() + second.runs.get()).isEqualTo(1);
  }

  @Test
  void aWorkerClosedMidCallKeepsItsClaimUntilTheCallEndsAndTheNextWorkerAnswersFromIt()
      throws Exception {
    Sample closed = new Sample();
    Sample next = new Sample();
    ResultStore shared = store();
    ToolWorker first = worker(closed, shared, ToolDispatcher.create(), LEASE);
    waitFor(() -> registry.find("slow").isPresent());
    ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    closeLater(threads::shutdownNow);
    Future<ToolResult> inFlight =
        threads.submit(() -> call("slow", "{\"millis\":3000}", Duration.ofSeconds(20)));
    await().atMost(Duration.ofSeconds(10)).until(() -> closed.runs.get() == 1);
    worker(next, shared, ToolDispatcher.create(), LEASE);
    // The request goes back to the queue and on to the next worker; the run goes on here.
    first.close();
    assertThat(inFlight.get(20, TimeUnit.SECONDS)).isEqualTo(ToolResult.success("slept 3000"));
    assertThat(closed.runs.get() + next.runs.get()).isEqualTo(1);
  }

  @Test
  void anInlineToolRunsWithoutAThreadOfItsOwnAndAnyOtherToolOnOne() {
    Threads threads = new Threads();
    worker(threads, new InMemoryResultStore());
    waitFor(() -> registry.find("quick").isPresent() && registry.find("careful").isPresent());
    assertThat(call("quick", "{\"text\":\"a\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("quick: a");
    assertThat(call("careful", "{\"text\":\"b\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("careful: b");
    // The invoke handler starts "toolhost-invoke-" threads, core's deadline step "toolhost-tool-".
    assertThat(threads.names.get(0)).doesNotStartWith("toolhost-invoke-");
    assertThat(threads.names.get(1)).startsWith("toolhost-tool-");
  }

  @Test
  void aRequestWhoseDeadlinePassedIsNotExecuted() throws Exception {
    Sample sample = new Sample();
    worker(sample, new InMemoryResultStore());
    waitForSample();
    ToolCall late =
        ToolCall.of("echo", "{\"text\":\"late\"}").withDeadline(Instant.now().minusSeconds(1));
    // The worker answers the late request without running it; the answer is the positive sign
    // that it was dealt with.
    try (Replies replies =
        host.request(
            ToolWorker.queue(group),
            Message.of(new InvokeRequest(late).toJson()),
            Instant.now().plusSeconds(10))) {
      ToolResult answer =
          InvokeReply.parse(replies.next(Instant.now().plusSeconds(10)).orElseThrow().body())
              .result();
      assertThat(((ToolResult.Failure) answer).error().code()).isEqualTo(ErrorCode.TIMEOUT);
      assertThat(answer.text()).contains("was not run");
    }
    assertThat(sample.runs).hasValue(0);
    assertThat(call("echo", "{\"text\":\"now\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("echo: now");
    assertThat(sample.runs).hasValue(1);
  }

  @Test
  void aToolServiceAnswersItsToolsAndStreams() {
    String queue = "test.service." + UUID.randomUUID();
    ToolServiceDescriptor descriptor =
        ToolServices.parseServices(
                "{\"id\": \"custom-rag\", \"topic\": \""
                    + queue
                    + "\", \"config-params\": [{\"name\": \"collection\", \"required\": true}]}")
            .getFirst();
    List<ToolDescriptor> tools =
        ToolServices.parseTools(
            """
            [{"type": "tool-service", "name": "query-customers",
              "description": "Query the customer knowledge base", "service": "custom-rag",
              "collection": "customers",
              "arguments": [{"name": "question", "type": "string",
                             "description": "The question to ask about customers"}]}]
            """);
    MessageBus bus = serviceBus(queue);
    closeLater(
            new ToolService(bus, descriptor, tools) {
              @Override
              protected Object invoke(Request request) {
                request.emit("[" + request.config("collection").asString() + "] ");
                if (request.arguments().path("question").asString().equals("json")) {
                  return java.util.Map.of("answer", 42);
                }
                return "answer to " + request.arguments().path("question").asString();
              }
            })
        .start();
    waitFor(() -> registry.find("query-customers").isPresent());
    assertThat(registry.find("query-customers").orElseThrow().spec().source())
        .isEqualTo("service:custom-rag");
    assertThat(call("query-customers", "{\"question\":\"why\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("[customers] answer to why");
    assertThat(call("query-customers", "{\"question\":\"json\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("[customers] {\"answer\":42}");
  }

  @Test
  void aToolServiceFailureTellsTheModelItsMessageAndOnlyTheOperatorItsType() {
    String queue = "test.service." + UUID.randomUUID();
    ToolServiceDescriptor descriptor =
        ToolServices.parseServices(
                "{\"id\": \"failing-rag\", \"topic\": \"" + queue + "\", \"config-params\": []}")
            .getFirst();
    List<ToolDescriptor> tools =
        ToolServices.parseTools(
            """
            [{"type": "tool-service", "name": "query-failing", "description": "Fails",
              "service": "failing-rag",
              "arguments": [{"name": "question", "type": "string", "description": "Anything"}]}]
            """);
    MessageBus bus = serviceBus(queue);
    closeLater(
            new ToolService(bus, descriptor, tools) {
              @Override
              protected Object invoke(Request request) {
                if (request.arguments().path("question").asString().equals("silent")) {
                  throw new UnsupportedOperationException();
                }
                throw new IllegalStateException("no such collection 'customers'");
              }
            })
        .start();
    waitFor(() -> registry.find("query-failing").isPresent());

    ToolResult said = call("query-failing", "{\"question\":\"why\"}", Duration.ofSeconds(10));
    ToolResult silent = call("query-failing", "{\"question\":\"silent\"}", Duration.ofSeconds(10));

    ToolResult.Failure failed = (ToolResult.Failure) said;
    assertThat(failed.error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(failed.error().message())
        .isEqualTo("Tool 'query-failing' failed: no such collection 'customers'");
    assertThat(failed.error().detail()).contains("IllegalStateException").contains("failing-rag");
    ToolResult.Failure quiet = (ToolResult.Failure) silent;
    assertThat(quiet.error().message()).isEqualTo("Tool 'query-failing' failed.");
    assertThat(quiet.error().detail()).contains("UnsupportedOperationException");
  }

  /** The call on a thread of its own, as a caller would make it, to be interrupted. */
  private Thread calling(String tool, String arguments, AtomicReference<ToolResult> answer) {
    return Thread.ofVirtual()
        .start(() -> answer.set(call(tool, arguments, Duration.ofSeconds(90))));
  }

  /** Interrupts the caller once the tool runs, and checks that it stopped within a second. */
  private static void cancelAndCheck(
      Thread caller,
      AtomicReference<ToolResult> answer,
      AtomicInteger started,
      AtomicReference<Instant> interrupted)
      throws InterruptedException {
    await().atMost(Duration.ofSeconds(20)).until(() -> started.get() == 1);
    Instant cancelled = Instant.now();
    caller.interrupt();
    assertThat(caller.join(Duration.ofSeconds(10))).isTrue();
    assertThat(((ToolResult.Failure) answer.get()).error().code()).isEqualTo(ErrorCode.CANCELLED);
    await().atMost(Duration.ofSeconds(10)).until(() -> interrupted.get() != null);
    assertThat(Duration.between(cancelled, interrupted.get())).isLessThan(Duration.ofSeconds(1));
  }

  private static ToolResult answer(Replies replies, Instant deadline) throws InterruptedException {
    return InvokeReply.parse(replies.next(deadline).orElseThrow().body()).result();
  }

  @Test
  void aCallersCancelStopsTheToolOnTheWorkerWithinASecondAndAnswersCancelled() throws Exception {
    Napper napper = new Napper();
    worker(napper, store());
    waitFor(() -> registry.find("nap").isPresent());
    AtomicReference<ToolResult> answer = new AtomicReference<>();

    Thread caller = calling("nap", "{\"label\":\"a\"}", answer);

    cancelAndCheck(caller, answer, napper.started, napper.interrupted);
    assertThat(napper.finished).hasValue(0);
  }

  @Test
  void aCancelThatArrivesBeforeItsRequestIsTakenFromTheQueueWinsAndTheStoredResultSaysCancelled()
      throws Exception {
    Napper napper = new Napper();
    // One call at a time: the second request waits in the queue while the first runs.
    worker(napper, store(), ToolDispatcher.create(), ResultStore.DEFAULT_LEASE, 1);
    waitFor(() -> registry.find("nap").isPresent());
    ToolCall first =
        ToolCall.of("nap", "{\"label\":\"first\"}").withTimeout(Duration.ofSeconds(90));
    ToolCall second =
        ToolCall.of("nap", "{\"label\":\"second\"}").withTimeout(Duration.ofSeconds(90));
    InvokeRequest running = new InvokeRequest(first);
    InvokeRequest queued = new InvokeRequest(second);
    String queue = ToolWorker.queue(group);
    try (Replies runningReplies =
        host.request(queue, Message.of(running.toJson()), first.deadline())) {
      await().atMost(Duration.ofSeconds(20)).until(() -> napper.started.get() == 1);
      try (Replies queuedReplies =
          host.request(queue, Message.of(queued.toJson()), second.deadline())) {
        // The queued call's cancel, then the running one's, on one topic: the worker has heard the
        // first when the second frees its slot and it takes the queued request.
        host.publish(
            CallCancel.topic(group),
            new CallCancel(queued.callKey(), second.callId(), second.deadline()).message());
        host.publish(
            CallCancel.topic(group),
            new CallCancel(running.callKey(), first.callId(), first.deadline()).message());

        ToolResult stopped = answer(runningReplies, first.deadline());
        assertThat(((ToolResult.Failure) stopped).error().code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(stopped.text()).contains("while it ran").contains("may have been done");
        ToolResult never = answer(queuedReplies, second.deadline());
        assertThat(((ToolResult.Failure) never).error().code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(never.text()).contains("before it ran");
      }
    }
    assertThat(napper.started).hasValue(1);
    assertThat(napper.interrupted.get()).isNotNull();
    // Each call's stored result says cancelled: a copy of its request is answered from it.
    for (InvokeRequest request : List.of(running, queued)) {
      try (Replies again =
          host.request(queue, Message.of(request.toJson()), request.call().deadline())) {
        ToolResult stored = answer(again, request.call().deadline());
        assertThat(((ToolResult.Failure) stored).error().code()).isEqualTo(ErrorCode.CANCELLED);
      }
    }
    assertThat(napper.started).hasValue(1);
  }

  @Test
  void aCancelOfACallThatFinishedOrThatNoWorkerGotChangesNothing() throws Exception {
    Sample sample = sampleWorker();
    ToolCall done = ToolCall.of("echo", "{\"text\":\"kept\"}").withTimeout(Duration.ofSeconds(10));
    InvokeRequest request = new InvokeRequest(done);
    String queue = ToolWorker.queue(group);
    try (Replies replies = host.request(queue, Message.of(request.toJson()), done.deadline())) {
      assertThat(answer(replies, done.deadline())).isEqualTo(ToolResult.success("echo: kept"));
    }
    host.publish(
        CallCancel.topic(group),
        new CallCancel(request.callKey(), done.callId(), done.deadline()).message());
    host.publish(
        CallCancel.topic(group),
        new CallCancel("f".repeat(64), "call_nobody", done.deadline()).message());
    host.publish(CallCancel.topic(group), Message.of("{\"type\":\"cancel\"}"));
    assertThat(call("echo", "{\"text\":\"next\"}", Duration.ofSeconds(10)).text())
        .isEqualTo("echo: next");
    try (Replies again = host.request(queue, Message.of(request.toJson()), done.deadline())) {
      assertThat(answer(again, done.deadline())).isEqualTo(ToolResult.success("echo: kept"));
    }
    assertThat(sample.runs).hasValue(2);
  }

  @Test
  void aCallersCancelStopsAToolServicesRequestWithinASecondAndTheServiceAnswersCancelled()
      throws Exception {
    String queue = "test.service." + UUID.randomUUID();
    ToolServiceDescriptor descriptor =
        ToolServices.parseServices(
                "{\"id\": \"napping\", \"topic\": \"" + queue + "\", \"config-params\": []}")
            .getFirst();
    List<ToolDescriptor> tools =
        ToolServices.parseTools(
            """
            [{"type": "tool-service", "name": "nap-service", "description": "Naps",
              "service": "napping",
              "arguments": [{"name": "label", "type": "string", "description": "A label"}]}]
            """);
    Napper napper = new Napper();
    MessageBus bus = serviceBus(queue);
    closeLater(
            new ToolService(bus, descriptor, tools) {
              @Override
              protected Object invoke(Request request) throws InterruptedException {
                return napper.napOnService();
              }
            })
        .start();
    waitFor(() -> registry.find("nap-service").isPresent());
    AtomicReference<ToolResult> answer = new AtomicReference<>();

    Thread caller = calling("nap-service", "{\"label\":\"x\"}", answer);

    cancelAndCheck(caller, answer, napper.started, napper.interrupted);
    assertThat(napper.finished).hasValue(0);

    // What the service answers a cancelled request, read off the wire.
    Instant deadline = Instant.now().plusSeconds(60);
    try (Replies replies =
        host.request(queue, Message.of("{\"arguments\":{}}").withPropertyHeaders(), deadline)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> napper.started.get() == 2);
      host.publish(
          ToolServiceExecutor.cancelTopic(queue),
          ToolServiceExecutor.cancel(replies.correlationId(), deadline));
      String reply = replies.next(deadline).orElseThrow().body();
      assertThat(reply).contains("\"type\":\"cancelled\"").contains("\"end_of_message\":true");
    }
  }
}
