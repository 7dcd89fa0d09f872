package dev.toolhost.audit;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.Counts;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * An audit config is the {@code audit:} section of a host config: where the journal of calls is
 * kept, and how much of it.
 *
 * <pre>{@code
 * audit:
 *   store: files                   # or a JDBC URL: jdbc:postgresql://127.0.0.1:5432/toolhost
 *   state_dir: state/audit         # files: the journal's directory, relative to the config file
 *   max_file_mb: 64                # files: a journal file past this is rotated
 *   keep_files: 10                 # files: how many rotated files are kept
 *   user: toolhost                 # a JDBC store's user
 *   password_env: AUDIT_DB_PASSWORD  # the variable that holds its password
 * }</pre>
 *
 * @param store where the journal is kept
 * @param maxFileBytes the size past which a journal file is rotated
 * @param keepFiles how many rotated files are kept beside the current one
 */
public record AuditConfig(Store store, long maxFileBytes, int keepFiles) {

  public AuditConfig {
    Objects.requireNonNull(store, "store");
  }

  /** The directory of the journal when the section names none, relative to the config file. */
  public static final Path DEFAULT_STATE_DIRECTORY = Path.of("state", "audit");

  /** Where the journal is kept: files of JSON lines, or a database table. */
  public sealed interface Store {}

  /**
   * JSON lines in files under a directory, one host's.
   *
   * @param directory the directory
   */
  public record Files(Path directory) implements Store {
    public Files {
      Objects.requireNonNull(directory, "directory");
    }
  }

  /**
   * A PostgreSQL table, shared by several hosts.
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

  /** The journal in files under the directory, 64 MB each, ten rotated ones kept. */
  public static AuditConfig files(Path directory) {
    return new AuditConfig(new Files(directory), 64L << 20, 10);
  }

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added.
   */
  public static AuditConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(AuditExtension.NAME, section, Raw.class);
    Store store = new Files(reading.directory().resolve(DEFAULT_STATE_DIRECTORY));
    String storeText = raw.store() == null ? "files" : raw.store().strip();
    boolean files = storeText.equals("files");
    if (files) {
      if (raw.stateDir() != null) {
        try {
          if (raw.stateDir().isBlank()) {
            throw new InvalidPathException(raw.stateDir(), "it is empty");
          }
          store = new Files(reading.directory().resolve(raw.stateDir().strip()));
        } catch (InvalidPathException e) {
          problems.atValue(
              "/audit/state_dir",
              "'audit.state_dir' is '"
                  + raw.stateDir()
                  + "' (expected a directory for the journal's files)");
        }
      }
      if (raw.user() != null || raw.passwordEnv() != null) {
        String key = raw.user() != null ? "user" : "password_env";
        problems.atValue(
            "/audit/" + key, "'audit." + key + "' is for a JDBC store, and 'audit.store' is files");
      }
    } else if (storeText.startsWith("jdbc:postgresql://")) {
      if (storeText.contains("password=")) {
        problems.atValue(
            "/audit/store",
            "'audit.store' holds a password; name the variable that holds it in"
                + " 'audit.password_env' instead");
      }
      for (String key : new String[] {"state_dir", "max_file_mb", "keep_files"}) {
        boolean given =
            switch (key) {
              case "state_dir" -> raw.stateDir() != null;
              case "max_file_mb" -> raw.maxFileMb() != null;
              default -> raw.keepFiles() != null;
            };
        if (given) {
          problems.atValue(
              "/audit/" + key,
              "'audit." + key + "' is for the files store, and 'audit.store' is a JDBC URL");
        }
      }
      Optional<String> passwordEnv =
          EnvironmentNames.read(
              raw.passwordEnv(),
              "/audit/password_env",
              Optional.of("AUDIT_DB_PASSWORD"),
              "password",
              problems);
      store = new Jdbc(storeText, Optional.ofNullable(raw.user()), passwordEnv);
    } else {
      problems.atValue(
          "/audit/store",
          "'audit.store' is '"
              + raw.store()
              + "' (expected files, or a JDBC URL such as"
              + " jdbc:postgresql://127.0.0.1:5432/toolhost)");
    }
    AuditConfig defaults = files(Path.of("."));
    int megabytes =
        Counts.read(
            raw.maxFileMb(),
            (int) (defaults.maxFileBytes() >> 20),
            1,
            4096,
            "/audit/max_file_mb",
            problems);
    int keep =
        Counts.read(
            raw.keepFiles(), defaults.keepFiles(), 0, 10_000, "/audit/keep_files", problems);
    return new AuditConfig(store, (long) megabytes << 20, keep);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      @JsonPropertyDescription("files, or a JDBC URL such as jdbc:postgresql://host:5432/db")
          String store,
      @JsonPropertyDescription("the journal's directory (state/audit by default)") String stateDir,
      @JsonPropertyDescription("the size in MB past which a journal file is rotated")
          Integer maxFileMb,
      @JsonPropertyDescription("how many rotated journal files are kept") Integer keepFiles,
      @JsonPropertyDescription("a JDBC store's user") String user,
      @JsonPropertyDescription("the environment variable that holds a JDBC store's password")
          String passwordEnv) {}
}
