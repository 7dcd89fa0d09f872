package dev.toolhost.bus;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory result store remembers finished calls inside one process: the default, enough for a
 * single worker. Entries are dropped when their time is up.
 */
public final class InMemoryResultStore implements ResultStore {

  private static final int SWEEP_AT_LEAST = 10_000;

  private record Entry(String reply, long expiresAtNanos) {
    boolean expired(long now) {
      return now - expiresAtNanos > 0;
    }
  }

  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
  // Expired entries are swept when the map has doubled since the last sweep, so a claim costs
  // O(1) amortized even when every entry is still live (results are kept for minutes).
  private final AtomicLong sweepAt = new AtomicLong(SWEEP_AT_LEAST);

  @Override
  public Claim claim(String key, Duration lease) {
    long now = System.nanoTime();
    long threshold = sweepAt.get();
    if (entries.size() > threshold && sweepAt.compareAndSet(threshold, Long.MAX_VALUE)) {
      entries.values().removeIf(entry -> entry.expired(now));
      sweepAt.set(Math.max(SWEEP_AT_LEAST, 2L * entries.size()));
    }
    Entry mine = new Entry(null, now + lease.toNanos());
    Entry found =
        entries.compute(
            key, (k, existing) -> existing == null || existing.expired(now) ? mine : existing);
    if (found == mine) {
      return new Granted();
    }
    return found.reply() == null ? new Running() : new Finished(found.reply());
  }

  @Override
  public void finish(String key, String reply, Duration keep) {
    entries.put(key, new Entry(reply, System.nanoTime() + keep.toNanos()));
  }

  @Override
  public void release(String key) {
    entries.computeIfPresent(key, (k, entry) -> entry.reply() == null ? null : entry);
  }

  @Override
  public void close() {
    entries.clear();
  }

  /** {@inheritDoc} Never: the results live in this process. */
  @Override
  public boolean remote() {
    return false;
  }
}
