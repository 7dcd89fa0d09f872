package dev.toolhost.bus;

import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cancellations are the calls a process that runs them was told to stop: a call running here has
 * its thread interrupted, and every cancelled call is remembered until its deadline, so that a
 * request that arrives after its cancel (a cancel that overtook its request in the broker) is
 * answered {@code cancelled} without running.
 *
 * <p>A call is known by a key: an invoke handler's {@code {group}:{call_key}}, a tool service's
 * correlation id. At most {@link #LIMIT} cancelled keys are remembered, the oldest forgotten first,
 * and none longer than {@link #LONGEST}, whatever its deadline says: a cancel comes from another
 * process. Thread-safe. It interrupts a thread only between its {@link #start} and its {@link
 * #end}, and never any other.
 */
final class Cancellations {

  /** How many cancelled keys are remembered at most. */
  static final int LIMIT = 10_000;

  /** How long a cancelled key is remembered at most. */
  static final Duration LONGEST = Duration.ofMinutes(10);

  // Keys of calls that run now, to their threads.
  private final ConcurrentHashMap<String, Thread> running = new ConcurrentHashMap<>();
  // Cancelled keys to when they may be forgotten, oldest first; guarded by itself.
  private final LinkedHashMap<String, Instant> cancelled = new LinkedHashMap<>();
  // Read without the lock by start and end, for the common case of no cancel at all.
  private final ConcurrentHashMap<String, Boolean> cancelledKeys = new ConcurrentHashMap<>();

  /**
   * Marks the call as running on the current thread, which a cancel then interrupts.
   *
   * @return false when the call was cancelled already: it must not run, and is not marked
   */
  boolean start(String key) {
    running.put(key, Thread.currentThread());
    // The cancel adds the key, then looks for a running thread; this marks the thread, then looks
    // for the key: one of the two sees the other.
    if (cancelledKeys.containsKey(key)) {
      running.remove(key, Thread.currentThread());
      return false;
    }
    return true;
  }

  /**
   * Ends the call's run on the current thread: no cancel interrupts it any more. When the call was
   * cancelled, the interruption a cancel may have left on the thread is cleared, so that the thread
   * can reply and record the result.
   *
   * @return whether the call was cancelled
   */
  boolean end(String key) {
    running.remove(key, Thread.currentThread());
    if (cancelledKeys.containsKey(key)) {
      Thread.interrupted();
      return true;
    }
    return false;
  }

  /** Whether the call was cancelled (and is still remembered). */
  boolean cancelled(String key) {
    return cancelledKeys.containsKey(key);
  }

  /**
   * Cancels a call: remembers its key until the given instant (at most {@link #LONGEST} from now),
   * and interrupts its thread if it runs here.
   *
   * @return whether it ran here
   */
  boolean cancel(String key, Instant until) {
    Objects.requireNonNull(key, "key");
    Instant now = Instant.now();
    Instant latest = now.plus(LONGEST);
    synchronized (cancelled) {
      forgetExpired(now);
      cancelled.remove(key);
      cancelled.put(key, until.isAfter(latest) ? latest : until);
      cancelledKeys.put(key, Boolean.TRUE);
      while (cancelled.size() > LIMIT) {
        Iterator<String> oldest = cancelled.keySet().iterator();
        cancelledKeys.remove(oldest.next());
        oldest.remove();
      }
    }
    Thread thread = running.get(key);
    if (thread == null) {
      return false;
    }
    // Only while it is still this call's: end() removes it before the thread does anything else.
    running.computeIfPresent(
        key,
        (k, current) -> {
          current.interrupt();
          return current;
        });
    return true;
  }

  // Insertion order is close to expiry order (deadlines are mostly alike); an entry not due yet
  // stops the sweep, and the limit bounds the rest.
  private void forgetExpired(Instant now) {
    Iterator<Map.Entry<String, Instant>> entries = cancelled.entrySet().iterator();
    while (entries.hasNext()) {
      Map.Entry<String, Instant> entry = entries.next();
      if (entry.getValue().isAfter(now)) {
        return;
      }
      cancelledKeys.remove(entry.getKey());
      entries.remove();
    }
  }

  /** How many cancelled keys are remembered. */
  int remembered() {
    synchronized (cancelled) {
      return cancelled.size();
    }
  }
}
