package dev.toolhost.bus;

import java.net.URI;
import java.time.Duration;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.SetParams;

/**
 * The Redis result store remembers finished calls in Redis, shared by every worker of a group, so
 * that no worker of the group runs a finished call twice.
 *
 * <p>A key holds {@code running} while claimed (expiring with the lease) and {@code done:} plus the
 * reply once finished (expiring after the keep time). Keys are prefixed {@code toolhost:result:}. A
 * Redis that cannot be reached is a {@link BusException}.
 */
public final class RedisResultStore implements ResultStore {

  private static final String PREFIX = "toolhost:result:";
  private static final String RUNNING = "running";
  private static final String DONE = "done:";

  private final RedisClient redis;

  private RedisResultStore(RedisClient redis) {
    this.redis = redis;
  }

  /**
   * A store on the Redis at the URI, such as {@code redis://127.0.0.1:6379}.
   *
   * @throws BusException when Redis cannot be reached
   */
  public static RedisResultStore connect(URI uri) {
    RedisClient client = RedisClient.create(uri);
    try {
      client.ping();
    } catch (JedisException e) {
      client.close();
      throw new BusException(
          "Cannot reach the result store Redis at "
              + uri.getHost()
              + ":"
              + uri.getPort()
              + ": "
              + e.getMessage(),
          e);
    }
    return new RedisResultStore(client);
  }

  @Override
  public Claim claim(String key, Duration lease) {
    try {
      String set =
          redis.set(
              PREFIX + key, RUNNING, SetParams.setParams().nx().px(Math.max(1, lease.toMillis())));
      if ("OK".equals(set)) {
        return new Granted();
      }
      String value = redis.get(PREFIX + key);
      if (value == null) {
        return claim(key, lease);
      }
      return value.startsWith(DONE) ? new Finished(value.substring(DONE.length())) : new Running();
    } catch (JedisException e) {
      throw new BusException("The result store failed: " + e.getMessage(), e);
    }
  }

  @Override
  public void finish(String key, String reply, Duration keep) {
    try {
      redis.set(PREFIX + key, DONE + reply, SetParams.setParams().px(Math.max(1, keep.toMillis())));
    } catch (JedisException e) {
      throw new BusException("The result store failed: " + e.getMessage(), e);
    }
  }

  @Override
  public void release(String key) {
    try {
      if (RUNNING.equals(redis.get(PREFIX + key))) {
        redis.del(PREFIX + key);
      }
    } catch (JedisException e) {
      throw new BusException("The result store failed: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    redis.close();
  }

  /** {@inheritDoc} Always: every claim and finish is a round trip to Redis. */
  @Override
  public boolean remote() {
    return true;
  }
}
