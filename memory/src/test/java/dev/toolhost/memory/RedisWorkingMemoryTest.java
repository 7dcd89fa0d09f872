package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/** The contract against the Redis server on 127.0.0.1:6379, under a key prefix of its own. */
class RedisWorkingMemoryTest extends WorkingMemoryContract {

  static final URI REDIS = URI.create("redis://127.0.0.1:6379");

  private final String keyPrefix = "toolhost-test:" + UUID.randomUUID() + ":";

  @Override
  protected WorkingMemory open() {
    return RedisWorkingMemory.connect(REDIS, keyPrefix);
  }

  /** Every key under this test's prefix, read straight from Redis. */
  private List<String> keysLeft() {
    try (RedisClient redis = RedisClient.create(REDIS)) {
      List<String> keys = new ArrayList<>();
      ScanParams params =
          new ScanParams().match(RedisWorkingMemory.glob(keyPrefix) + "*").count(1000);
      String cursor = ScanParams.SCAN_POINTER_START;
      do {
        ScanResult<String> page = redis.scan(cursor, params);
        keys.addAll(page.getResult());
        cursor = page.getCursor();
      } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
      return keys;
    }
  }

  @AfterEach
  void leavesNothingBehind() {
    try (WorkingMemory cleaner = open()) {
      cleaner.removeAll("");
    }
    assertThat(keysLeft()).isEmpty();
  }

  @Test
  void entriesAreSharedBetweenHostsAndExpiredByRedis() {
    try (WorkingMemory otherHost = open()) {
      memory.put(namespace + "/chunk0", "from host one", Duration.ofMinutes(1), "tool-result");

      assertThat(otherHost.get(namespace + "/chunk0").orElseThrow().value())
          .isEqualTo("from host one");
    }
    try (RedisClient redis = RedisClient.create(REDIS)) {
      long ttl = redis.pttl(keyPrefix + namespace + "/chunk0");
      assertThat(ttl).isBetween(1L, 60_000L);
    }
  }

  @Test
  void keysLiveUnderThePrefix() {
    memory.put(namespace + "/k", "v", Duration.ofMinutes(1), "c");

    assertThat(keysLeft()).containsExactly(keyPrefix + namespace + "/k");
  }

  @Test
  void globSpecialCharactersMatchOnlyThemselves() {
    assertThat(RedisWorkingMemory.glob("a*b?c[d]e\\f")).isEqualTo("a\\*b\\?c\\[d\\]e\\\\f");
  }
}
