package dev.toolhost.memory;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * The working memory extension is a host's working memory (the {@code memory:} section): it opens
 * the store (in this process, or Redis, checked with one read so that an unreachable server stops
 * the host at start), shares it with the extensions after it as a {@link WorkingMemory} service,
 * and, unless {@code builtins.memory} is off, registers the working memory tools (source {@code
 * builtin:memory}) and their guide and chunks every result longer than the caller's model's
 * threshold into it at the {@link DispatchStage#RESULT_SHAPING result shaping} stage.
 *
 * <p>Found by {@link java.util.ServiceLoader}; without a section, in-process memory with the
 * default chunking.
 */
public final class WorkingMemoryExtension implements HostExtension<MemoryConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "memory";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(WorkingMemory.class);
  }

  @Override
  public JsonNode configSchema() {
    return MemoryConfig.SCHEMA.deepCopy();
  }

  @Override
  public MemoryConfig read(JsonNode section, SectionReading reading) {
    return MemoryConfig.read(section, reading.problems());
  }

  @Override
  public void start(HostContext host, Optional<MemoryConfig> section) {
    MemoryConfig config = section.orElseGet(MemoryConfig::defaults);
    // Closes the Redis connections with the host; the entries stay in Redis until they expire.
    WorkingMemory memory = host.own(config.open());
    host.provide(WorkingMemory.class, memory);
    if (host.builtins().memory()) {
      List<ExecutableTool> tools = new WorkingMemoryTools(memory).tools();
      host.registry().registerAll(tools);
      // Reading working memory is for every role; its tools only read.
      host.allowTools(tools, "subagent", "scheduled", "a2a_synthesis");
      host.guide(WorkingMemoryTools.GUIDE);
      host.interceptor(DispatchStage.RESULT_SHAPING, new ResultChunker(memory, config.chunking()));
    }
  }
}
