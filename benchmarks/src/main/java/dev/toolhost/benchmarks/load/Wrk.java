package dev.toolhost.benchmarks.load;

import dev.toolhost.benchmarks.AddTool;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A wrk driver runs Debian's {@code wrk} (4.1, an epoll event loop in C) against one target of a
 * host, with the load script {@code load/load.lua} of this module's resources, and reads the one
 * line of results the script prints: requests, errors, latency percentiles and wrk's own CPU.
 *
 * <p>Each run is a closed loop: every connection sends its next request when the last is answered,
 * so the concurrency is the number of connections. Not thread-safe; every run starts a process and
 * waits for it, and a run that fails throws with wrk's output.
 */
final class Wrk {

  private final URI base;
  private final Path script;
  private final Path sessions;
  private final int threads;
  private final Optional<String> cpus;
  private final long ticksPerSecond;

  /**
   * A driver against the host at {@code base}, whose MCP requests go to the sessions listed in
   * {@code sessions}; at most {@code threads} wrk threads, on the CPUs {@code cpus} names (a {@code
   * taskset} list) when present.
   */
  Wrk(URI base, Path directory, Path sessions, int threads, Optional<String> cpus) {
    this.base = base;
    this.sessions = sessions;
    this.threads = threads;
    this.cpus = cpus;
    this.script = directory.resolve("load.lua");
    try (InputStream in = Wrk.class.getResourceAsStream("/load/load.lua")) {
      if (in == null) {
        throw new IllegalStateException("The load script load/load.lua is not on the class path.");
      }
      Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.ticksPerSecond = clockTicks();
  }

  /** One run of wrk: its counts, its latency percentiles and the CPU it used. */
  record Result(
      long requests,
      double seconds,
      long errors,
      long p50Micros,
      long p99Micros,
      double cpuSeconds) {

    double perSecond() {
      return requests / seconds;
    }

    /** The cores wrk kept busy while it ran. */
    double cores() {
      return cpuSeconds / seconds;
    }
  }

  /** Runs wrk against {@code target} with {@code connections} for {@code seconds} and waits. */
  Result run(Target target, int connections, int seconds) {
    return finish(start(target, connections, seconds));
  }

  /** Starts wrk against {@code target}; {@link #finish} waits for it and reads its results. */
  Process start(Target target, int connections, int seconds) {
    List<String> command = new ArrayList<>();
    cpus.ifPresent(list -> command.addAll(List.of("taskset", "-c", list)));
    command.addAll(
        List.of(
            "wrk",
            "-t",
            Integer.toString(Math.min(threads, connections)),
            "-c",
            Integer.toString(connections),
            "-d",
            seconds + "s",
            "--timeout",
            "10s",
            "-s",
            script.toString(),
            base.resolve(target.path()).toString(),
            "--",
            target.label(),
            sessions.toString(),
            AddTool.INLINE_NAME));
    try {
      return new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot start wrk (install it with: apt-get install -y wrk): " + e.getMessage(), e);
    }
  }

  /** Waits for a wrk started by {@link #start} and reads the line its script printed. */
  Result finish(Process process) {
    String output;
    int status;
    try {
      output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      status = process.waitFor();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while wrk ran.", e);
    }
    Optional<String> line = output.lines().filter(l -> l.startsWith("LOAD ")).findFirst();
    if (status != 0 || line.isEmpty()) {
      throw new IllegalStateException("wrk failed (exit " + status + "):\n" + output);
    }
    Map<String, Long> fields = new HashMap<>();
    for (String field : line.get().substring("LOAD ".length()).trim().split("\\s+")) {
      int equals = field.indexOf('=');
      fields.put(field.substring(0, equals), Long.parseLong(field.substring(equals + 1)));
    }
    long errors =
        fields.get("connect_errors")
            + fields.get("read_errors")
            + fields.get("write_errors")
            + fields.get("status_errors")
            + fields.get("timeouts");
    return new Result(
        fields.get("requests"),
        fields.get("duration_us") / 1e6,
        errors,
        fields.get("p50_us"),
        fields.get("p99_us"),
        (double) fields.get("cpu_ticks") / ticksPerSecond);
  }

  // The unit of /proc/<pid>/stat's CPU times; 100 on every Linux this runs on, asked all the same.
  private static long clockTicks() {
    try {
      Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String answer = new String(getconf.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      getconf.waitFor();
      return Long.parseLong(answer.trim());
    } catch (IOException | NumberFormatException e) {
      return 100;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 100;
    }
  }
}
