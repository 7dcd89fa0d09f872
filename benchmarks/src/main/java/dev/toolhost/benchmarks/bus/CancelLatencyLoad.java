package dev.toolhost.benchmarks.bus;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.toolhost.bus.InMemoryBus;
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
import dev.toolhost.rabbitmq.RabbitBus;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;

/**
 * The cancel latency load measures the time from a caller's cancel (the interruption of the thread
 * that dispatches a remote call) to the tool on the worker seeing it (its thread interrupted), over
 * the bus, beside its raw baseline: a bare amqp-client publish to a fanout exchange and its
 * delivery to a consumer on another connection of the same broker, the one hop a cancel takes.
 *
 * <p>Sides: the raw publish → consume; a Toolhost remote call over RabbitMQ ({@link
 * dev.toolhost.bus.RemoteToolExecutor} through the {@link ToolDispatcher} to a {@link ToolWorker}
 * on a connection of its own), cancelled once its tool runs; the same over the in-memory bus. Each
 * sample is one call, cancelled after its tool started; the table gives p50 and p99 in
 * microseconds. Usage: {@code CancelLatencyLoad [amqp-uri] [samples]}, defaults {@code
 * amqp://guest:guest@127.0.0.1:5672/ 300}. It deletes every queue it declares.
 */
public final class CancelLatencyLoad {

  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  /** The tool the worker hosts: it sleeps until interrupted, and says when that was. */
  public static final class Sleeper {
    final SynchronousQueue<Long> started = new SynchronousQueue<>();
    final LinkedBlockingQueue<Long> interrupted = new LinkedBlockingQueue<>();

    /** Sleeps for a minute unless interrupted. */
    @Tool(description = "Sleeps for a minute unless stopped.", timeoutSeconds = 120)
    public String sleep(@Param(description = "A label.") String label) throws InterruptedException {
      started.put(System.nanoTime());
      try {
        Thread.sleep(TIMEOUT);
      } catch (InterruptedException e) {
        interrupted.add(System.nanoTime());
        throw e;
      }
      return "slept";
    }
  }

  private CancelLatencyLoad() {}

  /** Runs the load and prints the table. */
  public static void main(String[] args) throws Exception {
    URI broker = URI.create(args.length > 0 ? args[0] : "amqp://guest:guest@127.0.0.1:5672/");
    int samples = args.length > 1 ? Integer.parseInt(args[1]) : 300;
    System.out.printf(
        "RabbitMQ %s, %d samples a side after %d warm-up samples, %d cores%n",
        RabbitBus.redact(broker), samples, samples / 2, Runtime.getRuntime().availableProcessors());
    long[] raw = raw(broker, samples / 2, samples);
    long[] rabbit;
    try (MessageBus host = RabbitBus.connect(broker);
        MessageBus worker = RabbitBus.connect(broker)) {
      rabbit = toolhost(host, worker, samples / 2, samples);
    }
    long[] memory;
    try (InMemoryBus bus = new InMemoryBus()) {
      memory = toolhost(bus, bus, samples / 2, samples);
    }
    System.out.println();
    System.out.println("| path | p50 µs | p99 µs |");
    System.out.println("| --- | ---: | ---: |");
    row("raw amqp-client publish → consume (fanout, another connection)", raw);
    row("Toolhost remote call over RabbitMQ: cancel → tool interrupted", rabbit);
    row("Toolhost remote call over the in-memory bus: cancel → tool interrupted", memory);
  }

  private static void row(String name, long[] nanos) {
    System.out.printf(
        "| %s | %.0f | %.0f |%n", name, percentile(nanos, 0.50), percentile(nanos, 0.99));
  }

  static double percentile(long[] nanos, double p) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)] / 1000.0;
  }

  /** The raw side: one fanout exchange, a consumer on another connection, one message a sample. */
  static long[] raw(URI broker, int warmUp, int samples) throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(broker);
    if (broker.getPath() == null || broker.getPath().isEmpty() || broker.getPath().equals("/")) {
      factory.setVirtualHost("/");
    }
    String exchange = "bench.cancel." + UUID.randomUUID();
    LinkedBlockingQueue<Long> delivered = new LinkedBlockingQueue<>();
    try (Connection publishing = factory.newConnection();
        Connection consuming = factory.newConnection()) {
      Channel publisher = publishing.createChannel();
      publisher.exchangeDeclare(exchange, BuiltinExchangeType.FANOUT, false, true, null);
      Channel consumer = consuming.createChannel();
      String queue = consumer.queueDeclare().getQueue();
      consumer.queueBind(queue, exchange, "");
      consumer.basicConsume(
          queue,
          true,
          new DefaultConsumer(consumer) {
            @Override
            public void handleDelivery(
                String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
              delivered.add(System.nanoTime());
            }
          });
      byte[] body = "{\"type\":\"cancel\",\"call_key\":\"x\"}".getBytes();
      long[] nanos = new long[samples];
      for (int i = -warmUp; i < samples; i++) {
        long start = System.nanoTime();
        publisher.basicPublish(exchange, "", null, body);
        long end = delivered.take();
        if (i >= 0) {
          nanos[i] = end - start;
        }
      }
      publisher.exchangeDelete(exchange);
      return nanos;
    }
  }

  /** A Toolhost side: a worker of the sleeping tool, and calls to it cancelled once it runs. */
  static long[] toolhost(MessageBus host, MessageBus workerBus, int warmUp, int samples)
      throws Exception {
    String group = "bench-cancel-" + UUID.randomUUID().toString().substring(0, 8);
    Sleeper sleeper = new Sleeper();
    ToolRegistry hosted = new ToolRegistry();
    hosted.registerAll(MethodTools.of(sleeper, "builtin:bench"));
    ToolRegistry registry = new ToolRegistry();
    ToolDispatcher dispatcher = ToolDispatcher.create();
    try (RemoteTools remote = new RemoteTools(host, registry, new ToolServices(host, registry));
        ToolWorker worker =
            new ToolWorker(
                workerBus,
                group,
                hosted,
                ToolDispatcher.create(),
                new InMemoryResultStore(),
                16,
                Duration.ofSeconds(5))) {
      remote.start();
      worker.start();
      Instant until = Instant.now().plusSeconds(20);
      while (registry.find("sleep").isEmpty()) {
        if (Instant.now().isAfter(until)) {
          throw new IllegalStateException("The worker's tool was not announced in 20 s.");
        }
        Thread.sleep(10);
      }
      ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
      long[] nanos = new long[samples];
      for (int i = -warmUp; i < samples; i++) {
        Thread caller =
            Thread.ofVirtual()
                .start(
                    () ->
                        dispatcher.dispatch(
                            tools, ToolCall.of("sleep", "{\"label\":\"x\"}").withTimeout(TIMEOUT)));
        Long started = sleeper.started.poll(20, TimeUnit.SECONDS);
        if (started == null) {
          throw new IllegalStateException("The tool did not start in 20 s.");
        }
        long cancelled = System.nanoTime();
        caller.interrupt();
        Long seen = sleeper.interrupted.poll(20, TimeUnit.SECONDS);
        if (seen == null) {
          throw new IllegalStateException("The tool did not see its cancel in 20 s.");
        }
        caller.join();
        if (i >= 0) {
          nanos[i] = seen - cancelled;
        }
      }
      return nanos;
    } finally {
      host.deleteQueue(ToolWorker.queue(group));
    }
  }
}
