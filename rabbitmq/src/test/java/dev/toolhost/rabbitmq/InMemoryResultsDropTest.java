package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.bus.InMemoryResultStore;
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
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker with in-memory results (the default) through broker drops: calls in flight while the
 * broker closes every connection are redelivered to the same worker process, which still holds
 * their runs or their results, and must answer them from those, never run them again (issue 30,
 * item 3).
 *
 * <p>{@code -Dtoolhost.drop.workers=2} measures what the worker's start warning is about: two
 * workers of one group, each with results of its own, where a call redelivered to the other worker
 * runs again there. It prints the counts and asserts only that no call is lost. {@code
 * -Dtoolhost.drop.calls} and {@code -Dtoolhost.drop.closes} set the number of calls (300 by
 * default) and of drops (2).
 */
@Timeout(180)
class InMemoryResultsDropTest {

  private static final int IN_FLIGHT = 16;

  private final String group = "drop-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<AutoCloseable> closing = new ArrayList<>();
  // The test's own: its broker closes every connection, and only this test's.
  private TestVhost vhost;

  /**
   * Sleeps, counting how often each call (one token per call, so per call key) started and ended.
   */
  public static final class Work {
    final Map<String, AtomicInteger> started = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> finished = new ConcurrentHashMap<>();

    @Tool(description = "Sleeps, counting how often each token ran.")
    public String work(
        @Param(description = "One per call.") String token,
        @Param(description = "How long, in ms.") int millis)
        throws InterruptedException {
      started.computeIfAbsent(token, k -> new AtomicInteger()).incrementAndGet();
      Thread.sleep(millis);
      finished.computeIfAbsent(token, k -> new AtomicInteger()).incrementAndGet();
      return "worked " + token;
    }
  }

  @BeforeEach
  void makeVhost() throws InterruptedException {
    vhost = TestVhost.create();
  }

  @AfterEach
  void stopAll() throws Exception {
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    vhost.close(); // and the group's queue with it
  }

  @Test
  void callsInFlightWhenTheBrokerDropsEveryConnectionFinishOnceOnAWorkerWithInMemoryResults()
      throws Exception {
    int calls = Integer.getInteger("toolhost.drop.calls", 300);
    int closes = Integer.getInteger("toolhost.drop.closes", 2);
    RabbitBus host = RabbitBus.connect(vhost.uri());
    closing.add(host);
    ToolRegistry registry = new ToolRegistry();
    closing.add(new RemoteTools(host, registry, new ToolServices(host, registry)).start());
    Work work = new Work();
    ToolRegistry hosted = new ToolRegistry();
    hosted.registerAll(MethodTools.of(work, "builtin:drop"));
    int workerCount = Integer.getInteger("toolhost.drop.workers", 1);
    for (int w = 0; w < workerCount; w++) {
      RabbitBus workerBus = RabbitBus.connect(vhost.uri());
      closing.add(workerBus);
      InMemoryResultStore results = new InMemoryResultStore();
      closing.add(results);
      closing.add(
          new ToolWorker(
                  workerBus,
                  group,
                  hosted,
                  ToolDispatcher.create(),
                  results,
                  IN_FLIGHT,
                  Duration.ofSeconds(1))
              .start());
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                registry.find("work").isPresent()
                    && host.consumerCount(ToolWorker.queue(group)) == workerCount);

    ToolDispatcher dispatcher = ToolDispatcher.create();
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    Random random = new Random(30);
    Semaphore inFlight = new Semaphore(IN_FLIGHT * workerCount);
    List<Future<ToolResult>> outcomes = new ArrayList<>();
    List<String> tokens = new ArrayList<>();
    AtomicInteger drops = new AtomicInteger();
    try (ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<?> faults =
          callers.submit(
              () -> {
                // Each drop once the one before has recovered and calls finish again.
                for (int i = 0; i < closes; i++) {
                  Thread.sleep(2_000);
                  int before = work.finished.size();
                  await().atMost(Duration.ofSeconds(30)).until(() -> work.finished.size() > before);
                  vhost.closeAllConnections("drop test");
                  drops.incrementAndGet();
                  System.out.println(Instant.now() + " the broker closed every connection");
                }
                return null;
              });
      // At least the calls asked for, and more while drops are still to come: on a busy machine
      // rabbitmqctl can take long enough that the first calls have all finished before the last
      // drop, which then would find no call in flight.
      for (int i = 0; i < calls || (drops.get() < closes && !faults.isDone()); i++) {
        String token = "t" + i;
        int millis = 300 + random.nextInt(900);
        tokens.add(token);
        inFlight.acquire();
        outcomes.add(
            callers.submit(
                () -> {
                  try {
                    return dispatcher.dispatch(
                        tools,
                        ToolCall.of(
                                "work", "{\"token\":\"" + token + "\",\"millis\":" + millis + "}")
                            .withTimeout(Duration.ofSeconds(60)));
                  } finally {
                    inFlight.release();
                  }
                }));
      }
      faults.get(120, TimeUnit.SECONDS);
    }
    int lost = 0;
    int startedTwice = 0;
    int finishedTwice = 0;
    List<String> examples = new ArrayList<>();
    for (int i = 0; i < tokens.size(); i++) {
      String token = tokens.get(i);
      ToolResult result = outcomes.get(i).get();
      if (!result.equals(ToolResult.success("worked " + token))) {
        lost++;
        examples.add(token + ": " + result.text());
      }
      if (count(work.started, token) > 1) {
        startedTwice++;
      }
      if (count(work.finished, token) > 1) {
        finishedTwice++;
        examples.add(token + " finished " + count(work.finished, token) + " times");
      }
    }
    String line =
        String.format(
            "IN_MEMORY_DROP workers=%d calls=%d in_flight=%d drops=%d lost=%d started_twice=%d"
                + " finished_twice=%d",
            workerCount,
            tokens.size(),
            IN_FLIGHT * workerCount,
            drops.get(),
            lost,
            startedTwice,
            finishedTwice);
    System.out.println(line);
    assertThat(drops).hasValue(closes);
    // What each lost call answered, so that a failure says how it was lost.
    assertThat(lost).as(line + " " + examples.stream().limit(10).toList()).isZero();
    if (workerCount > 1) {
      return;
    }
    assertThat(examples.stream().limit(10).toList()).as(line).isEmpty();
    assertThat(finishedTwice).as(line).isZero();
    assertThat(startedTwice).as(line).isZero();
  }

  private static int count(Map<String, AtomicInteger> counts, String token) {
    AtomicInteger count = counts.get(token);
    return count == null ? 0 : count.get();
  }
}
