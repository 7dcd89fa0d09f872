package dev.toolhost.core;

import java.time.Instant;

/**
 * The epoch clock turns {@link System#nanoTime()} readings into wall-clock time, so that the
 * dispatch path reads the clock once per call and derives every timestamp it needs (the span's
 * start and end, the deadline check) from that reading.
 *
 * <p>A clock read costs 60 to 80 ns on the machines Toolhost is measured on, as much as a third of
 * what the dispatch path adds to a trivial call; the OpenTelemetry SDK's anchored clock does the
 * same per trace. Here the anchor (one wall-clock reading beside one {@code nanoTime} reading) is
 * taken again once a second, so that the derived time follows the wall clock's adjustments within
 * that second. Written by hand: it is a dozen lines and no library offers it on its own.
 * Thread-safe.
 */
final class EpochClock {

  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long REANCHOR_NANOS = NANOS_PER_SECOND;

  private record Anchor(long epochSecond, long nano, long nanoTime) {
    static Anchor now() {
      long nanoTime = System.nanoTime();
      Instant now = Instant.now();
      return new Anchor(now.getEpochSecond(), now.getNano(), nanoTime);
    }
  }

  private static volatile Anchor anchor = Anchor.now();

  private EpochClock() {}

  /** The wall-clock time, in nanoseconds since the epoch, at the given {@code nanoTime} reading. */
  static long epochNanos(long nanoTime) {
    Anchor current = anchor;
    long elapsed = nanoTime - current.nanoTime();
    if (elapsed > REANCHOR_NANOS) {
      current = Anchor.now();
      anchor = current;
      elapsed = nanoTime - current.nanoTime();
    }
    return current.epochSecond() * NANOS_PER_SECOND + current.nano() + elapsed;
  }

  /** Whether the instant has passed at the given {@code nanoTime} reading. */
  static boolean passed(Instant instant, long nanoTime) {
    long now = epochNanos(nanoTime);
    long second = Math.floorDiv(now, NANOS_PER_SECOND);
    return instant.getEpochSecond() < second
        || (instant.getEpochSecond() == second
            && instant.getNano() <= Math.floorMod(now, NANOS_PER_SECOND));
  }
}
