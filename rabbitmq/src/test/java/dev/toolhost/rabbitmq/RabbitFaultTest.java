package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.InvokeReply;
import dev.toolhost.bus.InvokeRequest;
import dev.toolhost.bus.Message;
import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.RemotePathContractTest.Sample;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.Replies;
import dev.toolhost.bus.ResultStore;
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
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Faults against the real broker; each checks that nothing is lost or executed twice. */
@Timeout(90)
class RabbitFaultTest {

  private static final URI REDIS = URI.create("redis://127.0.0.1:6379");

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private RabbitBus host;
  private String group;

  @BeforeEach
  void startHost() {
    host = RabbitBus.connect(RabbitBusTest.BROKER);
    group = "fault-" + UUID.randomUUID().toString().substring(0, 8);
    closing.add(new RemoteTools(host, registry, new ToolServices(host, registry)).start());
  }

  @AfterEach
  void stopAll() throws Exception {
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    host.deleteQueue(ToolWorker.queue(group));
    host.close();
  }

  private RabbitBus workerBus() {
    RabbitBus bus = RabbitBus.connect(RabbitBusTest.BROKER);
    closing.add(bus);
    return bus;
  }

  private ToolWorker worker(RabbitBus bus, Sample sample, ResultStore store) {
    ToolRegistry tools = new ToolRegistry();
    tools.registerAll(MethodTools.of(sample, "builtin:sample"));
    ToolWorker worker =
        new ToolWorker(
                bus, group, tools, ToolDispatcher.create(), store, 16, Duration.ofMillis(200))
            .start();
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
    ToolCall call = ToolCall.of("slow", "{\"millis\":800}").withTimeout(Duration.ofSeconds(20));
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
    worker(workerBus(), survivor, new InMemoryResultStore());
    dyingBus.abort();
    List<Message> got = replies.get(30, TimeUnit.SECONDS);
    assertThat(got).hasSize(1);
    assertThat(InvokeReply.parse(got.getFirst().body()).result())
        .isEqualTo(ToolResult.success("slept 800"));
    assertThat(survivor.runs).hasValue(1);
  }

  @Test
  void closingTheBrokersConnectionsEndsInFlightCallsAndCallsWorkAgainWithNoDoubleRun()
      throws Exception {
    Sample sample = new Sample();
    try (RedisResultStore store = RedisResultStore.connect(REDIS)) {
      worker(workerBus(), sample, store);
      waitFor(() -> registry.find("slow").isPresent());
      ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
      closing.add(threads::shutdownNow);
      Instant start = Instant.now();
      Future<ToolResult> inFlight =
          threads.submit(() -> call("slow", "{\"millis\":4000}", Duration.ofSeconds(10)));
      waitFor(() -> sample.runs.get() == 1);
      // rabbitmqctl can take seconds to start on a busy machine: the call must still be running.
      Process close =
          new ProcessBuilder("rabbitmqctl", "close_all_connections", "test").inheritIO().start();
      assertThat(close.waitFor(30, TimeUnit.SECONDS)).isTrue();
      ToolResult result = inFlight.get(15, TimeUnit.SECONDS);
      assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
      assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(10));
      Instant until = Instant.now().plusSeconds(30);
      ToolResult again = call("echo", "{\"text\":\"back\"}", Duration.ofSeconds(5));
      while (again.isError() && Instant.now().isBefore(until)) {
        Thread.sleep(200);
        again = call("echo", "{\"text\":\"back\"}", Duration.ofSeconds(5));
      }
      assertThat(again.text()).isEqualTo("echo: back");
      Thread.sleep(4500);
      long slowRuns = sample.runs.get() - countEchoRuns(sample);
      assertThat(slowRuns)
          .as("the slow call ran once, even though it was redelivered")
          .isEqualTo(1);
    }
  }

  // Sample counts every tool together; echo calls succeeded at most once after recovery, and each
  // failed attempt never reached the worker or was answered from the store.
  private static long countEchoRuns(Sample sample) {
    return sample.runs.get() - 1;
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
