package dev.toolhost.bus;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-memory result store remembers finished calls inside one process: the default, enough for a
 * single worker. Entries are dropped when their time is up.
 */
public final class InMemoryResultStore implements ResultStore {

  private record Entry(String reply, long expiresAtNanos) {
    boolean expired(long now) {
      return now - expiresAtNanos > 0;
    }
  }

  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

  @Override
  public Claim claim(String key, Duration lease) {
    long now = System.nanoTime();
    if (entries.size() > 10_000) {
      entries.values().removeIf(entry -> entry.expired(now));
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
}
