package dev.toolhost.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.Storage;
import dev.toolhost.testing.TestHost;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The audit section reads its store as every section does, and refuses keys of the other one. */
class AuditConfigTest {

  @TempDir Path directory;

  private AuditConfig read(String section) {
    AuditExtension extension = new AuditExtension();
    return TestHost.config("audit:\n" + section.indent(2), List.of(extension), directory)
        .read(extension)
        .orElseThrow();
  }

  @Test
  void anEmptySectionKeepsTheJournalUnderStateAuditBesideTheConfig() {
    AuditConfig config = read("{}");

    assertThat(config.store()).isEqualTo(new Storage.Embedded(directory.resolve("state/audit")));
    assertThat(config.maxFileBytes()).isEqualTo(64L << 20);
    assertThat(config.keepFiles()).isEqualTo(10);
  }

  @Test
  void aJdbcStoreTakesItsUserAndPasswordVariableAndRefusesTheEmbeddedStoresKeys() {
    assertThat(read("store: jdbc:postgresql://db:5432/toolhost\nuser: toolhost").store())
        .isEqualTo(
            new Storage.Jdbc(
                "jdbc:postgresql://db:5432/toolhost", Optional.of("toolhost"), Optional.empty()));
    assertThatThrownBy(() -> read("store: jdbc:postgresql://db:5432/toolhost\nkeep_files: 3"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 3, column 15: 'audit.keep_files' is for the embedded store, and"
                + " 'audit.store' is a JDBC URL");
    assertThatThrownBy(() -> read("user: toolhost"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 9: 'audit.user' is for a JDBC store, and 'audit.store'"
                + " is embedded");
  }
}
