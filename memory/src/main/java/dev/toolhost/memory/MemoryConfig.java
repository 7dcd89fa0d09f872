package dev.toolhost.memory;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import java.net.URI;
import java.util.Locale;
import java.util.Objects;
import tools.jackson.databind.JsonNode;

/**
 * A memory config is the {@code memory:} section of a host config: where the host's working memory
 * lives, and how large tool results are chunked into it.
 *
 * <pre>{@code
 * memory:
 *   store: memory                      # memory (in this process) or redis
 *   redis_uri: redis://127.0.0.1:6379  # with store: redis
 *   key_prefix: "toolhost:wm:"         # with store: redis; every Redis key starts with it
 *   chunking:
 *     threshold: 64000                 # results longer than this many characters are chunked
 *     min_chunk: 20000                 # chunks are up to max(threshold, min_chunk) long
 *     ttl: 20m                         # how long chunks stay in working memory
 *     models: {small-model: 16000}     # thresholds by model name
 * }</pre>
 *
 * <p>Read by {@link WorkingMemoryExtension}, which owns the section. The default store is
 * in-process, so that the built-in memory tools work with no outside service. Immutable.
 *
 * @param store where working memory lives
 * @param redisUri the Redis server, with {@link Store#REDIS}
 * @param keyPrefix the prefix of every Redis key, with {@link Store#REDIS}
 * @param chunking the thresholds, least chunk length and time to live of chunked results
 */
public record MemoryConfig(
    Store store, URI redisUri, String keyPrefix, ResultChunker.Config chunking) {

  /** The Redis server used when the config names none. */
  public static final URI DEFAULT_REDIS_URI = URI.create("redis://127.0.0.1:6379");

  public MemoryConfig {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(redisUri, "redisUri");
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    Objects.requireNonNull(chunking, "chunking");
  }

  /** In-process working memory, the default chunking. */
  public static MemoryConfig defaults() {
    return new MemoryConfig(
        Store.MEMORY,
        DEFAULT_REDIS_URI,
        RedisWorkingMemory.DEFAULT_KEY_PREFIX,
        ResultChunker.Config.builder().build());
  }

  /**
   * Reads a {@code memory:} section, as a config file or code holds it.
   *
   * @throws ConfigException listing every problem of the section
   */
  public static MemoryConfig read(JsonNode section) {
    ConfigProblems problems = ConfigProblems.unplaced();
    ConfigSections.check(
        WorkingMemoryExtension.NAME,
        new WorkingMemoryExtension().configSchema(),
        section,
        problems);
    problems.throwIfAny();
    MemoryConfig config = new MemoryConfigReader(problems).read(section);
    problems.throwIfAny();
    return config;
  }

  /** Working memory in the Redis server at the URI, under the given key prefix. */
  public static MemoryConfig redis(URI redisUri, String keyPrefix) {
    return defaults().withStore(Store.REDIS, redisUri, keyPrefix);
  }

  /** This section with another store. */
  public MemoryConfig withStore(Store store, URI redisUri, String keyPrefix) {
    return new MemoryConfig(store, redisUri, keyPrefix, chunking);
  }

  /** This section with other chunking. */
  public MemoryConfig withChunking(ResultChunker.Config chunking) {
    return new MemoryConfig(store, redisUri, keyPrefix, chunking);
  }

  /**
   * Opens the working memory this section describes; a Redis store is checked with one read.
   *
   * @throws ConfigException naming the URI (without its password) when Redis cannot be reached
   */
  public WorkingMemory open() {
    if (store == Store.MEMORY) {
      return new InProcessWorkingMemory();
    }
    RedisWorkingMemory redis;
    try {
      redis = RedisWorkingMemory.connect(redisUri, keyPrefix);
    } catch (RuntimeException e) {
      throw unreachable(e);
    }
    try {
      // Any read will do: it fails now, at start, rather than at the first large result.
      redis.get("toolhost/start-check");
    } catch (RuntimeException e) {
      redis.close();
      throw unreachable(e);
    }
    return redis;
  }

  private ConfigException unreachable(RuntimeException e) {
    return new ConfigException(
        "Cannot reach the Redis working memory at "
            + shown(redisUri)
            + " (memory.redis_uri): "
            + e.getMessage()
            + ". Start Redis there, fix memory.redis_uri, or set memory.store: memory.");
  }

  /** The URI without a password. */
  static String shown(URI uri) {
    String userInfo = uri.getRawUserInfo();
    if (userInfo == null) {
      return uri.toString();
    }
    int colon = userInfo.indexOf(':');
    String user = colon < 0 ? userInfo : userInfo.substring(0, colon) + ":***";
    return uri.toString().replace(userInfo + "@", user + "@");
  }

  /** Describes the section without a Redis password. */
  @Override
  public String toString() {
    return "MemoryConfig[store="
        + store.wireName()
        + ", redisUri="
        + shown(redisUri)
        + ", keyPrefix="
        + keyPrefix
        + ", chunking="
        + chunking
        + "]";
  }

  /** Where working memory lives. */
  public enum Store {
    /** In this process's heap: the default, for a host that runs alone. */
    MEMORY,
    /** In a Redis server, shared by every host that uses it. */
    REDIS;

    /** The name the config file uses. */
    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }
}
