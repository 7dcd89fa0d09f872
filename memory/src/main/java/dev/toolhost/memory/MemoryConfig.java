package dev.toolhost.memory;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Durations;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.core.JsonPointer;
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
 * <p>Read by {@link WorkingMemoryExtension}, which owns the section: its schema is generated from
 * its raw shape, and what the schema cannot say (the store's name, the Redis URI, ranges,
 * durations) is checked here, each problem at its line and column. The default store is in-process,
 * so that the built-in memory tools work with no outside service. Immutable.
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
    ConfigSections.check(WorkingMemoryExtension.NAME, SCHEMA, section, problems);
    problems.throwIfAny();
    MemoryConfig config = read(section, problems);
    problems.throwIfAny();
    return config;
  }

  /** The section's schema, generated from its raw shape. */
  static final JsonNode SCHEMA = ConfigSections.schema(Raw.class);

  private static final String AT = "/" + WorkingMemoryExtension.NAME;

  /**
   * Reads a section its schema accepts, adding what binding cannot see (the store's name, the Redis
   * URI, ranges, durations) to the problems; the result is only meaningful when none was added.
   */
  static MemoryConfig read(JsonNode section, ConfigProblems problems) {
    Raw raw = ConfigSections.bind(WorkingMemoryExtension.NAME, section, Raw.class);
    MemoryConfig defaults = defaults();
    Store store = defaults.store();
    if (raw.store() != null) {
      switch (raw.store().strip().toLowerCase(Locale.ROOT)) {
        case "memory" -> store = Store.MEMORY;
        case "redis" -> store = Store.REDIS;
        default ->
            problems.atValue(
                AT + "/store",
                "'memory.store' is '" + raw.store() + "' (expected one of: memory, redis)");
      }
    }
    URI redisUri =
        raw.redisUri() == null ? defaults.redisUri() : redisUri(raw.redisUri(), problems);
    String keyPrefix = RedisWorkingMemory.DEFAULT_KEY_PREFIX;
    if (raw.keyPrefix() != null && raw.keyPrefix().isBlank()) {
      problems.atValue(
          AT + "/key_prefix",
          "'memory.key_prefix' is empty (expected the prefix of every Redis key, such as"
              + " toolhost:wm:, or leave it out)");
    } else if (raw.keyPrefix() != null) {
      keyPrefix = raw.keyPrefix();
    }
    ResultChunker.Config chunking =
        raw.chunking() == null ? defaults.chunking() : chunking(raw.chunking(), problems);
    return new MemoryConfig(store, redisUri, keyPrefix, chunking);
  }

  private static ResultChunker.Config chunking(RawChunking raw, ConfigProblems problems) {
    String at = AT + "/chunking";
    ResultChunker.Config.Builder config = ResultChunker.Config.builder();
    if (raw.threshold() != null && raw.threshold() < 1) {
      problems.atValue(
          at + "/threshold",
          "'memory.chunking.threshold' is "
              + raw.threshold()
              + " (expected a positive number of characters, such as 64000)");
    } else if (raw.threshold() != null) {
      config.defaultThreshold(raw.threshold());
    }
    if (raw.minChunk() != null && raw.minChunk() < 2) {
      problems.atValue(
          at + "/min_chunk",
          "'memory.chunking.min_chunk' is "
              + raw.minChunk()
              + " (expected at least 2 characters, such as 20000)");
    } else if (raw.minChunk() != null) {
      config.minimumChunkLength(raw.minChunk());
    }
    if (raw.ttl() != null) {
      Optional<Duration> ttl = Durations.parse(raw.ttl());
      if (ttl.isEmpty()) {
        problems.atValue(
            at + "/ttl",
            "'memory.chunking.ttl' is '"
                + raw.ttl()
                + "' (expected a positive duration, such as 20m, 90s or 1h)");
      }
      ttl.ifPresent(config::ttl);
    }
    if (raw.models() != null) {
      raw.models()
          .forEach(
              (model, threshold) -> {
                String entry = at + "/models" + JsonPointer.empty().appendProperty(model);
                if (model.isBlank()) {
                  problems.atKey(
                      entry,
                      "a model name under 'memory.chunking.models' is empty (expected a model"
                          + " name, as calls carry it)");
                } else if (threshold == null || threshold < 1) {
                  problems.atValue(
                      entry,
                      "'memory.chunking.models."
                          + model
                          + "' is "
                          + (threshold == null ? "empty" : threshold)
                          + " (expected a positive number of characters, such as 32000)");
                } else {
                  config.threshold(model, threshold);
                }
              });
    }
    return config.build();
  }

  private static URI redisUri(String raw, ConfigProblems problems) {
    try {
      URI uri = new URI(raw.strip());
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if ((scheme.equals("redis") || scheme.equals("rediss")) && uri.getHost() != null) {
        return uri;
      }
    } catch (URISyntaxException e) {
      // Reported below.
    }
    problems.atValue(
        AT + "/redis_uri",
        "'memory.redis_uri' is '"
            + shown(safeUri(raw))
            + "' (expected a redis:// or rediss:// URI, such as redis://127.0.0.1:6379)");
    return DEFAULT_REDIS_URI;
  }

  /** The raw text as a URI to hide its password, or a placeholder when it is none. */
  private static URI safeUri(String raw) {
    try {
      return new URI(raw.strip());
    } catch (URISyntaxException e) {
      return URI.create("invalid:" + (raw.contains("@") ? "(hidden)" : "(not a URI)"));
    }
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

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(String store, String redisUri, String keyPrefix, RawChunking chunking) {}

  record RawChunking(
      Integer threshold,
      Integer minChunk,
      @DurationText String ttl,
      @JsonPropertyDescription(
              "a mapping of model names to thresholds, such as {small-model: 16000}")
          Map<String, Integer> models) {}
}
