package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.Builtins;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.TestHost;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/**
 * The {@code memory:} section and the memory and search built-ins, read and refused with the
 * working memory extension alone, as {@code toolhost config check} reads them.
 */
class MemoryConfigTest {

  private static HostConfig parse(String yaml) {
    return TestHost.config(yaml, List.of(new WorkingMemoryExtension()), Path.of(""));
  }

  /** Asserts that the config text is refused, and gives the refusal to check its message. */
  private static AbstractThrowableAssert<?, ? extends Throwable> refused(String yaml) {
    return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
  }

  /** The section as the extension reads it when it starts; the defaults without one. */
  private static MemoryConfig memory(HostConfig config) {
    return config.sections().containsKey(WorkingMemoryExtension.NAME)
        ? MemoryConfig.read(config.section(WorkingMemoryExtension.NAME))
        : MemoryConfig.defaults();
  }

  @Test
  void withoutTheSectionWorkingMemoryIsInProcessWithTheSeedsThresholds() {
    MemoryConfig memory = memory(parse("http:\n  port: 0\n"));

    assertThat(memory).isEqualTo(MemoryConfig.defaults());
    assertThat(memory.store()).isEqualTo(MemoryConfig.Store.MEMORY);
    assertThat(memory.chunking().defaultThreshold()).isEqualTo(64_000);
    assertThat(memory.chunking().minimumChunkLength()).isEqualTo(20_000);
    assertThat(memory.chunking().ttl()).isEqualTo(Duration.ofMinutes(20));
    assertThat(HostConfig.defaults().builtins()).isEqualTo(new Builtins(true, true, true));
    try (var opened = memory.open()) {
      assertThat(opened).isInstanceOf(InProcessWorkingMemory.class);
    }
  }

  @Test
  void everyKeyIsRead() {
    HostConfig config =
        parse(
            """
            builtins:
              memory: false
              search: false
            memory:
              store: redis
              redis_uri: redis://127.0.0.1:6380/2
              key_prefix: "agents:wm:"
              chunking:
                threshold: 32000
                min_chunk: 10000
                ttl: 5m
                models:
                  small-model: 8000
                  openrouter/deepseek: 16000
            """);

    assertThat(config.builtins()).isEqualTo(new Builtins(true, false, false));
    MemoryConfig memory = memory(config);
    assertThat(memory.store()).isEqualTo(MemoryConfig.Store.REDIS);
    assertThat(memory.redisUri()).isEqualTo(URI.create("redis://127.0.0.1:6380/2"));
    assertThat(memory.keyPrefix()).isEqualTo("agents:wm:");
    ResultChunker.Config chunking = memory.chunking();
    assertThat(chunking.defaultThreshold()).isEqualTo(32_000);
    assertThat(chunking.minimumChunkLength()).isEqualTo(10_000);
    assertThat(chunking.ttl()).isEqualTo(Duration.ofMinutes(5));
    assertThat(chunking.modelThresholds())
        .isEqualTo(Map.of("small-model", 8_000, "openrouter/deepseek", 16_000));
    assertThat(chunking.thresholdFor(Optional.of("small-model"))).isEqualTo(8_000);
    assertThat(chunking.chunkLengthFor(Optional.of("small-model"))).isEqualTo(10_000);
  }

  @Test
  void problemsNameTheFileLineAndWhatWasExpected() {
    refused(
            """
                    memory:
                      store: postgres
                      redis_uri: http://127.0.0.1:6379
                      key_prefix: ""
                      chunking:
                        threshold: 0
                        min_chunk: 1
                        ttl: soon
                        models: {small: -5}
                    """)
        .hasMessage(
            """
            toolhost.yaml line 2, column 10: 'memory.store' is 'postgres' (expected one of: memory, redis)
            toolhost.yaml line 3, column 14: 'memory.redis_uri' is 'http://127.0.0.1:6379' (expected a redis:// or rediss:// URI, such as redis://127.0.0.1:6379)
            toolhost.yaml line 4, column 15: 'memory.key_prefix' is empty (expected the prefix of every Redis key, such as toolhost:wm:, or leave it out)
            toolhost.yaml line 6, column 16: 'memory.chunking.threshold' is 0 (expected a positive number of characters, such as 64000)
            toolhost.yaml line 7, column 16: 'memory.chunking.min_chunk' is 1 (expected at least 2 characters, such as 20000)
            toolhost.yaml line 8, column 10: 'memory.chunking.ttl' is 'soon' (expected a positive duration, such as 20m, 90s or 1h)
            toolhost.yaml line 9, column 21: 'memory.chunking.models.small' is -5 (expected a positive number of characters, such as 32000)\
            """);
  }

  @Test
  void wrongTypesAndUnknownKeysAreRefusedWithTheirPlace() {
    refused("memory:\n  chunking:\n    threshold: big\n")
        .hasMessage(
            "toolhost.yaml line 3, column 16: wrong type for 'memory.chunking.threshold': expected"
                + " an integer, got 'big'");
    refused("memory:\n  chunking:\n    models: [a, b]\n")
        .hasMessageContaining("line 3, column 13")
        .hasMessageContaining("expected a mapping of model names to thresholds");
    refused("memory:\n  stor: redis\n")
        .hasMessage(
            "toolhost.yaml line 2, column 3: unknown key 'stor' under 'memory' (did you mean 'store'? expected one of:"
                + " chunking, key_prefix, redis_uri, store)");
    refused("builtins:\n  memroy: false\n")
        .hasMessageContaining("unknown key 'memroy' under 'builtins'")
        .hasMessageContaining("guides, memory, search");
  }

  @Test
  void anUnreachableRedisIsAClearErrorNamingTheUriWithoutItsPassword() {
    assertThatThrownBy(
            () ->
                TestHost.start(
                    """
                    memory:
                      store: redis
                      redis_uri: redis://ana:s3cret@127.0.0.1:1
                      key_prefix: "unused:"
                    """,
                    List.of(new WorkingMemoryExtension())))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "Cannot reach the Redis working memory at redis://ana:***@127.0.0.1:1 (memory.redis_uri):")
        .hasMessageNotContaining("s3cret");
  }

  @Test
  void aReachableRedisIsTheHostsWorkingMemory() {
    try (TestHost host =
        TestHost.start(
            """
            memory:
              store: redis
              key_prefix: "toolhost-test:unused:"
            """,
            List.of(new WorkingMemoryExtension()))) {
      WorkingMemory working = host.runtime().service(WorkingMemory.class).orElseThrow();
      assertThat(working).isInstanceOf(RedisWorkingMemory.class);
      assertThat(working.list("")).isEmpty();
    }
  }
}
