package dev.toolhost.benchmarks;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The report runs {@link DispatchBenchmark} with the JMH runner and prints its results as a
 * Markdown table, with the ratio of the full path to the raw baseline for 1 and for 64 callers.
 *
 * <p>Arguments are JMH's own command line ({@code -f}, {@code -wi}, {@code -prof gc}, ...); without
 * them it runs one fork of 15 one-second warmup and 5 one-second measured iterations. Beside JMH's
 * score (the mean) and error it shows the median of the iterations, which one disturbed iteration
 * cannot drag; the target counts as met or missed outright only when the band of the scores' ratio
 * and the medians' ratio lie on the same side of it, and otherwise the verdict leans on the medians
 * and says so. When the gc profiler is on, the table shows the bytes allocated per call. It also
 * prints the load average before and after, because on a shared machine that is the first thing to
 * read the numbers by.
 */
public final class Report {

  /** The target: the full path costs at most this many times the raw baseline. */
  static final double TARGET_RATIO = 2.0;

  private Report() {}

  public static void main(String[] args) throws CommandLineOptionException, RunnerException {
    CommandLineOptions command = new CommandLineOptions(args);
    OptionsBuilder options = new OptionsBuilder();
    options.parent(command);
    options.include(DispatchBenchmark.class.getName() + "\\.");
    // Defaults only where the command line says nothing: its own settings win.
    if (!command.getForkCount().hasValue()) {
      options.forks(1);
    }
    if (!command.getWarmupIterations().hasValue()) {
      // 64 busy callers on two cores starve the JIT's compiler threads: the full path, with far
      // more code than the baseline, was still getting faster after 12 one-second iterations.
      options.warmupIterations(15);
    }
    if (!command.getWarmupTime().hasValue()) {
      options.warmupTime(TimeValue.seconds(1));
    }
    if (!command.getMeasurementIterations().hasValue()) {
      options.measurementIterations(5);
    }
    if (!command.getMeasurementTime().hasValue()) {
      options.measurementTime(TimeValue.seconds(1));
    }

    String loadBefore = loadAverage();
    Collection<RunResult> results = new Runner(options.build()).run();
    String loadAfter = loadAverage();
    print(results, loadBefore, loadAfter, System.out);
  }

  static void print(
      Collection<RunResult> results, String loadBefore, String loadAfter, PrintStream out) {
    Map<String, RunResult> byName = new LinkedHashMap<>();
    results.stream()
        .sorted(Comparator.comparing(Report::shortName))
        .forEach(result -> byName.put(shortName(result), result));
    boolean allocation = byName.values().stream().anyMatch(r -> allocation(r).isPresent());

    out.println();
    out.printf(
        Locale.ROOT,
        "JDK %s (%s), %d processors, load average before %s, after %s%n%n",
        System.getProperty("java.version"),
        System.getProperty("java.vm.name"),
        Runtime.getRuntime().availableProcessors(),
        loadBefore,
        loadAfter);
    out.println(
        allocation
            ? "| Benchmark | Threads | Score | Error (99.9%) | Median | Units | Alloc (B/op) |"
            : "| Benchmark | Threads | Score | Error (99.9%) | Median | Units |");
    out.println(
        allocation ? "|---|---:|---:|---:|---:|---|---:|" : "|---|---:|---:|---:|---:|---|");
    for (Map.Entry<String, RunResult> entry : byName.entrySet()) {
      Result<?> primary = entry.getValue().getPrimaryResult();
      String row =
          String.format(
              Locale.ROOT,
              "| %s | %d | %.3f | %s | %.3f | %s |",
              entry.getKey(),
              entry.getValue().getParams().getThreads(),
              primary.getScore(),
              error(primary.getScoreError()),
              median(entry.getValue()),
              primary.getScoreUnit());
      if (allocation) {
        row +=
            allocation(entry.getValue())
                .map(bytes -> String.format(Locale.ROOT, " %.0f |", bytes))
                .orElse(" |");
      }
      out.println(row);
    }

    out.println();
    out.printf(
        Locale.ROOT,
        "| Callers | Full / raw (scores) | Full / raw (medians) | Target: at most %.1fx |%n",
        TARGET_RATIO);
    out.println("|---:|---:|---:|---|");
    printRatio(out, "1 (isolated tool)", byName.get("fullPath"), byName.get("rawBaseline"));
    printRatio(out, "64 (isolated tool)", byName.get("fullPath64"), byName.get("rawBaseline64"));
    printRatio(out, "1 (inline tool)", byName.get("fullPathInline"), byName.get("rawBaseline"));
    printRatio(
        out, "64 (inline tool)", byName.get("fullPathInline64"), byName.get("rawBaseline64"));
    printRatio(
        out,
        "1 (inline tool, inside a run's span, as the agent loop calls; not the target)",
        byName.get("fullPathInlineInsideARun"),
        byName.get("rawBaseline"));
    printRatio(
        out,
        "1 (inline tool, no-op telemetry; not the target)",
        byName.get("fullPathInlineUntraced"),
        byName.get("rawBaseline"));
    printRatio(
        out,
        "64 (inline tool, no-op telemetry; not the target)",
        byName.get("fullPathInlineUntraced64"),
        byName.get("rawBaseline64"));
    printRatio(
        out,
        "1 (inline tool, one root span in "
            + DispatchBenchmark.SAMPLED_ONE_IN
            + " sampled; not the target)",
        byName.get("fullPathInlineSampled"),
        byName.get("rawBaseline"));
    printRatio(
        out,
        "1 (telemetry floor: the raw baseline inside the SDK's span and metrics, no Toolhost code;"
            + " not the target, its bound)",
        byName.get("telemetryFloor"),
        byName.get("rawBaseline"));
    printSdkShare(
        out,
        byName.get("fullPathInline"),
        byName.get("fullPathInlineUntraced"),
        byName.get("rawBaseline"));
  }

