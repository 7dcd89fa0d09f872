package dev.toolhost.benchmarks.load;

import dev.toolhost.benchmarks.AddTool;
import dev.toolhost.host.HostConfig;
import dev.toolhost.server.Host;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A load run finds the ceilings of a host's HTTP API ({@code POST /v1/tools/add_inline/invoke}) and
 * its MCP gateway ({@code tools/call} of the same tool over many sessions) beside Jetty's answer to
 * {@code /healthz} of the same host, on the same machine, in one run.
 *
 * <p>It starts the host in this process, opens the MCP sessions, warms every target up, then climbs
 * a ladder of connections (1, 2, 4, ... up to {@code --max-connections}): at each rung it drives
 * the three targets in turn with {@link Wrk} for {@code --seconds} each; past {@code
 * --min-connections}, a target leaves the ladder once two rungs in a row have failed to beat its
 * best by {@code --rise}. A target's ceiling is its best rung. At each rung it reads the cores wrk,
 * the host (this process) and everything else on the machine kept busy. Last, at each target's
 * ceiling, it runs two wrk processes at once, each with half the connections, alternated twice with
 * one wrk with all of them: when wrk were the limit, two would answer more than one. The host's CPU
 * per request (its cores over its rate) is printed beside the rate: it is steadier than the rate on
 * a machine that others share.
 *
 * <p>It prints markdown tables: every rung, the ceilings with their ratio to {@code /healthz}'s,
 * and the two-driver check. {@code --host-cpus} and {@code --driver-cpus} pin the host and wrk to
 * CPUs ({@code taskset} lists) to show the split. Run it with {@code benchmarks/load.sh}.
 */
public final class LoadRun {

