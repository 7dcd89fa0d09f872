package dev.toolhost.agent;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
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
public record ConversationsConfig(Store store) {

  public ConversationsConfig {
    Objects.requireNonNull(store, "store");
  }

  /** Where conversations are kept: an embedded database file, or a database by JDBC URL. */
  public sealed interface Store {}

  /**
   * The embedded H2 database file, {@code conversations.mv.db} in the directory: one host.
   *
   * @param directory its directory
   */
  public record Embedded(Path directory) implements Store {
    public Embedded {
      Objects.requireNonNull(directory, "directory");
    }
  }

  /**
   * A database by JDBC URL (PostgreSQL, shared by several hosts).
   *
   * @param url the JDBC URL
   * @param user the user, if not in the URL
   * @param passwordEnv the environment variable that holds the password, if one is needed
   */
  public record Jdbc(String url, Optional<String> user, Optional<String> passwordEnv)
      implements Store {
    public Jdbc {
      Objects.requireNonNull(url, "url");
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(passwordEnv, "passwordEnv");
    }
  }

  /** Conversations kept in the embedded database file under the directory. */
  public static ConversationsConfig embedded(Path directory) {
    return new ConversationsConfig(new Embedded(directory));
  }

  /** Conversations kept in the database at the JDBC URL. */
  public static ConversationsConfig jdbc(
      String url, Optional<String> user, Optional<String> passwordEnv) {
    return new ConversationsConfig(new Jdbc(url, user, passwordEnv));
  }

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added. A relative {@code state_dir} is resolved against the config
   * file's directory.
   */
  public static ConversationsConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(ConversationsExtension.NAME, section, Raw.class);
    Store store = new Embedded(reading.directory().resolve("state"));
    String storeText = raw.store() == null ? "embedded" : raw.store().strip();
    if (storeText.equals("embedded")) {
      if (raw.stateDir() != null) {
        try {
          if (raw.stateDir().isBlank()) {
            throw new InvalidPathException(raw.stateDir(), "it is empty");
          }
          store = new Embedded(reading.directory().resolve(raw.stateDir().strip()));
        } catch (InvalidPathException e) {
          problems.atValue(
              "/conversations/state_dir",
              "'conversations.state_dir' is '"
                  + raw.stateDir()
                  + "' (expected a directory for the conversations' database file)");
        }
      }
      if (raw.user() != null || raw.passwordEnv() != null) {
        String key = raw.user() != null ? "user" : "password_env";
        problems.atValue(
            "/conversations/" + key,
            "'conversations."
                + key
                + "' is for a JDBC store, and 'conversations.store' is embedded");
      }
    } else if (storeText.startsWith("jdbc:postgresql://") || storeText.startsWith("jdbc:h2:")) {
      if (storeText.contains("password=")) {
        problems.atValue(
            "/conversations/store",
            "'conversations.store' holds a password; name the variable that holds it in"
                + " 'conversations.password_env' instead");
      }
      if (raw.stateDir() != null) {
        problems.atValue(
            "/conversations/state_dir",
            "'conversations.state_dir' is for the embedded store, and 'conversations.store' is a"
                + " JDBC URL");
      }
      Optional<String> passwordEnv =
          EnvironmentNames.read(
              raw.passwordEnv(),
              "/conversations/password_env",
              Optional.of("CONVERSATIONS_DB_PASSWORD"),
              "password",
              problems);
      store = new Jdbc(storeText, Optional.ofNullable(raw.user()), passwordEnv);
    } else {
      problems.atValue(
          "/conversations/store",
          "'conversations.store' is '"
              + raw.store()
              + "' (expected embedded, or a JDBC URL such as"
              + " jdbc:postgresql://127.0.0.1:5432/toolhost)");
    }
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
