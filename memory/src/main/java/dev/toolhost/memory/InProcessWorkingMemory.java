package dev.toolhost.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * In-process working memory keeps its entries in this process's heap: the default, for an agent
 * host that runs alone.
 *
 * <p>Thread-safe and lock-free. Expired entries are never returned; they are dropped when read and
 * swept out, at most once a minute, when something is stored. No background thread: closing it only
 * forgets its entries.
 */
public final class InProcessWorkingMemory implements WorkingMemory {

  private static final Duration SWEEP_INTERVAL = Duration.ofMinutes(1);

  private final InstantSource clock;
  private final ConcurrentSkipListMap<String, MemoryEntry> entries = new ConcurrentSkipListMap<>();
  private volatile Instant nextSweep;

  /** A working memory on the system clock. */
  public InProcessWorkingMemory() {
    this(InstantSource.system());
  }

  /** A working memory on the given clock, which decides when entries expire. */
  public InProcessWorkingMemory(InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.nextSweep = clock.instant().plus(SWEEP_INTERVAL);
  }

  @Override
  public void put(String key, String value, Duration ttl, String category) {
    EntryRules.checkPut(key, value, ttl, category);
    Instant now = clock.instant();
    entries.put(key, new MemoryEntry(key, value, category, now, now.plus(ttl)));
    if (!now.isBefore(nextSweep)) {
      nextSweep = now.plus(SWEEP_INTERVAL);
      entries.values().removeIf(entry -> expired(entry, now));
    }
  }

  @Override
  public Optional<MemoryEntry> get(String key) {
    MemoryEntry entry = entries.get(key);
    if (entry == null) {
      return Optional.empty();
    }
    if (expired(entry, clock.instant())) {
      entries.remove(key, entry);
      return Optional.empty();
    }
    return Optional.of(entry);
  }

  @Override
  public List<MemoryEntry> list(String prefix) {
    Instant now = clock.instant();
    List<MemoryEntry> live = new ArrayList<>();
    for (Map.Entry<String, MemoryEntry> e : entries.tailMap(prefix).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      if (expired(e.getValue(), now)) {
        entries.remove(e.getKey(), e.getValue());
      } else {
        live.add(e.getValue());
      }
    }
    return live;
  }

  @Override
  public boolean remove(String key) {
    MemoryEntry removed = entries.remove(key);
    return removed != null && !expired(removed, clock.instant());
  }

  @Override
  public int removeAll(String prefix) {
    int removed = 0;
    Instant now = clock.instant();
    for (Map.Entry<String, MemoryEntry> e : entries.tailMap(prefix).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      if (entries.remove(e.getKey(), e.getValue()) && !expired(e.getValue(), now)) {
        removed++;
      }
    }
    return removed;
  }

  @Override
  public void close() {
    entries.clear();
  }

  private static boolean expired(MemoryEntry entry, Instant now) {
    return !now.isBefore(entry.expiresAt());
  }
}
