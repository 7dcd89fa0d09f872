package dev.toolhost.audit;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.Counts;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.core.spi.Storage;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import tools.jackson.databind.JsonNode;

/**
 * An audit config is the {@code audit:} section of a host config: where the journal of calls is
 * kept, and how much of it.
 *
 * <pre>{@code
 * audit:
 *   store: embedded                # or a JDBC URL: jdbc:postgresql://127.0.0.1:5432/toolhost
 *   state_dir: state/audit         # embedded: the journal's directory, relative to the config file
 *   max_file_mb: 64                # embedded: a journal file past this is rotated
 *   keep_files: 10                 # embedded: how many rotated files are kept
 *   user: toolhost                 # a JDBC store's user
 *   password_env: AUDIT_DB_PASSWORD  # the variable that holds its password
 * }</pre>
 *
 * @param store where the journal is kept
 * @param maxFileBytes the size past which a journal file is rotated
 * @param keepFiles how many rotated files are kept beside the current one
 */
public record AuditConfig(Storage store, long maxFileBytes, int keepFiles) {

  public AuditConfig {
    Objects.requireNonNull(store, "store");
  }

  /** The directory of the journal when the section names none, relative to the config file. */
  public static final Path DEFAULT_STATE_DIRECTORY = Path.of("state", "audit");

  /** The journal in files under the directory, 64 MB each, ten rotated ones kept. */
  public static AuditConfig embedded(Path directory) {
    return new AuditConfig(new Storage.Embedded(directory), 64L << 20, 10);
  }

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added.
   */
  public static AuditConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(AuditExtension.NAME, section, Raw.class);
    Storage store =
        Storage.read(
            AuditExtension.NAME,
            new Storage.Keys(raw.store(), raw.stateDir(), raw.user(), raw.passwordEnv()),
            "the journal's files",
            reading.directory().resolve(DEFAULT_STATE_DIRECTORY),
            List.of("jdbc:postgresql://"),
            "AUDIT_DB_PASSWORD",
            reading);
    if (store instanceof Storage.Jdbc) {
      if (raw.maxFileMb() != null) {
        problems.atValue(
            "/audit/max_file_mb",
            "'audit.max_file_mb' is for the embedded store, and 'audit.store' is a JDBC URL");
      }
      if (raw.keepFiles() != null) {
        problems.atValue(
            "/audit/keep_files",
            "'audit.keep_files' is for the embedded store, and 'audit.store' is a JDBC URL");
      }
    }
    AuditConfig defaults = embedded(Path.of("."));
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
      @JsonPropertyDescription("embedded, or a JDBC URL such as jdbc:postgresql://host:5432/db")
          String store,
      @JsonPropertyDescription("the journal's directory (state/audit by default)") String stateDir,
      @JsonPropertyDescription("the size in MB past which a journal file is rotated")
          Integer maxFileMb,
      @JsonPropertyDescription("how many rotated journal files are kept") Integer keepFiles,
      @JsonPropertyDescription("a JDBC store's user") String user,
      @JsonPropertyDescription("the environment variable that holds a JDBC store's password")
          String passwordEnv) {}
}
