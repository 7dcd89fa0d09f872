package dev.toolhost.memory;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Durations;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import tools.jackson.core.JsonPointer;
import tools.jackson.databind.JsonNode;

/**
 * The memory config reader checks the {@code memory:} section of a config file once its schema
 * accepts it: what binding cannot see (the store's name, the Redis URI, ranges, durations), each
 * problem naming the file, line and column and what was expected.
 *
 * <p>Problems are added to the caller's list, so that one reading reports every problem of the
 * file; the returned config is only meaningful when none was added.
 */
final class MemoryConfigReader {

  private static final String STORES = "memory, redis";

  private final ConfigProblems problems;

  MemoryConfigReader(ConfigProblems problems) {
    this.problems = problems;
  }

  /**
   * Reads a section its schema accepts; the result is only meaningful when no problem was added.
   */
  MemoryConfig read(JsonNode section) {
    return read(ConfigSections.bind("memory", section, RawMemory.class));
  }

  private MemoryConfig read(RawMemory raw) {
    MemoryConfig defaults = MemoryConfig.defaults();
    JsonPointer memory = JsonPointer.empty().appendProperty("memory");
    MemoryConfig.Store store = defaults.store();
    if (raw.store() != null) {
      switch (raw.store().strip().toLowerCase(Locale.ROOT)) {
        case "memory" -> store = MemoryConfig.Store.MEMORY;
        case "redis" -> store = MemoryConfig.Store.REDIS;
        default ->
            problem(
                memory.appendProperty("store"),
                "'memory.store' is '" + raw.store() + "' (expected one of: " + STORES + ")");
      }
    }
    URI redisUri = defaults.redisUri();
    if (raw.redisUri() != null) {
      redisUri = redisUri(raw.redisUri(), memory.appendProperty("redis_uri")).orElse(redisUri);
    }
    String keyPrefix = RedisWorkingMemory.DEFAULT_KEY_PREFIX;
    if (raw.keyPrefix() != null) {
      if (raw.keyPrefix().isBlank()) {
        problem(
            memory.appendProperty("key_prefix"),
            "'memory.key_prefix' is empty (expected the prefix of every Redis key, such as"
                + " toolhost:wm:, or leave it out)");
      } else {
        keyPrefix = raw.keyPrefix();
      }
    }
    ResultChunker.Config chunking =
        raw.chunking() == null
            ? defaults.chunking()
            : chunking(raw.chunking(), memory.appendProperty("chunking"));
    return new MemoryConfig(store, redisUri, keyPrefix, chunking);
  }

  private ResultChunker.Config chunking(RawChunking raw, JsonPointer at) {
    ResultChunker.Config.Builder config = ResultChunker.Config.builder();
    if (raw.threshold() != null) {
      if (raw.threshold() < 1) {
        problem(
            at.appendProperty("threshold"),
            "'memory.chunking.threshold' is "
                + raw.threshold()
                + " (expected a positive number of characters, such as 64000)");
      } else {
        config.defaultThreshold(raw.threshold());
      }
    }
    if (raw.minChunk() != null) {
      if (raw.minChunk() < 2) {
        problem(
            at.appendProperty("min_chunk"),
            "'memory.chunking.min_chunk' is "
                + raw.minChunk()
                + " (expected at least 2 characters, such as 20000)");
      } else {
        config.minimumChunkLength(raw.minChunk());
      }
    }
    if (raw.ttl() != null) {
      ttl(raw.ttl(), at.appendProperty("ttl")).ifPresent(config::ttl);
    }
    if (raw.models() != null) {
      JsonPointer models = at.appendProperty("models");
      raw.models()
          .forEach(
              (model, threshold) -> {
                JsonPointer entry = models.appendProperty(model);
                if (model.isBlank()) {
                  problemAtKey(
                      entry,
                      "a model name under 'memory.chunking.models' is empty (expected a model"
                          + " name, as calls carry it)");
                } else if (threshold == null || threshold < 1) {
                  problem(
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

  private Optional<URI> redisUri(String raw, JsonPointer at) {
    try {
      URI uri = new URI(raw.strip());
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if ((scheme.equals("redis") || scheme.equals("rediss")) && uri.getHost() != null) {
        return Optional.of(uri);
      }
    } catch (URISyntaxException e) {
      // Reported below.
    }
    problem(
        at,
        "'memory.redis_uri' is '"
            + MemoryConfig.shown(safeUri(raw))
            + "' (expected a redis:// or rediss:// URI, such as redis://127.0.0.1:6379)");
    return Optional.empty();
  }

  /** The raw text as a URI to hide its password, or a placeholder when it is none. */
  private static URI safeUri(String raw) {
    try {
      return new URI(raw.strip());
    } catch (URISyntaxException e) {
      return URI.create("invalid:" + (raw.contains("@") ? "(hidden)" : "(not a URI)"));
    }
  }

  /** A duration in the one syntax of {@link Durations}. */
  private Optional<Duration> ttl(String raw, JsonPointer at) {
    Optional<Duration> duration = Durations.parse(raw);
    if (duration.isEmpty()) {
      problem(
          at,
          "'memory.chunking.ttl' is '"
              + raw
              + "' (expected a positive duration, such as 20m, 90s or 1h)");
    }
    return duration;
  }

  private void problem(JsonPointer at, String message) {
    problems.atValue(at.toString(), message);
  }

  private void problemAtKey(JsonPointer at, String message) {
    problems.atKey(at.toString(), message);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record RawMemory(String store, String redisUri, String keyPrefix, RawChunking chunking) {}

  record RawChunking(
      Integer threshold,
      Integer minChunk,
      @DurationText String ttl,
      @JsonPropertyDescription(
              "a mapping of model names to thresholds, such as {small-model: 16000}")
          Map<String, Integer> models) {}
}
