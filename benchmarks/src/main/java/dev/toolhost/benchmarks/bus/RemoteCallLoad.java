package dev.toolhost.benchmarks.bus;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.rabbitmq.RabbitBus;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The remote call load drives echo calls over a real RabbitMQ and prints them beside their raw
 * baseline: a bare amqp-client request/reply (one reply queue, a correlation map, a bare echo
 * consumer, no confirms) with the same arguments, against a Toolhost remote call ({@link
 * RemoteToolExecutor} through the {@link ToolDispatcher} to a {@link ToolWorker}).
 *
 * <p>It measures sequential latency (p50, p99) and throughput with 16 and 64 calls in flight, each
 * in-flight call a virtual thread calling in a loop. Usage: {@code RemoteCallLoad [amqp-uri]
 * [calls] [seconds]}, defaults {@code amqp://guest:guest@127.0.0.1:5672/ 2000 5}. It deletes every
 * queue it declares.
 */
public final class RemoteCallLoad {

  private static final String ARGUMENTS =
      "{\"text\":\"" + "The quick brown fox jumps over the lazy dog. ".repeat(2) + "\"}";
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** A caller makes one echo call and waits for its answer. */
  @FunctionalInterface
  interface Caller {
    void call() throws Exception;
  }

  /** What one side measured. */
  record Measured(double p50Micros, double p99Micros, double perSecond16, double perSecond64) {}

  /** The echo tool the worker hosts. */
  public static final class Echo {
    /** Echoes the text; it never blocks, so it runs inline on the worker's handler thread. */
    @Tool(description = "Echoes the text.", inline = true)
    public String echo(@Param(description = "The text.") String text) {
      return text;
    }
  }

  private RemoteCallLoad() {}

  /** Runs the load and prints the table. */
  public static void main(String[] args) throws Exception {
    URI broker = URI.create(args.length > 0 ? args[0] : "amqp://guest:guest@127.0.0.1:5672/");
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    Duration window = Duration.ofSeconds(args.length > 2 ? Long.parseLong(args[2]) : 5);
    System.out.printf(
        "RabbitMQ %s, %d sequential calls after %d warm-up, %ds per throughput run, %d cores%n",
        RabbitBus.redact(broker),
        calls,
        calls / 2,
        window.toSeconds(),
        Runtime.getRuntime().availableProcessors());
    Measured raw;
    try (Raw baseline = new Raw(broker)) {
      raw = measure("raw amqp-client", baseline::call, calls, window);
    }
    Measured toolhost;
    try (Remote remote = new Remote(broker)) {
      toolhost = measure("toolhost remote", remote::call, calls, window);
    }
    System.out.println();
    System.out.println("| measure | raw amqp-client | Toolhost remote call | ratio | target |");
    System.out.println("| --- | ---: | ---: | ---: | --- |");
    row("sequential p50 (µs)", raw.p50Micros(), toolhost.p50Micros(), "≤ 1.3x");
    row("sequential p99 (µs)", raw.p99Micros(), toolhost.p99Micros(), "");
    row("throughput, 16 in flight (calls/s)", raw.perSecond16(), toolhost.perSecond16(), "≥ 0.7x");
    row("throughput, 64 in flight (calls/s)", raw.perSecond64(), toolhost.perSecond64(), "≥ 0.7x");
  }

  private static void row(String measure, double raw, double toolhost, String target) {
    System.out.printf(
        Locale.ROOT,
        "| %s | %.0f | %.0f | %.2fx | %s |%n",
        measure,
        raw,
        toolhost,
        toolhost / raw,
        target);
  }

  private static Measured measure(String name, Caller caller, int calls, Duration window)
      throws Exception {
    for (int i = 0; i < calls / 2; i++) {
      caller.call();
    }
    long[] nanos = new long[calls];
    for (int i = 0; i < calls; i++) {
      long start = System.nanoTime();
      caller.call();
      nanos[i] = System.nanoTime() - start;
    }
    Arrays.sort(nanos);
    double p50 = nanos[calls / 2] / 1_000.0;
    double p99 = nanos[(int) (calls * 0.99)] / 1_000.0;
    throughput(caller, 16, Duration.ofSeconds(1));
    double at16 = throughput(caller, 16, window);
    throughput(caller, 64, Duration.ofSeconds(1));
    double at64 = throughput(caller, 64, window);
    System.out.printf(
        Locale.ROOT,
        "%s: p50 %.0f µs, p99 %.0f µs, %.0f calls/s at 16, %.0f calls/s at 64%n",
        name,
        p50,
        p99,
        at16,
        at64);
    return new Measured(p50, p99, at16, at64);
  }

  private static double throughput(Caller caller, int inFlight, Duration window)
      throws InterruptedException {
    LongAdder done = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < inFlight; i++) {
      threads.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    while (!stop.get()) {
                      try {
                        caller.call();
                        done.increment();
                      } catch (Exception e) {
                        throw new IllegalStateException(e);
                      }
                    }
                  }));
    }
    long start = System.nanoTime();
    Thread.sleep(window);
    long count = done.sum();
    double seconds = (System.nanoTime() - start) / 1e9;
    stop.set(true);
    for (Thread thread : threads) {
      thread.join();
    }
    return count / seconds;
  }

  /** The baseline: bare amqp-client request/reply with a bare echo consumer. */
  static final class Raw implements AutoCloseable {
    private final Connection server;
    private final Connection client;
    private final Channel publishing;
    private final String queue = "bench.raw.echo." + UUID.randomUUID();
    private final String replyQueue;
    private final Map<String, CompletableFuture<byte[]>> waiting = new ConcurrentHashMap<>();

    Raw(URI broker) throws Exception {
      ConnectionFactory factory = new ConnectionFactory();
      factory.setUri(broker);
      if (broker.getPath() == null || broker.getPath().isEmpty() || broker.getPath().equals("/")) {
        factory.setVirtualHost("/");
      }
      server = factory.newConnection("bench-raw-echo");
      client = factory.newConnection("bench-raw-caller");
      Channel echo = server.createChannel();
      echo.queueDeclare(queue, false, false, true, null);
      echo.basicQos(64);
      echo.basicConsume(
          queue,
          false,
          new DefaultConsumer(echo) {
            @Override
            public void handleDelivery(
                String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                throws java.io.IOException {
              AMQP.BasicProperties reply =
                  new AMQP.BasicProperties.Builder()
                      .correlationId(properties.getCorrelationId())
                      .contentType("application/json")
                      .build();
              echo.basicPublish("", properties.getReplyTo(), reply, body);
              echo.basicAck(envelope.getDeliveryTag(), false);
            }
          });
      publishing = client.createChannel();
      Channel replies = client.createChannel();
      replyQueue = replies.queueDeclare().getQueue();
      replies.basicConsume(
          replyQueue,
          true,
          new DefaultConsumer(replies) {
            @Override
            public void handleDelivery(
                String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
              CompletableFuture<byte[]> future = waiting.remove(properties.getCorrelationId());
              if (future != null) {
                future.complete(body);
              }
            }
          });
    }

    void call() throws Exception {
      String id = UUID.randomUUID().toString();
      CompletableFuture<byte[]> future = new CompletableFuture<>();
      waiting.put(id, future);
      AMQP.BasicProperties properties =
          new AMQP.BasicProperties.Builder()
              .correlationId(id)
              .replyTo(replyQueue)
              .contentType("application/json")
              .deliveryMode(1)
              .build();
      synchronized (publishing) {
        publishing.basicPublish("", queue, properties, ARGUMENTS.getBytes(StandardCharsets.UTF_8));
      }
      byte[] answer = future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      if (answer.length == 0) {
        throw new IllegalStateException("empty reply");
      }
    }

    @Override
    public void close() throws Exception {
      try (Channel admin = server.createChannel()) {
        admin.queueDelete(queue);
      }
      client.close();
      server.close();
    }
  }

  /** A Toolhost remote call: dispatcher, remote executor, RabbitMQ, worker. */
  static final class Remote implements AutoCloseable {
    private final RabbitBus host;
    private final RabbitBus workerBus;
    private final ToolWorker worker;
    private final ToolDispatcher dispatcher = ToolDispatcher.create();
    private final ToolSet tools;
    private final String group = "bench-" + UUID.randomUUID().toString().substring(0, 8);

    Remote(URI broker) {
      host = RabbitBus.connect(broker);
      workerBus = RabbitBus.connect(broker);
      ToolRegistry hosted = new ToolRegistry();
      hosted.registerAll(MethodTools.of(new Echo(), "builtin:bench"));
      worker =
          new ToolWorker(
                  workerBus,
                  group,
                  hosted,
                  ToolDispatcher.create(),
                  new InMemoryResultStore(),
                  64,
                  Duration.ofSeconds(5))
              .start();
      ToolSpec echo = hosted.find("echo").orElseThrow().spec();
      ToolRegistry registry = new ToolRegistry();
      // Registered as RemoteTools registers an announced tool: inline, since the remote executor
      // bounds every wait by the call's deadline.
      registry.register(
          ExecutableTool.of(
                  new ToolSpec(
                      echo.name(),
                      echo.description(),
                      echo.parameters(),
                      RemoteToolExecutor.source(group),
                      echo.annotations()),
                  new RemoteToolExecutor(host, group))
              .runInline());
      tools = ToolSet.of(registry, ToolProfiles.MAIN);
    }

    void call() {
      ToolResult result =
          dispatcher.dispatch(tools, ToolCall.of("echo", ARGUMENTS).withTimeout(TIMEOUT));
      if (!(result instanceof ToolResult.Success)) {
        throw new IllegalStateException("the call failed: " + result);
      }
    }

    @Override
    public void close() {
      worker.close();
      host.deleteQueue(ToolWorker.queue(group));
      workerBus.close();
      host.close();
    }
  }
}
