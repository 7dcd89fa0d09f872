package dev.toolhost.benchmarks.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A CPU reading is what the machine and this process had spent at one instant: the machine's busy
 * and total ticks over all its CPUs ({@code /proc/stat}), this process's CPU time (the host, when
 * it runs in-process), and the wall clock. Two readings give who used how many cores between them.
 */
record Cpu(long busyTicks, long totalTicks, long processNanos, long wallNanos) {

  private static final Path STAT = Path.of("/proc/stat");

  /** The number of CPUs of the machine, whatever this process is pinned to. */
  static int machineCpus() {
    try {
      return (int)
          Files.readAllLines(STAT).stream().filter(line -> line.matches("cpu\\d+ .*")).count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The machine's load average, as {@code /proc/loadavg} gives it (1, 5 and 15 minutes). */
  static String loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return fields[0] + " " + fields[1] + " " + fields[2];
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads the machine's and this process's CPU now. */
  static Cpu now() {
    List<String> lines;
    try {
      lines = Files.readAllLines(STAT);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    // cpu user nice system idle iowait irq softirq steal ...: idle and iowait are not busy.
    String[] fields = lines.getFirst().trim().split("\\s+");
    long total = 0;
    long idle = 0;
    for (int i = 1; i < Math.min(fields.length, 9); i++) {
      long ticks = Long.parseLong(fields[i]);
      total += ticks;
      if (i == 4 || i == 5) {
        idle += ticks;
      }
    }
    long process =
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    return new Cpu(total - idle, total, process, System.nanoTime());
  }

  /** The cores the whole machine kept busy from {@code before} to this reading. */
  double machineCores(Cpu before, int cpus) {
    long total = totalTicks - before.totalTicks;
    return total == 0 ? 0 : (double) (busyTicks - before.busyTicks) / total * cpus;
  }

  /** The cores this process used from {@code before} to this reading. */
  double processCores(Cpu before) {
    return (double) (processNanos - before.processNanos) / (wallNanos - before.wallNanos);
  }

  /** The wall time from {@code before} to this reading, in seconds. */
  double seconds(Cpu before) {
    return (wallNanos - before.wallNanos) / 1e9;
  }
}
