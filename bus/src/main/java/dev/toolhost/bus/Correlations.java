package dev.toolhost.bus;

import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Correlations are a bus's requests still waiting for replies, by correlation id: the part of
 * request and reply that every bus implementation shares.
 *
 * <p>Thread-safe. A reply whose correlation id is not waiting (late, or for another process) is
 * dropped with a debug log line.
 */
public final class Correlations {

  private static final Logger LOG = LoggerFactory.getLogger(Correlations.class);

  private final ConcurrentHashMap<String, Replies> waiting = new ConcurrentHashMap<>();
  // Correlation ids need to be unique, not secret (only this process's reply queue receives them):
  // a random prefix per instance and a counter, without a SecureRandom draw per request.
  private final String prefix = UUID.randomUUID() + "-";
  private final AtomicLong next = new AtomicLong();

  /** Opens the replies of a new request with a fresh correlation id. */
  public Replies open() {
    String id = prefix + Long.toHexString(next.incrementAndGet());
    Replies replies = new Replies(id, this);
    waiting.put(id, replies);
    return replies;
  }

  /**
   * Routes a reply to the request waiting for it.
   *
   * @return whether a request was waiting
   */
  public boolean deliver(Message reply) {
    String id = reply.correlationId().orElse(reply.headers().get(Message.ID_HEADER));
    Replies replies = id == null ? null : waiting.get(id);
    if (replies == null) {
      LOG.debug("Dropped a reply for correlation id {}: no request is waiting for it", id);
      return false;
    }
    replies.offer(reply);
    return true;
  }

  /**
   * Ends one waiting request with the failure, such as a request the broker refused or could not
   * route; its {@link Replies#next} throws it. Does nothing when that request is no longer waiting.
   */
  public void fail(String correlationId, BusException failure) {
    Replies replies = waiting.get(correlationId);
    if (replies != null) {
      replies.offer(failure);
    }
  }

  /** Ends every waiting request with the failure. */
  public void failAll(BusException failure) {
    waiting.values().forEach(replies -> replies.offer(failure));
  }

  /** How many requests are waiting. */
  public int size() {
    return waiting.size();
  }

  void remove(String correlationId) {
    waiting.remove(correlationId);
  }
}
