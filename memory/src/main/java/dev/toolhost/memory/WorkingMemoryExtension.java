package dev.toolhost.memory;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * The working memory extension is a host's working memory (the {@code memory:} section): it opens
 * the store (in this process, or Redis, checked with one read so that an unreachable server stops
 * the host at start), shares it with the extensions after it as a {@link WorkingMemory} service,
 * and, unless {@code builtins.memory} is off, registers the working memory tools (source {@code
 * builtin:memory}) and their guide and chunks every result longer than the caller's model's
 * threshold into it at the {@link DispatchStage#RESULT_SHAPING result shaping} stage.
 *
 * <p>Found by {@link java.util.ServiceLoader}, it reads its section from the host's config; made
 * with a {@link MemoryConfig}, it uses that one.
 */
public final class WorkingMemoryExtension implements HostExtension {

  /** The extension's name and config key. */
  public static final String NAME = "memory";

  private final Optional<MemoryConfig> given;
  private WorkingMemory memory;

  /** The extension reading the host's {@code memory:} section. */
  public WorkingMemoryExtension() {
    this.given = Optional.empty();
  }

  /** The extension with the given config, whatever the host's config file says. */
  public WorkingMemoryExtension(MemoryConfig config) {
    this.given = Optional.of(Objects.requireNonNull(config, "config"));
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int order() {
    return 100;
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(MemoryConfigReader.RawMemory.class);
  }

  @Override
  public void check(JsonNode section, SectionReading reading) {
    new MemoryConfigReader(reading.problems()).read(section);
  }

  @Override
  public void start(HostContext host) {
    MemoryConfig config =
        given.orElseGet(
            () ->
                ConfigSections.read(
                    this,
                    host,
                    (section, reading) ->
                        new MemoryConfigReader(reading.problems()).read(section)));
    memory = config.open();
    try {
      host.provide(WorkingMemory.class, memory);
      if (host.builtin(NAME)) {
        host.registry().registerAll(new WorkingMemoryTools(memory).tools());
        host.guide(WorkingMemoryTools.GUIDE);
        host.interceptor(
            DispatchStage.RESULT_SHAPING, new ResultChunker(memory, config.chunking()));
      }
    } catch (RuntimeException e) {
      // A start that throws is not closed by the host: what it opened, it closes.
      memory.close();
      throw e;
    }
  }

  @Override
  public void close() {
    // Closes the Redis connections; the entries stay in Redis until they expire.
    memory.close();
  }
}
