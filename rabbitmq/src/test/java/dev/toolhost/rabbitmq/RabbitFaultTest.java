package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.toolhost.bus.BusException;
import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.InvokeReply;
import dev.toolhost.bus.InvokeRequest;
import dev.toolhost.bus.Message;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.RemotePathContractTest.Sample;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.Replies;
import dev.toolhost.bus.ResultStore;
import dev.toolhost.bus.ToolServices;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/** Faults against the real broker; each checks that nothing is lost or executed twice. */
@Timeout(90)
class RabbitFaultTest {

  private static final URI REDIS = URI.create("redis://127.0.0.1:6379");

  // The class's own: its broker closes every connection, and only this class's.
  private static TestVhost vhost;

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private RabbitBus host;
  private String group;

  @BeforeAll
  static void makeVhost() throws InterruptedException {
    vhost = TestVhost.create();
  }

  @AfterAll
  static void deleteVhost() throws InterruptedException {
    if (vhost != null) { // null when making it failed, which the tests already said
      vhost.close();
    }
  }

  @BeforeEach
  void startHost() {
    host = RabbitBus.connect(vhost.uri());
    group = "fault-" + UUID.randomUUID().toString().substring(0, 8);
    closing.add(new RemoteTools(host, registry, new ToolServices(host, registry)).start());
  }

  @AfterEach
  void stopAll() throws Exception {
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    // After the broker closed the connections, the host's may still be recovering.
    await()
        .atMost(Duration.ofSeconds(15))
        .ignoreExceptions()
        .until(
            () -> {
              host.deleteQueue(ToolWorker.queue(group));
              return true;
            });
    host.close();
  }

  private RabbitBus workerBus() {
    RabbitBus bus = RabbitBus.connect(vhost.uri());
    closing.add(bus);
    return bus;
  }

  private ToolWorker worker(RabbitBus bus, Sample sample, ResultStore store) {
    // Long enough that a busy machine's pause does not lapse a live worker; the test of lapsed
    // heartbeats waits for the lapse, three of them.
    return worker(bus, sample, store, Duration.ofSeconds(1));
  }

  private ToolWorker worker(RabbitBus bus, Sample sample, ResultStore store, Duration heartbeat) {
    ToolRegistry tools = new ToolRegistry();
    tools.registerAll(MethodTools.of(sample, "builtin:sample"));
    ToolWorker worker =
        new ToolWorker(bus, group, tools, ToolDispatcher.create(), store, 16, heartbeat).start();
    closing.add(worker);
    return worker;
  }