  /**
   * Prints what the OpenTelemetry SDK takes of the inline path with one caller, in raw baselines:
   * the target leaves one baseline for everything the path adds, so a share of 1 or more puts the
   * target out of reach of any dispatch path on that SDK.
   */
  private static void printSdkShare(
      PrintStream out, RunResult traced, RunResult untraced, RunResult raw) {
    if (traced == null || untraced == null || raw == null) {
      return;
    }
    double scores =
        sdkShare(
            traced.getPrimaryResult().getScore(),
            untraced.getPrimaryResult().getScore(),
            raw.getPrimaryResult().getScore());
    double medians = sdkShare(median(traced), median(untraced), median(raw));
    out.println();
    out.printf(
        Locale.ROOT,
        "The SDK's span and metrics (fullPathInline - fullPathInlineUntraced) cost %.2f raw"
            + " baselines by the scores, %.2f by the medians; the target leaves %.1f for all the"
            + " path adds.%n",
        scores,
        medians,
        TARGET_RATIO - 1);
  }

  /** The SDK's share of a path, in raw baselines: what tracing adds over the no-op API. */
  static double sdkShare(double traced, double untraced, double raw) {
    return (traced - untraced) / raw;
  }

  private static void printRatio(PrintStream out, String callers, RunResult full, RunResult raw) {
    if (full == null || raw == null) {
      out.printf(Locale.ROOT, "| %s | not run | |%n", callers);
      return;
    }
    double f = full.getPrimaryResult().getScore();
    double r = raw.getPrimaryResult().getScore();
    double ratio = f / r;
    // First-order propagation of the two relative errors: a rough band, not a confidence interval.
    double error =
        ratio
            * Math.hypot(
                full.getPrimaryResult().getScoreError() / f,
                raw.getPrimaryResult().getScoreError() / r);
    double medianRatio = median(full) / median(raw);
    out.printf(
        Locale.ROOT,
        "| %s | %.2fx %s | %.2fx | %s |%n",
        callers,
        ratio,
        error(error),
        medianRatio,
        verdict(ratio, error, medianRatio));
  }

  /**
   * The verdict on the target. One starved thread or a neighbour's build can wreck one iteration's
   * mean, and then the propagated band means little: the verdict is firm only when the whole band
   * of the scores' ratio and the medians' ratio are on the same side of the target; else it leans
   * on the medians, and says so.
   */
  static String verdict(double ratio, double error, double medianRatio) {
    boolean medianMet = medianRatio <= TARGET_RATIO;
    if (ratio + error <= TARGET_RATIO && medianMet) {
      return "met";
    }
    if (ratio - error > TARGET_RATIO && !medianMet) {
      return "NOT met";
    }
    return (medianMet ? "probably met" : "probably NOT met")
        + " (medians; the scores are too noisy)";
  }

  /** The median of the measured iterations' scores, over every fork. */
  private static double median(RunResult result) {
    double[] scores =
        result.getBenchmarkResults().stream()
            .flatMap(benchmark -> benchmark.getIterationResults().stream())
            .mapToDouble(iteration -> iteration.getPrimaryResult().getScore())
            .sorted()
            .toArray();
    int middle = scores.length / 2;
    return scores.length % 2 == 1 ? scores[middle] : (scores[middle - 1] + scores[middle]) / 2;
  }

  /** An error band, or "n/a" when JMH has too few iterations to give one. */
  private static String error(double error) {
    return Double.isNaN(error) ? "(error n/a)" : String.format(Locale.ROOT, "± %.3f", error);
  }

  private static String shortName(RunResult result) {
    String name = result.getParams().getBenchmark();
    return name.substring(name.lastIndexOf('.') + 1);
  }

  private static Optional<Double> allocation(RunResult result) {
    // JMH hands secondary results out as a map of raw types: look them up by key alone.
    for (String key : result.getSecondaryResults().keySet()) {
      if (key.endsWith("gc.alloc.rate.norm")) {
        return Optional.of(result.getSecondaryResults().get(key).getScore());
      }
    }
    return Optional.empty();
  }

  private static String loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return fields[0] + " " + fields[1] + " " + fields[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }
}
