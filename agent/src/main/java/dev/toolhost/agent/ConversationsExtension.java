package dev.toolhost.agent;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.core.spi.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * The conversations extension is where a host keeps the conversations of its conversation API (the
 * {@code conversations:} section, {@link ConversationsConfig}): it opens the {@link
 * ConversationStore} and shares it, and the agents extension's turns route appends each turn to it
 * and reads back a conversation it does not hold in memory. Without the section it opens nothing,
 * and conversations live in memory only.
 *
 * <p>Found by {@link java.util.ServiceLoader}; a host made in code gives it a {@link
 * ConversationsConfig} through its builder.
 */
public final class ConversationsExtension implements HostExtension<ConversationsConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "conversations";

  @Override
  public String name() {
    return NAME;
  }

  /** The store, shared as the extension starts, before the agents start. */
  @Override
  public Set<Class<?>> provides() {
    return Set.of(ConversationStore.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(ConversationsConfig.Raw.class);
  }

  @Override
  public ConversationsConfig read(JsonNode section, SectionReading reading) {
    return ConversationsConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<ConversationsConfig> config)
      throws SQLException, IOException {
    if (config.isEmpty()) {
      return;
    }
    ConversationStore store = host.own(open(config.get().store(), host.environment()));
    host.provide(ConversationStore.class, store);
  }

  private static ConversationStore open(Storage store, Map<String, String> environment)
      throws SQLException, IOException {
    return switch (store) {
      case Storage.Embedded embedded -> {
        Files.createDirectories(embedded.directory());
        try {
          yield ConversationStore.embedded(embedded.directory());
        } catch (SQLException e) {
          throw new ConfigException(
              "conversations: the embedded store in "
                  + embedded.directory().toAbsolutePath()
                  + " cannot be opened ("
                  + e.getMessage().lines().findFirst().orElse("")
                  + "); one host per file: hosts that share conversations need PostgreSQL"
                  + " (conversations.store)");
        }
      }
      case Storage.Jdbc jdbc -> {
        Optional<String> password = jdbc.password(NAME, environment);
        try {
          yield ConversationStore.jdbc(jdbc.url(), jdbc.user(), password);
        } catch (SQLException e) {
          throw new ConfigException(
              "conversations: the store "
                  + jdbc.url().replaceAll("\\?.*", "")
                  + " cannot be reached: "
                  + e.getMessage().lines().findFirst().orElse(""));
        }
      }
    };
  }
}
