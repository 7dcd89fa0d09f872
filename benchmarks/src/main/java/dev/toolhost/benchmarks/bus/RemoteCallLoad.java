package dev.toolhost.benchmarks.bus;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.Message;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.Replies;
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
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * The remote call load drives echo calls over a real RabbitMQ and prints them beside their raw
 * baseline: a bare amqp-client request/reply (one reply queue, a correlation map, a bare echo
 * consumer, no confirms) with the same arguments, against a Toolhost remote call ({@link
 * RemoteToolExecutor} through the {@link ToolDispatcher} to a {@link ToolWorker}). A third side,
 * the raw client asking of the broker what Toolhost's protocol asks (publisher confirms among
 * them), shows how much of the gap is the broker's work rather than Toolhost's; a fourth,
 * Toolhost's own transport alone (a {@link RabbitBus} request answered by a bare echo consumer of
 * another {@code RabbitBus}: no dispatch path, no worker, no JSON of the protocol), splits what is
 * left between the transport and the layers above it.
 *
 * <p>It measures sequential latency (p50, p99) and throughput with 16 and 64 calls in flight, each
 * in-flight call a virtual thread calling in a loop. Both sides are set up first and warmed up with
 * one full round each; then the rounds alternate the sides, and the table gives the medians over
 * the rounds. Usage: {@code RemoteCallLoad [amqp-uri] [calls] [seconds] [rounds]}, defaults {@code
 * amqp://guest:guest@127.0.0.1:5672/ 2000 5 3}; with {@code -Dtoolhost.bench.toolhostOnly=true} it
 * runs the Toolhost side alone (for a profiler). Each throughput line also gives the CPU this
 * process and the broker ({@code beam.smp}, read from {@code /proc}) spent per call at 64 in
 * flight. It deletes every queue it declares.
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

  /** The rounds of each side, in the order the table prints them. */
  record Sides(
      List<Measured> raw, List<Measured> matched, List<Measured> bus, List<Measured> toolhost) {}

  /** Calls per second in a window, and the CPU this process and the broker spent per call. */
  record Throughput(double perSecond, double jvmMicrosPerCall, double brokerMicrosPerCall) {}

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
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
    System.out.printf(
        "RabbitMQ %s, %d sequential calls, %ds per throughput run, %d rounds after one warm-up"
            + " round, %d cores%n",
        RabbitBus.redact(broker),
        calls,
        window.toSeconds(),
        rounds,
        Runtime.getRuntime().availableProcessors());
    if (Boolean.getBoolean("toolhost.bench.toolhostOnly")) {
      // For a profiler: the Toolhost side alone, so that every sample is of its path.
      try (Remote remote = new Remote(broker)) {
        for (int round = 0; round <= rounds; round++) {
          measure(round == 0 ? "warm-up" : "round " + round, remote::call, calls, window);
        }
      }
      return;
    }
    try (Raw raw = new Raw(broker, EnumSet.noneOf(Feature.class));
        Raw matched = new Raw(broker, Feature.workerProtocol());
        Bus bus = new Bus(broker);
        Remote remote = new Remote(broker)) {
      // Every side warms up fully first: the Toolhost side has far more code for the JIT to
      // compile, and on two cores the compiler threads would otherwise eat into its measurement.
      measure("warm-up, raw amqp-client", raw::call, calls, window);
      measure("warm-up, raw with Toolhost's broker features", matched::call, calls, window);
      measure("warm-up, Toolhost's bus alone", bus::call, calls, window);
      measure("warm-up, toolhost remote", remote::call, calls, window);
      Sides sides =
          new Sides(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
      // Rounds alternate the sides, so that a change in the machine's load hits all alike.
      for (int round = 1; round <= rounds; round++) {
        String name = "round " + round + ", ";
        sides.raw().add(measure(name + "raw amqp-client", raw::call, calls, window));
        sides
            .matched()
            .add(
                measure(
                    name + "raw with Toolhost's broker features", matched::call, calls, window));
        sides.bus().add(measure(name + "Toolhost's bus alone", bus::call, calls, window));
        sides.toolhost().add(measure(name + "toolhost remote", remote::call, calls, window));
      }
      System.out.println();
      System.out.println(
          "Medians over the rounds; each ratio is of the medians, then each round's own ratio.");
      System.out.println();
      System.out.println(
          "| measure | raw amqp-client | raw, Toolhost's broker features | Toolhost's bus alone"
              + " | Toolhost remote call | Toolhost / raw | per round"
              + " | Toolhost / raw with its broker features | bus alone / raw with the features"
              + " | Toolhost / its bus alone | target (Toolhost / raw) |");
      System.out.println(
          "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |");
      Table table = new Table(sides);
      table.row("sequential p50 (µs)", Measured::p50Micros, "≤ 1.15x");
      table.row("sequential p99 (µs)", Measured::p99Micros, "");
      table.row("throughput, 16 in flight (calls/s)", Measured::perSecond16, "≥ 0.95x");
      table.row("throughput, 64 in flight (calls/s)", Measured::perSecond64, "≥ 0.95x");
    }
  }

  /** The rounds each side measured, printed as rows of medians and ratios. */
  private record Table(Sides sides) {
    void row(String measure, ToDoubleFunction<Measured> value, String target) {
      double raw = median(sides.raw(), value);
      double matched = median(sides.matched(), value);
      double bus = median(sides.bus(), value);
      double toolhost = median(sides.toolhost(), value);
      StringBuilder perRound = new StringBuilder();
      for (int i = 0; i < sides.raw().size(); i++) {
        perRound
            .append(i == 0 ? "" : " / ")
            .append(
                String.format(
                    Locale.ROOT,
                    "%.2fx",
                    value.applyAsDouble(sides.toolhost().get(i))
                        / value.applyAsDouble(sides.raw().get(i))));
      }
      System.out.printf(
          Locale.ROOT,
          "| %s | %.0f | %.0f | %.0f | %.0f | %.2fx | %s | %.2fx | %.2fx | %.2fx | %s |%n",
          measure,
          raw,
          matched,
          bus,
          toolhost,
          toolhost / raw,
          perRound,
          toolhost / matched,
          bus / matched,
          toolhost / bus,
          target);
    }
  }

  private static double median(List<Measured> measured, ToDoubleFunction<Measured> value) {
    double[] values = measured.stream().mapToDouble(value).sorted().toArray();
    int middle = values.length / 2;
    return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
  }

  private static Measured measure(String name, Caller caller, int calls, Duration window)
      throws Exception {
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
    Throughput at16 = throughput(caller, 16, window);
    throughput(caller, 64, Duration.ofSeconds(1));
    Throughput at64 = throughput(caller, 64, window);
    System.out.printf(
        Locale.ROOT,
        "%s: p50 %.0f µs, p99 %.0f µs, %.0f calls/s at 16, %.0f calls/s at 64"
            + " (CPU per call at 64: JVM %.0f µs, broker %.0f µs)%n",
        name,
        p50,
        p99,
        at16.perSecond(),
        at64.perSecond(),
        at64.jvmMicrosPerCall(),
        at64.brokerMicrosPerCall());
    return new Measured(p50, p99, at16.perSecond(), at64.perSecond());
  }

  static Throughput throughput(Caller caller, int inFlight, Duration window)
      throws InterruptedException, java.io.IOException {
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
    long first = done.sum();
    long jvm = BrokerFeatureLoad.selfTicks();
    long broker = BrokerFeatureLoad.brokerTicks();
    long start = System.nanoTime();
    Thread.sleep(window);
    long count = done.sum() - first;
    double seconds = (System.nanoTime() - start) / 1e9;
    double jvmMicros = (BrokerFeatureLoad.selfTicks() - jvm) * 10_000.0 / count;
    double brokerMicros = (BrokerFeatureLoad.brokerTicks() - broker) * 10_000.0 / count;
    stop.set(true);
    for (Thread thread : threads) {
      thread.join();
    }
    return new Throughput(count / seconds, jvmMicros, brokerMicros);
  }

  /** What Toolhost's protocol asks of the broker beyond a bare request/reply. */
  enum Feature {
    /** Requests published on a channel in confirm mode (the confirms are not waited for). */
    CONFIRMS,
    /** Requests published {@code mandatory}. */
    MANDATORY,
    /**
     * On requests the {@code id} and {@code toolhost_expires_at} headers, on replies the {@code id}
     * header: what tool-service traffic carries. Worker requests and replies go without.
     */
    HEADERS,
    /** A per-message TTL on requests. */
    TTL,
    /** A durable request queue that dead-letters to {@code toolhost.dead_letter}. */
    DEAD_LETTERING;

    /** What a Toolhost remote call to a worker asks of the broker: all but the headers. */
    static Set<Feature> workerProtocol() {
      return EnumSet.complementOf(EnumSet.of(HEADERS));
    }
  }

  /**
   * The baseline: bare amqp-client request/reply with a bare echo consumer, asking of the broker
   * the given features of Toolhost's protocol and nothing else. With a worker's: requests published
   * with confirms (not waited for) and {@code mandatory}, with a per-message TTL, to a durable
   * queue that dead-letters; with {@link Feature#HEADERS} too, the headers tool-service traffic
   * carries.
   */
  static final class Raw implements AutoCloseable {
    private final Set<Feature> features;
    private final Connection server;
    private final Connection client;
    private final Channel publishing;
    private final String queue = "bench.raw.echo." + UUID.randomUUID();
    private final String replyQueue;
    private final Map<String, CompletableFuture<byte[]>> waiting = new ConcurrentHashMap<>();

    Raw(URI broker, Set<Feature> features) throws Exception {
      this.features = Set.copyOf(features);
      ConnectionFactory factory = new ConnectionFactory();
      factory.setUri(broker);
      if (broker.getPath() == null || broker.getPath().isEmpty() || broker.getPath().equals("/")) {
        factory.setVirtualHost("/");
      }
      server = factory.newConnection("bench-raw-echo");
      client = factory.newConnection("bench-raw-caller");
      Channel echo = server.createChannel();
      if (features.contains(Feature.DEAD_LETTERING)) {
        echo.queueDeclare(
            queue, true, false, false, Map.of("x-dead-letter-exchange", "toolhost.dead_letter"));
      } else {
        echo.queueDeclare(queue, false, false, true, null);
      }
      echo.basicQos(64);
      echo.basicConsume(
          queue,
          false,
          new DefaultConsumer(echo) {
            @Override
            public void handleDelivery(
                String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                throws java.io.IOException {
              AMQP.BasicProperties.Builder builder =
                  new AMQP.BasicProperties.Builder()
                      .correlationId(properties.getCorrelationId())
                      .contentType("application/json");
              if (features.contains(Feature.HEADERS)) {
                builder.headers(Map.of("id", properties.getCorrelationId()));
              }
              AMQP.BasicProperties reply = builder.build();
              echo.basicPublish("", properties.getReplyTo(), reply, body);
              echo.basicAck(envelope.getDeliveryTag(), false);
            }
          });
      publishing = client.createChannel();
      if (features.contains(Feature.CONFIRMS)) {
        publishing.confirmSelect();
      }
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
      AMQP.BasicProperties.Builder builder =
          new AMQP.BasicProperties.Builder()
              .correlationId(id)
              .replyTo(replyQueue)
              .contentType("application/json")
              .deliveryMode(1);
      if (features.contains(Feature.HEADERS)) {
        long expiresAt = System.currentTimeMillis() + TIMEOUT.toMillis();
        builder.headers(Map.of("id", id, "toolhost_expires_at", Long.toString(expiresAt)));
      }
      if (features.contains(Feature.TTL)) {
        builder.expiration(Long.toString(TIMEOUT.toMillis()));
      }
      AMQP.BasicProperties properties = builder.build();
      synchronized (publishing) {
        publishing.basicPublish(
            "",
            queue,
            features.contains(Feature.MANDATORY),
            properties,
            ARGUMENTS.getBytes(StandardCharsets.UTF_8));
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

  /**
   * Toolhost's transport alone: a {@link RabbitBus} request to a durable queue that dead-letters
   * (as a worker's is declared), published as a remote call's is (confirmed, {@code mandatory},
   * expiring at its deadline), answered by a bare echo consumer of a second {@code RabbitBus} that
   * replies then acknowledges as a worker does. What the remote call adds over it is the dispatch
   * path on both sides, the protocol's JSON, the call key and the result store.
   */
  static final class Bus implements AutoCloseable {
    private final RabbitBus host;
    private final RabbitBus echoBus;
    private final String queue = "bench.bus.echo." + UUID.randomUUID();

    Bus(URI broker) {
      host = RabbitBus.connect(broker);
      echoBus = RabbitBus.connect(broker);
      echoBus.declareQueue(queue);
      echoBus.consume(
          queue,
          64,
          delivery -> echoBus.replyThenAck(delivery, Message.of(delivery.message().body())));
    }

    void call() throws InterruptedException {
      Instant deadline = Instant.now().plus(TIMEOUT);
      try (Replies replies = host.request(queue, Message.of(ARGUMENTS), deadline)) {
        if (replies.next(deadline).isEmpty()) {
          throw new IllegalStateException("no reply before the deadline");
        }
      }
    }

    @Override
    public void close() {
      host.deleteQueue(queue);
      echoBus.close();
      host.close();
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
