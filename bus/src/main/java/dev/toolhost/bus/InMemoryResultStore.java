package dev.toolhost.bus;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory result store remembers finished calls inside one process: the default, enough for a
 * single worker. Entries are dropped when their time is up.
 *
 * <p>Every claim first evicts a few entries whose time is up, oldest claim first, so the map holds
 * about the entries still live and no claim ever sweeps the whole map (under load it holds every
 * call of the last deadline's worth of seconds, hundreds of thousands of entries).
 */
public final class InMemoryResultStore implements ResultStore {

  // More than one per claim, so that eviction keeps up with claims.
  private static final int EVICT_PER_CLAIM = 4;

  private record Entry(String reply, long expiresAtNanos, String holder) {
    boolean expired(long now) {
      return now - expiresAtNanos > 0;
    }
  }

  /** A claimed key and when its entry was to expire then; a later finish may have moved it. */
  private record Expiry(String key, long atNanos) {}

  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
  // In claim order. A call's keep rarely differs from its lease by much, so this is close to expiry
  // order; an entry that is not due yet when its turn comes is queued again with its own time.
  private final ConcurrentLinkedQueue<Expiry> order = new ConcurrentLinkedQueue<>();
  // Holders need to differ only within this store.
  private final AtomicLong holders = new AtomicLong();

  @Override
  public Claim claim(String key, Duration lease) {
    long now = System.nanoTime();
    evict(now);
    Entry mine = new Entry(null, now + lease.toNanos(), Long.toString(holders.incrementAndGet()));
    Entry found =
        entries.compute(
            key, (k, existing) -> existing == null || existing.expired(now) ? mine : existing);
    if (found == mine) {
      order.add(new Expiry(key, mine.expiresAtNanos()));
      return new Granted(mine.holder());
    }
    return found.reply() == null ? new Running() : new Finished(found.reply());
  }

  private void evict(long now) {
    for (int i = 0; i < EVICT_PER_CLAIM; i++) {
      Expiry head = order.peek();
      if (head == null || now - head.atNanos() <= 0) {
        return;
      }
      // Another claim may have taken the head between peek and poll: what this one polled is
      // judged on its own.
      Expiry due = order.poll();
      if (due == null) {
        return;
      }
      // Most entries are finished calls whose keep outlasts their claim's lease: seen not due by a
      // read, they are queued again without locking their bin in the map.
      Entry seen = entries.get(due.key());
      Entry left =
          seen == null || !seen.expired(now)
              ? seen
              : entries.computeIfPresent(
                  due.key(), (k, entry) -> entry.expired(now) ? null : entry);
      if (left != null) {
        order.add(new Expiry(due.key(), left.expiresAtNanos()));
      }
    }
  }

  @Override
  public boolean renew(String key, Granted claim, Duration lease) {
    long now = System.nanoTime();
    Entry renewed = new Entry(null, now + lease.toNanos(), claim.holder());
    // An entry that is not due yet when eviction reaches it is queued again with its new time.
    return entries.computeIfPresent(key, (k, entry) -> holds(entry, claim, now) ? renewed : entry)
        == renewed;
  }

  private static boolean holds(Entry entry, Granted claim, long now) {
    return entry.reply() == null && claim.holder().equals(entry.holder()) && !entry.expired(now);
  }

  @Override
  public void finish(String key, String reply, Duration keep) {
    entries.put(key, new Entry(reply, System.nanoTime() + keep.toNanos(), null));
  }

  @Override
  public void release(String key, Granted claim) {
    long now = System.nanoTime();
    entries.computeIfPresent(key, (k, entry) -> holds(entry, claim, now) ? null : entry);
  }

  @Override
  public void close() {
    entries.clear();
    order.clear();
  }

  /** {@inheritDoc} Never: the results live in this process. */
  @Override
  public boolean remote() {
    return false;
  }

  /** {@inheritDoc} Never: only this process's workers see it. */
  @Override
  public boolean shared() {
    return false;
  }

  /** How many entries the store holds, expired ones not yet evicted included. */
  int size() {
    return entries.size();
  }
}
