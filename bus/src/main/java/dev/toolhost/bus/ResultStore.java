package dev.toolhost.bus;

import java.time.Duration;

/**
 * A result store remembers the replies of finished calls by key, so that a request delivered again
 * (same call id) is answered from its first execution and never runs twice.
 *
 * <p>Two implementations: {@link InMemoryResultStore}, for one worker process, and {@link
 * RedisResultStore}, shared by a worker group. A worker {@link #claim claims} a call before it runs
 * it; a claim lasts until the call's deadline, so a claim of a worker that died lapses.
 * Thread-safe.
 */
public interface ResultStore extends AutoCloseable {

  /**
   * Claims a call for the asking worker.
   *
   * @param lease how long the claim holds if never finished
   */
  Claim claim(String key, Duration lease);

  /** Records the reply of a claimed call, kept for the given time. */
  void finish(String key, String reply, Duration keep);

  /** Releases a claim without a result, so that the call may run again. */
  void release(String key);

  /**
   * Whether claiming and finishing wait on another process, such as a network round trip. A worker
   * runs a request for an inline tool on the delivery's own thread only with a store that does not.
   */
  boolean remote();

  @Override
  void close();

  /** The outcome of a claim. */
  sealed interface Claim {}

  /** The call is the asking worker's to run. */
  record Granted() implements Claim {}

  /** Another execution of the call is running. */
  record Running() implements Claim {}

  /**
   * The call finished; here is its reply.
   *
   * @param reply the reply's JSON text
   */
  record Finished(String reply) implements Claim {}
}