  private ToolResult call(String tool, String arguments, Duration timeout) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of(tool, arguments).withTimeout(timeout));
  }

  @Test
  void aWorkerKilledMidCallHasTheRequestRedeliveredToAnotherAndAnsweredOnce() throws Exception {
    Sample dying = new Sample();
    Sample survivor = new Sample();
    RabbitBus dyingBus = workerBus();
    worker(dyingBus, dying, new InMemoryResultStore());
    ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    closing.add(threads::shutdownNow);
    waitFor(() -> registry.find("slow").isPresent());
    // The survivor's connection is opened before the call, and the call is long: the survivor
    // starts consuming while the dying worker still runs it, however busy the machine.
    RabbitBus survivorBus = workerBus();
    ToolCall call = ToolCall.of("slow", "{\"millis\":3000}").withTimeout(Duration.ofSeconds(20));
    Callable<List<Message>> caller =
        () -> {
          List<Message> got = new ArrayList<>();
          try (Replies replies =
              host.request(
                  ToolWorker.queue(group),
                  Message.of(new InvokeRequest(call).toJson()),
                  call.deadline())) {
            replies.next(call.deadline()).ifPresent(got::add);
            replies.next(Instant.now().plusSeconds(2)).ifPresent(got::add);
          }
          return got;
        };
    Future<List<Message>> replies = threads.submit(caller);
    waitFor(() -> dying.runs.get() == 1);
    worker(survivorBus, survivor, new InMemoryResultStore());
    assertThat(dying.slowRunsEnded).as("the dying worker still runs the call").hasValue(0);
    dyingBus.abort();
    List<Message> got = replies.get(30, TimeUnit.SECONDS);
    assertThat(got).hasSize(1);
    assertThat(InvokeReply.parse(got.getFirst().body()).result())
        .isEqualTo(ToolResult.success("slept 3000"));
    assertThat(survivor.runs).hasValue(1);
  }

  @Test
  void closingTheBrokersConnectionsMidCallSendsItAgainAndAnswersItFromItsOneRun() throws Exception {
    Sample sample = new Sample();
    try (RedisResultStore store = RedisResultStore.connect(REDIS)) {
      worker(workerBus(), sample, store);
      waitFor(() -> registry.find("slow").isPresent());
      ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
      closing.add(threads::shutdownNow);
      Future<ToolResult> inFlight =
          threads.submit(() -> call("slow", "{\"millis\":4000}", Duration.ofSeconds(30)));
      waitFor(() -> sample.runs.get() == 1);
      // rabbitmqctl can take seconds to start on a busy machine (20 s seen with two busy loops on
      // two cores): the call must still be running, and the clock starts once the connections
      // are closed.
      vhost.closeAllConnections("test");
      Instant closed = Instant.now();
      ToolResult result = inFlight.get(30, TimeUnit.SECONDS);
      assertThat(result)
          .as("the call is sent again after the reconnect and answered by its first run")
          .isEqualTo(ToolResult.success("slept 4000"));
      // Half the call's 30 s: sent again after the reconnect, not answered at its deadline.
      assertThat(Duration.between(closed, Instant.now())).isLessThan(Duration.ofSeconds(15));
      assertThat(sample.runs).as("the slow call ran once, though it was sent again").hasValue(1);
      assertThat(call("echo", "{\"text\":\"back\"}", Duration.ofSeconds(10)).text())
          .isEqualTo("echo: back");
    }
  }

  @Test
  void aCallStartedWhileTheHostReconnectsWaitsForItsWorkersToReconnectToo() throws Exception {
    // The host reaches the broker through a proxy that drops its connection and keeps it down; its
    // worker is away too (a broker that drops one connection drops them all), and comes back a
    // while after the host, as a worker with more to recover does.
    try (CuttableProxy proxy = new CuttableProxy(vhost.uri());
        RabbitBus proxied = RabbitBus.connect(proxy.uri(vhost.uri()))) {
      proxy.cut();
      waitFor(() -> !connected(proxied));
      ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
      closing.add(threads::shutdownNow);
      ToolCall call =
          ToolCall.of("echo", "{\"text\":\"back\"}").withTimeout(Duration.ofSeconds(30));
      Future<ToolResult> inFlight =
          threads.submit(
              () ->
                  new RemoteToolExecutor(proxied, group)
                      .execute(call, JsonMapper.shared().readTree(call.arguments())));
      // The call's first try finds the bus down; then the host reconnects.
      Thread.sleep(500);
      proxy.restore();
      waitFor(() -> connected(proxied));
      // The worker's connection is opened now, so that only its consuming falls in the call's
      // wait for workers (RECONNECT_WAIT), however long a connection takes on a busy machine.
      RabbitBus workerBus = workerBus();
      // Longer than the call's longest pause between tries: it asks for workers at least once
      // before one consumes again.
      Thread.sleep(1_500);
      assertThat(inFlight).as("still waiting for a worker").isNotDone();
      Sample sample = new Sample();
      worker(workerBus, sample, new InMemoryResultStore());
      assertThat(inFlight.get(20, TimeUnit.SECONDS)).isEqualTo(ToolResult.success("echo: back"));
      assertThat(sample.runs).hasValue(1);
    }
  }

  @Test
  void aCallToAWorkerThatIsReconnectingOnItsOwnWaitsForItAndRunsOnce() throws Exception {
    // The worker reaches the broker through a proxy that drops its connection and keeps it down,
    // while the host stays connected and the worker's heartbeats (every 5 s) have not lapsed.
    try (CuttableProxy proxy = new CuttableProxy(vhost.uri())) {
      RabbitBus workerBus = RabbitBus.connect(proxy.uri(vhost.uri()));
      closing.add(workerBus);
      Sample sample = new Sample();
      worker(workerBus, sample, new InMemoryResultStore(), Duration.ofSeconds(5));
      waitFor(() -> registry.find("echo").isPresent());
      assertThat(call("echo", "{\"text\":\"first\"}", Duration.ofSeconds(10)).text())
          .isEqualTo("echo: first");
      proxy.cut();
      waitFor(() -> host.consumerCount(ToolWorker.queue(group)) == 0);
      // The host trusts a count above zero for a second (RabbitBus): the call counts afresh.
      Thread.sleep(1_100);
      ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
      closing.add(threads::shutdownNow);
      Future<ToolResult> inFlight =
          threads.submit(() -> call("echo", "{\"text\":\"back\"}", Duration.ofSeconds(30)));
      // Long enough to see the call wait (no worker would be answered at once), short enough to
      // leave most of RECONNECT_WAIT to the worker's recovery on a busy machine.
      Thread.sleep(500);
      assertThat(inFlight).as("waiting for the worker, not answered that none runs").isNotDone();
      proxy.restore();
      assertThat(inFlight.get(20, TimeUnit.SECONDS)).isEqualTo(ToolResult.success("echo: back"));
      assertThat(sample.runs).hasValue(2);
    }
  }

  @Test
  void aCallToAWorkerWhoseHeartbeatsLapsedIsAnsweredAtOnceThatNoneRuns() throws Exception {
    // A worker that died: the broker drops its consumer, and once its heartbeats lapse the call
    // does not wait for it.
    Sample sample = new Sample();
    RabbitBus dyingBus = workerBus();
    worker(dyingBus, sample, new InMemoryResultStore());
    waitFor(() -> registry.find("echo").isPresent());
    ExecutableTool echo = registry.find("echo").orElseThrow();
    dyingBus.abort();
    waitFor(() -> registry.find("echo").isEmpty());
    Instant start = Instant.now();
    ToolResult result =
        dispatcher.dispatch(
            ToolSet.of(registry(echo), ToolProfiles.MAIN),
            ToolCall.of("echo", "{\"text\":\"gone\"}").withTimeout(Duration.ofSeconds(30)));
    assertThat(result.text()).contains("no worker of group '" + group + "' is running");
    assertThat(Duration.between(start, Instant.now()))
        .isLessThan(RemoteToolExecutor.RECONNECT_WAIT);
  }

  private static ToolRegistry registry(ExecutableTool tool) {
    ToolRegistry kept = new ToolRegistry();
    kept.register(tool);
    return kept;
  }

  private boolean connected(RabbitBus bus) {
    try {
      bus.consumerCount(ToolWorker.queue(group));
      return true;
    } catch (BusException e) {
      return false;
    }
  }

  @Test
  void aCallWaitingWhenItsHostsBusClosesEndsAtOnceAndIsNotSentAgain() throws Exception {
    Sample sample = new Sample();
    worker(workerBus(), sample, new InMemoryResultStore());
    waitFor(() -> registry.find("slow").isPresent());
    RabbitBus closing = RabbitBus.connect(vhost.uri());
    ToolCall call = ToolCall.of("slow", "{\"millis\":1500}").withTimeout(Duration.ofSeconds(30));
    ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    this.closing.add(threads::shutdownNow);
    Future<ToolResult> inFlight =
        threads.submit(
            () ->
                new RemoteToolExecutor(closing, group)
                    .execute(call, JsonMapper.shared().readTree("{\"millis\":1500}")));
    waitFor(() -> sample.runs.get() == 1);
    Instant closed = Instant.now();
    closing.close();
    ToolResult result = inFlight.get(20, TimeUnit.SECONDS);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(Duration.between(closed, Instant.now())).isLessThan(Duration.ofSeconds(2));
    await().during(Duration.ofSeconds(2)).until(() -> sample.runs.get() == 1);
  }

  @Test
  void aCallClaimedByAWorkerThatDiesIsTakenOverWhenItsLeaseLapses() throws Exception {
    Sample dying = new Sample();
    Sample survivor = new Sample();
    RabbitBus dyingBus = workerBus();
    RedisResultStore dyingStore = RedisResultStore.connect(REDIS);
    closing.add(dyingStore);
    worker(dyingBus, dying, dyingStore);
    ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    closing.add(threads::shutdownNow);
    waitFor(() -> registry.find("slow").isPresent());
    Future<ToolResult> inFlight =
        threads.submit(() -> call("slow", "{\"millis\":3000}", Duration.ofSeconds(60)));
    waitFor(() -> dying.runs.get() == 1);
    try (RedisResultStore survivorStore = RedisResultStore.connect(REDIS)) {
      worker(workerBus(), survivor, survivorStore);
      // The worker dies as a killed process does: its connection drops without an ack and its
      // claim is never renewed nor finished.
      Instant died = Instant.now();
      dyingStore.close();
      dyingBus.abort();
      ToolResult result = inFlight.get(40, TimeUnit.SECONDS);
      assertThat(result).isEqualTo(ToolResult.success("slept 3000"));
      // The default lease is 10 s: the survivor takes over once it lapses, then runs for 3 s.
      assertThat(Duration.between(died, Instant.now())).isLessThan(Duration.ofSeconds(18));
      assertThat(survivor.runs).hasValue(1);
    }
  }

  @Test
  void aRequestOverTheSizeLimitIsDeadLetteredOnceAnsweredAndTheWorkerKeepsConsuming()
      throws Exception {
    Sample sample = new Sample();
    worker(workerBus(), sample, new InMemoryResultStore());
    waitFor(() -> registry.find("echo").isPresent());
    String queue = ToolWorker.queue(group);
    String marker = "big-" + UUID.randomUUID();
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(vhost.uri());
    // Large enough to read the request back from the dead-letter queue.
    factory.setMaxInboundMessageBodySize(256 * 1024 * 1024);
    try (Connection raw = factory.newConnection("test-raw-oversized")) {
      Channel channel = raw.createChannel();
      String replyQueue = channel.queueDeclare().getQueue();
      LinkedBlockingQueue<String> replies = new LinkedBlockingQueue<>();
      channel.basicConsume(
          replyQueue,
          true,
          (tag, delivery) -> replies.add(new String(delivery.getBody(), StandardCharsets.UTF_8)),
          tag -> {});
      // A 70 MiB request: over amqp-client's default inbound limit of 64 MiB, under the broker's
      // max_message_size of 128 MiB, so the broker takes it and hands it to the worker.
      channel.basicPublish(
          "",
          queue,
          new AMQP.BasicProperties.Builder()
              .contentType("application/json")
              .correlationId(marker)
              .replyTo(replyQueue)
              .build(),
          oversizedEchoRequest(70 * 1024 * 1024));

      String reply = replies.poll(30, TimeUnit.SECONDS);
      assertThat(reply).as("a reply to the oversized request").isNotNull();
      ToolResult.Failure refused = (ToolResult.Failure) InvokeReply.parse(reply).result();
      assertThat(refused.error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
      assertThat(refused.error().message()).contains("bytes");

      // The worker stayed up: one consumer, throughout, and it still answers.
      await()
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(10))
          .until(() -> host.consumerCount(queue) == 1);
      assertThat(call("echo", "{\"text\":\"still here\"}", Duration.ofSeconds(10)).text())
          .isEqualTo("echo: still here");
      assertThat(sample.runs).hasValue(1);
      assertThat(replies.poll(500, TimeUnit.MILLISECONDS)).as("only one reply").isNull();

      // Dead-lettered once: taken back off the shared queue, others' letters left there.
      Channel dead = raw.createChannel();
      dead.basicQos(100);
      AtomicInteger ours = new AtomicInteger();
      dead.basicConsume(
          MessageBus.DEAD_LETTER_QUEUE,
          false,
          (tag, delivery) -> {
            if (marker.equals(delivery.getProperties().getCorrelationId())) {
              dead.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
              ours.incrementAndGet();
            }
          },
          tag -> {});
      await().atMost(Duration.ofSeconds(10)).until(() -> ours.get() == 1);
      await().during(Duration.ofMillis(500)).until(() -> ours.get() == 1);
      dead.close();
    }
  }

  // An echo request of about the given size, written straight as bytes: no 70 MiB string twice.
  private static byte[] oversizedEchoRequest(int size) {
    String deadline = Instant.now().plusSeconds(60).toString();
    byte[] head =
        ("{\"tool_call_id\":\"big\",\"tool_name\":\"echo\",\"deadline\":\""
                + deadline
                + "\",\"arguments\":{\"text\":\"")
            .getBytes(StandardCharsets.UTF_8);
    byte[] tail = "\"}}".getBytes(StandardCharsets.UTF_8);
    byte[] body = new byte[size];
    Arrays.fill(body, (byte) 'x');
    System.arraycopy(head, 0, body, 0, head.length);
    System.arraycopy(tail, 0, body, size - tail.length, tail.length);
    return body;
  }

  @Test
  void twoWorkersRacingForOneQueueWithASharedStoreRunARepeatedCallOnce() throws Exception {
    Sample first = new Sample();
    Sample second = new Sample();
    try (RedisResultStore one = RedisResultStore.connect(REDIS);
        RedisResultStore two = RedisResultStore.connect(REDIS)) {
      worker(workerBus(), first, one);
      worker(workerBus(), second, two);
      waitFor(() -> host.consumerCount(ToolWorker.queue(group)) == 2);
      ToolCall call = ToolCall.of("slow", "{\"millis\":300}").withTimeout(Duration.ofSeconds(20));
      Message request = Message.of(new InvokeRequest(call).toJson());
      List<Replies> all = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        all.add(host.request(ToolWorker.queue(group), request, call.deadline()));
      }
      for (Replies replies : all) {
        try (replies) {
          assertThat(InvokeReply.parse(replies.next(call.deadline()).orElseThrow().body()).result())
              .isEqualTo(ToolResult.success("slept 300"));
        }
      }
      assertThat(first.runs.get() + second.runs.get()).isEqualTo(1);
    }
  }

  private static void waitFor(java.util.function.BooleanSupplier condition) {
    Instant until = Instant.now().plusSeconds(15);
    while (!condition.getAsBoolean()) {
      if (Instant.now().isAfter(until)) {
        throw new AssertionError("condition not met within 15s");
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted");
      }
    }
  }
}