  /** What a run is told on its command line. */
  record Options(
      int seconds,
      int warmupSeconds,
      int minConnections,
      int maxConnections,
      int sessions,
      int driverThreads,
      double rise,
      Optional<String> hostCpus,
      Optional<String> driverCpus) {

    static Options parse(String[] args) {
      int seconds = 5;
      int warmup = 10;
      int min = 64;
      int max = 1024;
      int sessions = 1000;
      int threads = 2;
      double rise = 0.05;
      Optional<String> hostCpus = Optional.empty();
      Optional<String> driverCpus = Optional.empty();
      for (int i = 0; i < args.length; i += 2) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(args[i] + " needs a value.");
        }
        String value = args[i + 1];
        switch (args[i]) {
          case "--seconds" -> seconds = Integer.parseInt(value);
          case "--warmup" -> warmup = Integer.parseInt(value);
          case "--min-connections" -> min = Integer.parseInt(value);
          case "--max-connections" -> max = Integer.parseInt(value);
          case "--sessions" -> sessions = Integer.parseInt(value);
          case "--driver-threads" -> threads = Integer.parseInt(value);
          case "--rise" -> rise = Double.parseDouble(value);
          case "--host-cpus" -> hostCpus = Optional.of(value);
          case "--driver-cpus" -> driverCpus = Optional.of(value);
          default ->
              throw new IllegalArgumentException(
                  "Unknown option "
                      + args[i]
                      + ". Options: --seconds N, --warmup N, --min-connections N,"
                      + " --max-connections N, --sessions N,"
                      + " --driver-threads N, --rise FRACTION, --host-cpus LIST, --driver-cpus"
                      + " LIST");
        }
      }
      return new Options(seconds, warmup, min, max, sessions, threads, rise, hostCpus, driverCpus);
    }
  }

  /** One rung of one target: what wrk measured, and who kept the machine's cores busy meanwhile. */
  record Step(
      Target target, int connections, Wrk.Result result, double hostCores, double machineCores) {

    double otherCores() {
      return machineCores - hostCores - result.cores();
    }

    /** The host's CPU per answered request, in microseconds: steadier than req/s on a busy box. */
    double hostMicrosPerRequest() {
      return hostCores * 1e6 / result.perSecond();
    }
  }

  private LoadRun() {}

  public static void main(String[] args) throws Exception {
    Options options = Options.parse(args);
    options.hostCpus().ifPresent(LoadRun::pinThisProcess);
    Path directory = Files.createTempDirectory("toolhost-load");
    String loadBefore = Cpu.loadAverage();
    int cpus = Cpu.machineCpus();
    try (Host host = start(directory)) {
      URI base = host.uri();
      check(base);
      Path sessionFile = directory.resolve("sessions.txt");
      McpSessions.open(base.resolve(Target.MCP.path()), options.sessions(), sessionFile);
      Wrk wrk =
          new Wrk(base, directory, sessionFile, options.driverThreads(), options.driverCpus());
      System.out.printf(
          "Load run: %d CPUs, load average %s at the start; host %s, wrk %s (%d threads at most);"
              + " %d MCP sessions; %d s a step, %d s of warm-up per target.%n",
          cpus,
          loadBefore,
          options.hostCpus().map(list -> "on CPUs " + list).orElse("unpinned"),
          options.driverCpus().map(list -> "on CPUs " + list).orElse("unpinned"),
          options.driverThreads(),
          options.sessions(),
          options.seconds(),
          options.warmupSeconds());
      for (Target target : Target.values()) {
        wrk.run(target, 64, options.warmupSeconds());
      }
      Map<Target, List<Step>> ladders = climb(wrk, options, cpus);
      List<String[]> twoDrivers = twoDrivers(wrk, options, ladders);
      print(ladders, twoDrivers);
      System.out.printf(
          "%nLoad average %s at the start, %s at the end.%n", loadBefore, Cpu.loadAverage());
    } finally {
      try (Stream<Path> files = Files.walk(directory)) {
        for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(file);
        }
      }
    }
  }

  /** Starts a host on a free loopback port, with the add tool registered. */
  static Host start(Path directory) {
    Host host =
        Host.builder(HostConfig.parse("http:\n  port: 0\n", "toolhost.yaml", directory)).build();
    AddTool.register(host.registry());
    host.start();
    return host;
  }

  // Every target answers as it should before it is timed: a fast wrong answer is no ceiling.
  private static void check(URI base) throws IOException, InterruptedException {
    try (HttpClient client = HttpClient.newHttpClient()) {
      HttpResponse<String> health =
          client.send(
              HttpRequest.newBuilder(base.resolve(Target.HEALTHZ.path())).build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> invoke =
          client.send(
              HttpRequest.newBuilder(base.resolve(Target.INVOKE.path()))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"arguments\": " + AddTool.ARGUMENTS + "}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (health.statusCode() != 200 || !invoke.body().contains("\"content\":\"5\"")) {
        throw new IllegalStateException(
            "The host answered /healthz "
                + health.statusCode()
                + " and the invoke "
                + invoke.body());
      }
    }
  }

  private static Map<Target, List<Step>> climb(Wrk wrk, Options options, int cpus) {
    Map<Target, List<Step>> ladders = new EnumMap<>(Target.class);
    Map<Target, Integer> stalls = new EnumMap<>(Target.class);
    for (Target target : Target.values()) {
      ladders.put(target, new ArrayList<>());
      stalls.put(target, 0);
    }
    for (int connections = 1; connections <= options.maxConnections(); connections *= 2) {
      for (Target target : Target.values()) {
        if (stalls.get(target) >= 2 && connections > options.minConnections()) {
          continue;
        }
        double best = best(ladders.get(target)).map(s -> s.result().perSecond()).orElse(0.0);
        Cpu before = Cpu.now();
        Wrk.Result result = wrk.run(target, connections, options.seconds());
        Cpu after = Cpu.now();
        Step step =
            new Step(
                target,
                connections,
                result,
                after.processCores(before),
                after.machineCores(before, cpus));
        ladders.get(target).add(step);
        System.out.printf(
            Locale.ROOT,
            "  %-7s %5d connections: %,10.0f req/s, p50 %.2f ms, p99 %.2f ms, wrk %.2f cores,"
                + " host %.2f, others %.2f%n",
            target.label(),
            connections,
            result.perSecond(),
            result.p50Micros() / 1000.0,
            result.p99Micros() / 1000.0,
            result.cores(),
            step.hostCores(),
            step.otherCores());
        boolean rose = result.perSecond() > best * (1 + options.rise());
        stalls.put(target, rose ? 0 : stalls.get(target) + 1);
      }
      if (connections >= options.minConnections()
          && stalls.values().stream().allMatch(count -> count >= 2)) {
        break;
      }
    }
    return ladders;
  }

  private static Optional<Step> best(List<Step> ladder) {
    return ladder.stream().max(Comparator.comparingDouble(s -> s.result().perSecond()));
  }

  // At each ceiling, one wrk with all the connections beside two wrk with half each, at once;
  // alternated twice, so that a burst of the machine's other work does not fall on one side only.
  private static List<String[]> twoDrivers(
      Wrk wrk, Options options, Map<Target, List<Step>> ladders) {
    List<String[]> rows = new ArrayList<>();
    for (Target target : Target.values()) {
      int connections = Math.max(2, best(ladders.get(target)).orElseThrow().connections());
      double one = 0;
      double oneCores = 0;
      double two = 0;
      double twoCores = 0;
      for (int round = 0; round < 2; round++) {
        Wrk.Result alone = wrk.run(target, connections, options.seconds());
        one += alone.perSecond() / 2;
        oneCores += alone.cores() / 2;
        Process first = wrk.start(target, connections / 2, options.seconds());
        Process second = wrk.start(target, connections - connections / 2, options.seconds());
        Wrk.Result a = wrk.finish(first);
        Wrk.Result b = wrk.finish(second);
        two += (a.perSecond() + b.perSecond()) / 2;
        twoCores += (a.cores() + b.cores()) / 2;
      }
      rows.add(
          new String[] {
            target.label(),
            Integer.toString(connections),
            format("%,.0f", one),
            format("%.2f", oneCores),
            format("%,.0f", two),
            format("%.2f", twoCores),
            format("%.2f", two / one)
          });
    }
    return rows;
  }

  private static void print(Map<Target, List<Step>> ladders, List<String[]> twoDrivers) {
    Step floor = best(ladders.get(Target.HEALTHZ)).orElseThrow();
    System.out.println();
    System.out.println(
        "| connections | target | req/s | vs /healthz | p50 ms | p99 ms | errors | wrk cores |"
            + " host cores | host µs/req | others' cores |");
    System.out.println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    List<Step> steps = new ArrayList<>();
    ladders.values().forEach(steps::addAll);
    steps.sort(Comparator.comparingInt(Step::connections).thenComparing(s -> s.target().ordinal()));
    for (Step step : steps) {
      Optional<Step> health =
          ladders.get(Target.HEALTHZ).stream()
              .filter(s -> s.connections() == step.connections())
              .findFirst();
      System.out.println(
          row(
              Integer.toString(step.connections()),
              step.target().label(),
              format("%,.0f", step.result().perSecond()),
              health.map(h -> format("%.2f", ratio(step, h))).orElse(""),
              format("%.2f", step.result().p50Micros() / 1000.0),
              format("%.2f", step.result().p99Micros() / 1000.0),
              Long.toString(step.result().errors()),
              format("%.2f", step.result().cores()),
              format("%.2f", step.hostCores()),
              format("%.1f", step.hostMicrosPerRequest()),
              format("%.2f", step.otherCores())));
    }
    System.out.println();
    System.out.println(
        "| target | ceiling req/s | at connections | ratio to /healthz | p50 ms | p99 ms | wrk"
            + " cores | host cores | host µs/req | others' cores |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (Target target : Target.values()) {
      Step ceiling = best(ladders.get(target)).orElseThrow();
      System.out.println(
          row(
              target.label(),
              format("%,.0f", ceiling.result().perSecond()),
              Integer.toString(ceiling.connections()),
              format("%.2f", ratio(ceiling, floor)),
              format("%.2f", ceiling.result().p50Micros() / 1000.0),
              format("%.2f", ceiling.result().p99Micros() / 1000.0),
              format("%.2f", ceiling.result().cores()),
              format("%.2f", ceiling.hostCores()),
              format("%.1f", ceiling.hostMicrosPerRequest()),
              format("%.2f", ceiling.otherCores())));
    }
    System.out.println();
    System.out.println(
        "| target | connections | one wrk req/s | its cores | two wrk at once, req/s | their"
            + " cores | two / one |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|");
    for (String[] cells : twoDrivers) {
      System.out.println(row(cells));
    }
  }

  private static double ratio(Step step, Step floor) {
    return step.result().perSecond() / floor.result().perSecond();
  }

  private static String row(String... cells) {
    return "| " + String.join(" | ", cells) + " |";
  }

  private static String format(String pattern, double value) {
    return String.format(Locale.ROOT, pattern, value);
  }

  // Every thread of this process, and so every thread it starts later, runs on the CPUs listed.
  private static void pinThisProcess(String cpus) {
    try {
      Process taskset =
          new ProcessBuilder(
                  "taskset", "-a", "-p", "-c", cpus, Long.toString(ProcessHandle.current().pid()))
              .redirectErrorStream(true)
              .start();
      String output =
          new String(
              taskset.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (taskset.waitFor() != 0) {
        throw new IllegalStateException("taskset failed: " + output);
      }
    } catch (IOException e) {
      throw new IllegalStateException("Cannot run taskset: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while pinning the host.", e);
    }
  }
}
