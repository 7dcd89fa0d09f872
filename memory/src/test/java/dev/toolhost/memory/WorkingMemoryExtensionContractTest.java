package dev.toolhost.memory;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The working memory extension keeps the host extension contract with its Redis store, on the Redis
 * server on this machine; without a section it is on, in this process.
 */
class WorkingMemoryExtensionContractTest extends HostExtensionContract<MemoryConfig> {

  private static final Set<String> TOOLS =
      Set.of("get_from_working_memory", "list_working_memory", "search_working_memory");

  @Override
  protected HostExtension<MemoryConfig> extension() {
    return new WorkingMemoryExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        store: redis
        redis_uri: redis://127.0.0.1:6379
        key_prefix: "toolhost-test:contract:"
        chunking:
          threshold: 1000
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
        store: redis
        chunking:
          treshold: 1000
        """,
            3,
            3,
            "treshold"));
  }

  @Override
  protected Set<String> configuredTools() {
    return TOOLS;
  }

  @Override
  protected Set<String> toolsWithoutSection() {
    return TOOLS;
  }

  /** Every role may read working memory: its tools only read. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    return Map.of(
        "subagent",
        configuredTools(),
        "scheduled",
        configuredTools(),
        "a2a_synthesis",
        configuredTools());
  }
}
