package dev.toolhost.core.spi;

import java.time.Instant;
import java.util.Optional;

/**
 * An owner mark names one host process by its process id and start time, so that a mark left by a
 * host that died is not mistaken for a live host's once the id is reused. It is written as {@code
 * PID-STARTMILLIS}: in the environment of the host's child processes and in the marker file of the
 * directories it owns, so that a host starting after a crash can find and remove what its
 * predecessor left.
 *
 * <p>Immutable; {@link #alive()} asks the operating system each time.
 */
public record OwnerMark(long pid, long startMillis) {

  /** The mark of this process. */
  public static OwnerMark current() {
    ProcessHandle self = ProcessHandle.current();
    return new OwnerMark(self.pid(), startMillis(self).orElse(0L));
  }

  /** The mark written as {@code PID-STARTMILLIS}, or empty when the text is not one. */
  public static Optional<OwnerMark> parse(String text) {
    String stripped = text.strip();
    int dash = stripped.indexOf('-');
    if (dash <= 0) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          new OwnerMark(
              Long.parseLong(stripped.substring(0, dash)),
              Long.parseLong(stripped.substring(dash + 1))));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether the process this mark names is running: one with its id that started when it did (to
   * the second, for the start time the system reports is coarse).
   */
  public boolean alive() {
    Optional<ProcessHandle> handle = ProcessHandle.of(pid);
    if (handle.isEmpty() || !handle.get().isAlive()) {
      return false;
    }
    Optional<Long> started = startMillis(handle.get());
    return started.isEmpty() || Math.abs(started.get() - startMillis) < 1_000;
  }

  private static Optional<Long> startMillis(ProcessHandle handle) {
    return handle.info().startInstant().map(Instant::toEpochMilli);
  }

  @Override
  public String toString() {
    return pid + "-" + startMillis;
  }
}
