package dev.toolhost.bus;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.SetParams;

/**
 * The Redis result store remembers finished calls in Redis, shared by every worker of a group, so
 * that no worker of the group runs a finished call twice.
 *
 * <p>A key holds {@code running:} plus the holder while claimed ({@code SET NX PX}, expiring with
 * the lease unless the holder renews it) and {@code done:} plus the reply once finished (expiring
 * after the keep time). Renewing and releasing check the holder in one step (a Lua script), so a
 * worker whose lease lapsed never renews or deletes the claim of the worker that took the call
 * over. Keys are {@code toolhost:result:} plus the group and the {@linkplain CallKey call key}:
 * every host on the broker shares the store, so a key never holds a caller's {@code tool_call_id}
 * alone. A Redis that cannot be reached is a {@link BusException}.
 */
public final class RedisResultStore implements ResultStore {

  private static final String PREFIX = "toolhost:result:";
  private static final String RUNNING = "running:";
  private static final String DONE = "done:";
  private static final String RENEW =
      "if redis.call('get', KEYS[1]) == ARGV[1] then"
          + " return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
  private static final String RELEASE =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1])"
          + " else return 0 end";

  private final RedisClient redis;
  // Holders must differ across every worker of the group: a random prefix per store, a counter.
  private final String holders = UUID.randomUUID() + "-";
  private final AtomicLong nextHolder = new AtomicLong();

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
    String holder = holders + Long.toHexString(nextHolder.incrementAndGet());
    try {
      String set =
          redis.set(
              PREFIX + key,
              RUNNING + holder,
              SetParams.setParams().nx().px(Math.max(1, lease.toMillis())));
      if ("OK".equals(set)) {
        return new Granted(holder);
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
  public boolean renew(String key, Granted claim, Duration lease) {
    try {
      Object renewed =
          redis.eval(
              RENEW,
              List.of(PREFIX + key),
              List.of(RUNNING + claim.holder(), Long.toString(Math.max(1, lease.toMillis()))));
      return Long.valueOf(1).equals(renewed);
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
  public void release(String key, Granted claim) {
    try {
      redis.eval(RELEASE, List.of(PREFIX + key), List.of(RUNNING + claim.holder()));
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

  /** {@inheritDoc} Always: the workers of a group that connect to one Redis share it. */
  @Override
  public boolean shared() {
    return true;
  }
}
