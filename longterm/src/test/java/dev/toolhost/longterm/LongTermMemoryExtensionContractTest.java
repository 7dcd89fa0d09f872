package dev.toolhost.longterm;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The long-term memory extension keeps the host extension contract with its Lucene store in the
 * test's directory and the bundled model as its embedder; without a section it is off.
 */
class LongTermMemoryExtensionContractTest extends HostExtensionContract<LongTermMemoryConfig> {

  private static final Set<String> DELETING = Set.of("memory_delete", "delete_skill");

  @Override
  protected HostExtension<LongTermMemoryConfig> extension() {
    return new LongTermMemoryExtension(new SwitchableEmbedder());
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        store: lucene
        state_dir: memories
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            store: lucene
            stat_dir: memories
            """,
            2,
            1,
            "stat_dir"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of(
        "memory_save",
        "memory_recall",
        "memory_delete",
        "save_skill",
        "list_skills",
        "get_skill",
        "delete_skill");
  }

  /** No restricted profile deletes; the one that reads another agent's answer saves nothing. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    Set<String> helping =
        Set.of("memory_recall", "memory_save", "list_skills", "get_skill", "save_skill");
    return Map.of(
        "subagent",
        helping,
        "scheduled",
        helping,
        "a2a_synthesis",
        Set.of("memory_recall", "list_skills", "get_skill"));
  }

  /** Deleting is for the operator's own profiles. */
  @Override
  protected Set<String> deniedInMain() {
    return DELETING;
  }
}
