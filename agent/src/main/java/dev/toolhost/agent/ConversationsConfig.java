package dev.toolhost.agent;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.core.spi.Storage;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * The conversations config is the {@code conversations:} section of a config file: where the
 * conversation API's conversations are kept so that they outlive the host, an embedded H2 file
 * under the state directory ({@code store: embedded}, the default, in {@code state_dir}, {@code
 * state} beside the config file by default) or a database by JDBC URL ({@code store:
 * jdbc:postgresql://...}, with {@code user} and {@code password_env}), shared by several hosts.
 *
 * <p>Without the section, conversations live in the host's memory only, as before. Immutable.
 *
 * @param store where conversations are kept
 */
public record ConversationsConfig(Storage store) {

  public ConversationsConfig {
    Objects.requireNonNull(store, "store");
  }

  /** Conversations kept in the embedded database file under the directory. */
  public static ConversationsConfig embedded(Path directory) {
    return new ConversationsConfig(new Storage.Embedded(directory));
  }

  /** Conversations kept in the database at the JDBC URL. */
  public static ConversationsConfig jdbc(
      String url, Optional<String> user, Optional<String> passwordEnv) {
    return new ConversationsConfig(new Storage.Jdbc(url, user, passwordEnv));
  }

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added. A relative {@code state_dir} is resolved against the config
   * file's directory.
   */
  public static ConversationsConfig read(JsonNode section, SectionReading reading) {
    Raw raw = ConfigSections.bind(ConversationsExtension.NAME, section, Raw.class);
    Storage store =
        Storage.read(
            ConversationsExtension.NAME,
            new Storage.Keys(raw.store(), raw.stateDir(), raw.user(), raw.passwordEnv()),
            "the conversations' database file",
            reading.directory().resolve("state"),
            List.of("jdbc:postgresql://", "jdbc:h2:"),
            "CONVERSATIONS_DB_PASSWORD",
            reading);
    return new ConversationsConfig(store);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      @JsonPropertyDescription("embedded, or a JDBC URL such as jdbc:postgresql://host:5432/db")
          String store,
      @JsonPropertyDescription("the embedded database's directory (state by default)")
          String stateDir,
      @JsonPropertyDescription("a JDBC store's user") String user,
      @JsonPropertyDescription("the environment variable that holds a JDBC store's password")
          String passwordEnv) {}
}
