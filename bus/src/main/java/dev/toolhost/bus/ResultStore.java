package dev.toolhost.bus;

import java.time.Duration;

/**
 * A result store remembers the replies of finished calls by key, so that a request delivered again
 * (same {@linkplain CallKey call key}) is answered from its first execution and never runs twice.
 * The key is the host's own id for the call, never the caller's {@code tool_call_id} alone.
 *
 * <p>Two implementations: {@link InMemoryResultStore}, for one worker process, and {@link
 * RedisResultStore}, shared by a worker group. A worker {@link #claim claims} a call before it runs
 * it. A claim is a lease: it lapses unless its holder {@link #renew renews} it, so the claim of a
 * worker that died lapses within one lease and another worker may take the call over, while a
 * living holder that renews keeps it for as long as the call runs. Thread-safe.
 */
public interface ResultStore extends AutoCloseable {

  /** How long a claim holds unless renewed, by default; workers renew it every third of that. */
  Duration DEFAULT_LEASE = Duration.ofSeconds(10);

  /**
   * Claims a call for the asking worker.
   *
   * @param lease how long the claim holds unless renewed
   */
  Claim claim(String key, Duration lease);

  /**
   * Renews a granted claim for another lease.
   *
   * @return false when the claim is no longer the holder's: it lapsed (and another worker may hold
   *     the call now), or the call finished
   */
  boolean renew(String key, Granted claim, Duration lease);

  /** Records the reply of a claimed call, kept for the given time. */
  void finish(String key, String reply, Duration keep);

  /**
   * Releases a granted claim without a result, so that the call may run again; only the holder's.
   */
  void release(String key, Granted claim);

  /**
   * Whether claiming and finishing wait on another process, such as a network round trip. A worker
   * runs a request for an inline tool on the delivery's own thread only with a store that does not.
   */
  boolean remote();

  /**
   * Whether every worker of the group sees this store's claims and results. With a store that is
   * not, a request delivered again to another worker of the group (after a broker connection
   * dropped, or a worker restarted) is run again there: the same worker answers it from its run,
   * another one does not know of it. A worker with such a store says so when it starts.
   */
  boolean shared();

  @Override
  void close();

  /** The outcome of a claim. */
  sealed interface Claim {}

  /**
   * The call is the asking worker's to run.
   *
   * @param holder names this claim among all claims of the call; renewing and releasing need it
   */
  record Granted(String holder) implements Claim {}

  /** Another execution of the call is running. */
  record Running() implements Claim {}

  /**
   * The call finished; here is its reply.
   *
   * @param reply the reply's JSON text
   */
  record Finished(String reply) implements Claim {}
}
