package dev.toolhost.longterm;

import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * The long-term memory extension gives a host memories that last across conversations (the {@code
 * long_term_memory:} section): {@code memory_save}, {@code memory_recall} and {@code
 * memory_delete}, and the skills ({@link Skills}: {@code save_skill}, {@code list_skills}, {@code
 * get_skill}, {@code delete_skill}, source {@code builtin:skills}, served among the tool guides),
 * with their guide; the {@link LongTermMemory} is shared with later extensions as a service.
 *
 * <p>Off until configured: a host whose config has no {@code long_term_memory:} section registers
 * no memory tool and opens nothing. Its profile rules, after Spacebot's (the channel and workers
 * get no memory tools; branches save and recall; only the admin chat deletes): no built-in profile
 * may delete a memory, so {@code memory_delete} is only for a user profile that allows it and does
 * not extend a built-in one (a deny always wins over what a profile extends); and {@code
 * a2a_synthesis}, which reads another agent's answer, may recall but not save, so that an outside
 * agent cannot plant a memory. Skills follow the same rules: {@code delete_skill} only where a user
 * profile grants it, and no {@code save_skill} in {@code a2a_synthesis}. Found by {@link
 * java.util.ServiceLoader}; made with an embedder, it uses that one.
 */
public final class LongTermMemoryExtension implements HostExtension<LongTermMemoryConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "long_term_memory";

  /**
   * The tools each restricted built-in profile is granted: recalling and reading skills for every
   * role, saving for helpers and tasks; synthesising another agent's answer reads only.
   */
  static final Map<String, List<String>> GRANTS =
      Map.of(
          "subagent",
              List.of("memory_recall", "memory_save", "list_skills", "get_skill", "save_skill"),
          "scheduled",
              List.of("memory_recall", "memory_save", "list_skills", "get_skill", "save_skill"),
          "a2a_synthesis", List.of("memory_recall", "list_skills", "get_skill"));

  /** Deleting is for profiles an operator writes: {@code main} does not have it. */
  static final List<String> MAIN_DENIED = List.of("memory_delete", "delete_skill");

  private static final Logger LOG = LoggerFactory.getLogger(LongTermMemoryExtension.class);

  private final Optional<Embedder> givenEmbedder;

  /** The extension with the embedder its config names. */
  public LongTermMemoryExtension() {
    this.givenEmbedder = Optional.empty();
  }

  /**
   * The extension with the given embedder, whatever its config names; the embedder is closed with
   * the host.
   */
  public LongTermMemoryExtension(Embedder embedder) {
    this.givenEmbedder = Optional.of(Objects.requireNonNull(embedder, "embedder"));
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(LongTermMemory.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(LongTermMemoryConfig.Raw.class);
  }

  /** The section read; a password's variable is read when the host starts. */
  @Override
  public LongTermMemoryConfig read(JsonNode section, SectionReading reading) {
    return LongTermMemoryConfig.read(section, reading, Map.of());
  }

  @Override
  public void start(HostContext host, Optional<LongTermMemoryConfig> section) {
    if (section.isEmpty()) {
      return;
    }
    LongTermMemoryConfig config =
        section
            .get()
            .postgres()
            .map(
                postgres ->
                    section.get().withPostgres(postgres.withPasswordFrom(host.environment())))
            .orElse(section.get());
    Embedder embedder =
        host.own(givenEmbedder.orElseGet(() -> embedder(config, host.environment())));
    MemoryStore store = host.own(store(config));
    // Closes the store and the embedder after its background pass; they are owned as well for a
    // start that fails before it exists, and a second close of either does nothing.
    LongTermMemory memory =
        host.own(new LongTermMemory(store, embedder, config.embedRetry(), Clock.systemUTC()));
    LOG.info(
        "Long-term memory in {} ({}), embedded with {}",
        config.store() == LongTermMemoryConfig.Store.LUCENE
            ? config.stateDirectory().toAbsolutePath()
            : config.postgres().orElseThrow().url(),
        config.store().name().toLowerCase(java.util.Locale.ROOT),
        memory.model());
    GRANTS.forEach((profile, tools) -> host.allowTools(profile, tools.toArray(String[]::new)));
    host.denyTools("main", MAIN_DENIED.toArray(String[]::new));
    host.provide(LongTermMemory.class, memory);
    host.registry().registerAll(new LongTermMemoryTools(memory, config).tools());
    host.guide(LongTermMemoryTools.GUIDE);
    Skills skills = new Skills(store, config, host.guides(), Clock.systemUTC());
    host.registry().registerAll(skills.tools());
    host.guides().ifPresent(guides -> guides.shelve(skills));
  }

  private static Embedder embedder(LongTermMemoryConfig config, Map<String, String> environment) {
    if (config.embedder().endpoint().isPresent()) {
      LongTermMemoryConfig.Endpoint endpoint = config.embedder().endpoint().get();
      Optional<String> key = endpoint.apiKeyEnv().map(environment::get);
      if (endpoint.apiKeyEnv().isPresent() && key.isEmpty()) {
        LOG.warn(
            "The memory embedder's key variable {} is not set: requests go without a key",
            endpoint.apiKeyEnv().get());
      }
      return new EndpointEmbedder(
          endpoint.baseUrl(),
          endpoint.model(),
          endpoint.dimension(),
          endpoint.sendDimensions(),
          key,
          endpoint.timeout());
    }
    if (!MiniLmEmbedder.available()) {
      throw new IllegalStateException(
          "long_term_memory uses the bundled embedding model, which is not on the class path: add"
              + " dev.toolhost:toolhost-longterm-minilm, or configure an embedder endpoint");
    }
    return new MiniLmEmbedder();
  }

  private static MemoryStore store(LongTermMemoryConfig config) {
    return switch (config.store()) {
      case LUCENE -> {
        try {
          Files.createDirectories(config.stateDirectory());
        } catch (IOException e) {
          throw new IllegalStateException(
              "cannot create the long-term memory directory "
                  + config.stateDirectory().toAbsolutePath()
                  + ": "
                  + e.getMessage());
        }
        yield LuceneMemoryStore.open(config.stateDirectory());
      }
      case POSTGRES -> PostgresMemoryStore.open(config.postgres().orElseThrow());
    };
  }
}
