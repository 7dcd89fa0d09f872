package dev.toolhost.core.spi;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A storage is where an extension keeps what must outlive its host: embedded, in files under a
 * directory of one host, or in a database by JDBC URL that hosts share. Every section with a store
 * reads it from the same four keys, one way ({@link #read}):
 *
 * <pre>{@code
 * store: embedded                # or a JDBC URL: jdbc:postgresql://127.0.0.1:5432/toolhost
 * state_dir: state               # embedded: the directory, relative to the config file
 * user: toolhost                 # a JDBC store's user
 * password_env: DB_PASSWORD      # the variable that holds its password; never the password
 * }</pre>
 */
public sealed interface Storage {

  /**
   * Files under a directory: one host's.
   *
   * @param directory the directory
   */
  record Embedded(Path directory) implements Storage {
    public Embedded {
      Objects.requireNonNull(directory, "directory");
    }
  }

  /**
   * A database by JDBC URL, shared by the hosts that name it.
   *
   * @param url the JDBC URL
   * @param user the user, if not in the URL
   * @param passwordEnv the environment variable that holds the password, if one is needed
   */
  record Jdbc(String url, Optional<String> user, Optional<String> passwordEnv) implements Storage {
    public Jdbc {
      Objects.requireNonNull(url, "url");
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(passwordEnv, "passwordEnv");
    }

    /**
     * The password, read from its variable in the environment.
     *
     * @throws ConfigException when the variable is named and not set
     */
    public Optional<String> password(String section, Map<String, String> environment) {
      Optional<String> password = passwordEnv.map(environment::get);
      if (passwordEnv.isPresent() && password.isEmpty()) {
        throw new ConfigException(
            section
                + ": the store's password variable "
                + passwordEnv.get()
                + " ("
                + section
                + ".password_env) is not set");
      }
      return password;
    }
  }

  /**
   * The four keys' values as a section's raw record holds them, each null when absent.
   *
   * @param store {@code embedded} or a JDBC URL
   * @param stateDir the embedded store's directory
   * @param user a JDBC store's user
   * @param passwordEnv the variable that holds a JDBC store's password
   */
  record Keys(String store, String stateDir, String user, String passwordEnv) {}

  /**
   * Reads the keys of a section, adding their problems (at their lines) to the reading's; the
   * result is only meaningful when none was added.
   *
   * @param section the section's key, for the messages and the problems' places
   * @param keys the keys' values
   * @param holds what the embedded store's directory holds, for a message ("the schedules' database
   *     file")
   * @param defaultDirectory the embedded store's directory when the section names none
   * @param urls the JDBC URL prefixes the extension can use ({@code jdbc:postgresql://})
   * @param passwordEnv the variable name a message suggests for the password
   */
  static Storage read(
      String section,
      Keys keys,
      String holds,
      Path defaultDirectory,
      List<String> urls,
      String passwordEnv,
      SectionReading reading) {
    ConfigProblems problems = reading.problems();
    String at = "/" + section + "/";
    String storeText = keys.store() == null ? "embedded" : keys.store().strip();
    if (storeText.equals("embedded")) {
      Storage storage = new Embedded(defaultDirectory);
      if (keys.stateDir() != null) {
        try {
          if (keys.stateDir().isBlank()) {
            throw new InvalidPathException(keys.stateDir(), "it is empty");
          }
          storage = new Embedded(reading.directory().resolve(keys.stateDir().strip()));
        } catch (InvalidPathException e) {
          problems.atValue(
              at + "state_dir",
              "'"
                  + section
                  + ".state_dir' is '"
                  + keys.stateDir()
                  + "' (expected a directory for "
                  + holds
                  + ")");
        }
      }
      if (keys.user() != null || keys.passwordEnv() != null) {
        String key = keys.user() != null ? "user" : "password_env";
        problems.atValue(
            at + key,
            "'"
                + section
                + "."
                + key
                + "' is for a JDBC store, and '"
                + section
                + ".store' is embedded");
      }
      return storage;
    }
    if (urls.stream().anyMatch(storeText::startsWith)) {
      if (storeText.contains("password=")) {
        problems.atValue(
            at + "store",
            "'"
                + section
                + ".store' holds a password; name the variable that holds it in '"
                + section
                + ".password_env' instead");
      }
      if (keys.stateDir() != null) {
        problems.atValue(
            at + "state_dir",
            "'"
                + section
                + ".state_dir' is for the embedded store, and '"
                + section
                + ".store' is a JDBC URL");
      }
      Optional<String> passwordVariable =
          EnvironmentNames.read(
              keys.passwordEnv(),
              at + "password_env",
              Optional.of(passwordEnv),
              "password",
              problems);
      return new Jdbc(storeText, Optional.ofNullable(keys.user()), passwordVariable);
    }
    problems.atValue(
        at + "store",
        "'"
            + section
            + ".store' is '"
            + keys.store()
            + "' (expected embedded, or a JDBC URL such as"
            + " jdbc:postgresql://127.0.0.1:5432/toolhost)");
    return new Embedded(defaultDirectory);
  }
}
