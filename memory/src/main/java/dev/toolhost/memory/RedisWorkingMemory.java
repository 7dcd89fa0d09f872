package dev.toolhost.memory;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.resps.ScanResult;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Redis working memory keeps its entries in a Redis server, so that several hosts share one working
 * memory: a chunk one host stores, another can read.
 *
 * <p>Each entry is one Redis string under {@code {keyPrefix}{key}}, holding a small JSON object
 * (text, category, stored-at and expires-at in epoch milliseconds), written with {@code SET ... PX}
 * so that the text and its expiry are set in one command and Redis itself expires it. Listing scans
 * the keys that start with the prefix ({@code SCAN MATCH}) and reads them with {@code MGET}, so it
 * costs time in proportion to the whole key space: fine for working memory, which is small and
 * short-lived.
 *
 * <p>Thread-safe: it holds a pool of connections. Redis failures (server unreachable, timeouts)
 * surface as Jedis's unchecked exceptions.
 */
public final class RedisWorkingMemory implements WorkingMemory {

  /** The prefix of every key this store writes, unless told otherwise. */
  public static final String DEFAULT_KEY_PREFIX = "toolhost:wm:";

  private static final ObjectMapper MAPPER = JsonMapper.shared();
  private static final int SCAN_COUNT = 1000;

  private final UnifiedJedis redis;
  private final String keyPrefix;

  private RedisWorkingMemory(UnifiedJedis redis, String keyPrefix) {
    this.redis = redis;
    this.keyPrefix = keyPrefix;
  }

  /**
   * Connects to the Redis server at the URI ({@code redis://host:6379}, {@code
   * redis://user:password@host:6379/2}, {@code rediss://} for TLS), with keys under {@link
   * #DEFAULT_KEY_PREFIX}.
   */
  public static RedisWorkingMemory connect(URI uri) {
    return connect(uri, DEFAULT_KEY_PREFIX);
  }

  /** Connects to the Redis server at the URI, with every key under the given prefix. */
  public static RedisWorkingMemory connect(URI uri, String keyPrefix) {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    return new RedisWorkingMemory(RedisClient.create(uri), keyPrefix);
  }

  @Override
  public void put(String key, String value, Duration ttl, String category) {
    EntryRules.checkPut(key, value, ttl, category);
    Instant now = Instant.now();
    ObjectNode stored = MAPPER.createObjectNode();
    stored.put("value", value);
    stored.put("category", category);
    stored.put("stored_at", now.toEpochMilli());
    stored.put("expires_at", now.plus(ttl).toEpochMilli());
    redis.set(keyPrefix + key, stored.toString(), SetParams.setParams().px(ttl.toMillis()));
  }

  @Override
  public Optional<MemoryEntry> get(String key) {
    return Optional.ofNullable(redis.get(keyPrefix + key)).map(json -> parse(key, json));
  }

  @Override
  public List<MemoryEntry> list(String prefix) {
    List<String> keys = scan(prefix);
    List<MemoryEntry> entries = new ArrayList<>(keys.size());
    for (int from = 0; from < keys.size(); from += SCAN_COUNT) {
      List<String> batch = keys.subList(from, Math.min(keys.size(), from + SCAN_COUNT));
      List<String> values = redis.mget(batch.toArray(String[]::new));
      for (int i = 0; i < batch.size(); i++) {
        // Null when the entry expired between the scan and the read.
        if (values.get(i) != null) {
          entries.add(parse(batch.get(i).substring(keyPrefix.length()), values.get(i)));
        }
      }
    }
    entries.sort(Comparator.comparing(MemoryEntry::key));
    return entries;
  }

  @Override
  public boolean remove(String key) {
    return redis.del(keyPrefix + key) > 0;
  }

  @Override
  public int removeAll(String prefix) {
    List<String> keys = scan(prefix);
    long removed = 0;
    for (int from = 0; from < keys.size(); from += SCAN_COUNT) {
      removed +=
          redis.del(
              keys.subList(from, Math.min(keys.size(), from + SCAN_COUNT)).toArray(String[]::new));
    }
    return Math.toIntExact(removed);
  }

  @Override
  public void close() {
    redis.close();
  }

  /** The full Redis keys that start with the prefix, deduplicated (SCAN may repeat a key). */
  private List<String> scan(String prefix) {
    ScanParams params = new ScanParams().match(glob(keyPrefix + prefix) + "*").count(SCAN_COUNT);
    List<String> keys = new ArrayList<>();
    String cursor = ScanParams.SCAN_POINTER_START;
    do {
      ScanResult<String> page = redis.scan(cursor, params);
      keys.addAll(page.getResult());
      cursor = page.getCursor();
    } while (!ScanParams.SCAN_POINTER_START.equals(cursor));
    return keys.stream().distinct().toList();
  }

  /** The text as a Redis glob pattern that matches only itself. */
  static String glob(String text) {
    StringBuilder pattern = new StringBuilder(text.length() + 8);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '^' || c == '-') {
        pattern.append('\\');
      }
      pattern.append(c);
    }
    return pattern.toString();
  }

  private static MemoryEntry parse(String key, String json) {
    JsonNode stored = MAPPER.readTree(json);
    return new MemoryEntry(
        key,
        stored.get("value").asString(),
        stored.get("category").asString(),
        Instant.ofEpochMilli(stored.get("stored_at").asLong()),
        Instant.ofEpochMilli(stored.get("expires_at").asLong()));
  }
}
