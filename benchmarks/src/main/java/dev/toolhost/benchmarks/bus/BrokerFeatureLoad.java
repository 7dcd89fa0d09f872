package dev.toolhost.benchmarks.bus;

import dev.toolhost.benchmarks.bus.RemoteCallLoad.Feature;
import dev.toolhost.benchmarks.bus.RemoteCallLoad.Raw;
import dev.toolhost.rabbitmq.RabbitBus;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The broker feature load takes apart what Toolhost's protocol costs the broker: the bare
 * amqp-client request/reply of {@link RemoteCallLoad}, with none and each of the broker features
 * Toolhost asks for (publisher confirms first, since the protocol requires them), then those of a
 * worker call and those of a tool-service call (headers too), at 16 calls in flight, with the CPU
 * the broker and this JVM spent per call.
 *
 * <p>CPU is read from {@code /proc} (Linux): this process's ticks and those of every {@code
 * beam.smp} (the broker), so the broker must run on this machine. Usage: {@code BrokerFeatureLoad
 * [amqp-uri] [seconds] [rounds]}, defaults {@code amqp://guest:guest@127.0.0.1:5672/ 4 2}; every
 * variant is warmed up first, and the rounds alternate the variants.
 */
public final class BrokerFeatureLoad {

  private static final int IN_FLIGHT = 16;
  // /proc/[pid]/stat counts in clock ticks; Linux uses 100 per second on every common build.
  private static final double MICROS_PER_TICK = 10_000;

  private BrokerFeatureLoad() {}

  /** Runs every variant and prints the table. */
  public static void main(String[] args) throws Exception {
    URI broker = URI.create(args.length > 0 ? args[0] : "amqp://guest:guest@127.0.0.1:5672/");
    Duration window = Duration.ofSeconds(args.length > 1 ? Long.parseLong(args[1]) : 4);
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    Map<String, Set<Feature>> variants = new LinkedHashMap<>();
    variants.put("nothing (bare)", EnumSet.noneOf(Feature.class));
    variants.put("confirms", EnumSet.of(Feature.CONFIRMS));
    for (Feature feature : EnumSet.complementOf(EnumSet.of(Feature.CONFIRMS))) {
      variants.put("confirms, " + name(feature), EnumSet.of(Feature.CONFIRMS, feature));
    }
    variants.put("a worker call's (all but headers)", Feature.workerProtocol());
    variants.put("a tool-service call's (all)", EnumSet.allOf(Feature.class));
    System.out.printf(
        "RabbitMQ %s, %d in flight, %ds per variant, %d rounds, %d cores%n",
        RabbitBus.redact(broker),
        IN_FLIGHT,
        window.toSeconds(),
        rounds,
        Runtime.getRuntime().availableProcessors());
    Map<String, Raw> clients = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, Set<Feature>> variant : variants.entrySet()) {
        Raw raw = new Raw(broker, variant.getValue());
        clients.put(variant.getKey(), raw);
        for (int i = 0; i < 1_000; i++) {
          raw.call();
        }
        RemoteCallLoad.throughput(raw::call, IN_FLIGHT, Duration.ofSeconds(2));
      }
      System.out.println();
      System.out.println(
          "| raw client with | round | calls/s | broker CPU µs/call | JVM CPU µs/call |");
      System.out.println("| --- | ---: | ---: | ---: | ---: |");
      for (int round = 1; round <= rounds; round++) {
        for (Map.Entry<String, Raw> client : clients.entrySet()) {
          long brokerBefore = brokerTicks();
          long selfBefore = selfTicks();
          long start = System.nanoTime();
          double perSecond =
              RemoteCallLoad.throughput(client.getValue()::call, IN_FLIGHT, window).perSecond();
          double calls = perSecond * (System.nanoTime() - start) / 1e9;
          System.out.printf(
              Locale.ROOT,
              "| %s | %d | %.0f | %.0f | %.0f |%n",
              client.getKey(),
              round,
              perSecond,
              (brokerTicks() - brokerBefore) * MICROS_PER_TICK / calls,
              (selfTicks() - selfBefore) * MICROS_PER_TICK / calls);
        }
      }
    } finally {
      for (Raw raw : clients.values()) {
        raw.close();
      }
    }
  }

  private static String name(Feature feature) {
    return switch (feature) {
      case CONFIRMS -> "confirms";
      case MANDATORY -> "mandatory";
      case HEADERS -> "headers";
      case TTL -> "per-message TTL";
      case DEAD_LETTERING -> "durable queue with dead-lettering";
    };
  }

  static long selfTicks() throws IOException {
    return ticks(Path.of("/proc/self/stat"));
  }

  static long brokerTicks() throws IOException {
    long sum = 0;
    try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
      for (Path process : processes.toList()) {
        try {
          if (Files.readString(process.resolve("comm")).trim().equals("beam.smp")) {
            sum += ticks(process.resolve("stat"));
          }
        } catch (IOException e) {
          // Not a process, or one that ended while listed.
        }
      }
    }
    return sum;
  }

  // utime and stime: fields 14 and 15 of /proc/[pid]/stat, counted after the command's ")".
  private static long ticks(Path stat) throws IOException {
    String text = Files.readString(stat);
    String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }
}
