package dev.toolhost.agent;

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

/** The {@code conversations:} section: where conversations are kept, and its problems. */
class ConversationsConfigTest {

  @TempDir Path dir;

  private ConversationsConfig read(String yaml) {
    ConversationsExtension extension = new ConversationsExtension();
    return TestHost.config(yaml, List.of(extension), dir).read(extension).orElseThrow();
  }

  @Test
  void anEmptySectionKeepsConversationsInTheStateDirectoryBesideTheFile() {
    assertThat(read("conversations: {}\n").store())
        .isEqualTo(new Storage.Embedded(dir.resolve("state")));
  }

  @Test
  void aJdbcStoreTakesItsUserAndPasswordVariable() {
    assertThat(
            read("""
                    conversations:
                      store: jdbc:postgresql://127.0.0.1:5432/toolhost
                      user: toolhost
                      password_env: CONVERSATIONS_DB_PASSWORD
                    """)
                .store())
        .isEqualTo(
            new Storage.Jdbc(
                "jdbc:postgresql://127.0.0.1:5432/toolhost",
                Optional.of("toolhost"),
                Optional.of("CONVERSATIONS_DB_PASSWORD")));
  }

  @Test
  void aStoreOfAnotherKindOrAPasswordInTheUrlIsRefusedAtItsLine() {
    assertThatThrownBy(() -> read("conversations:\n  store: mongodb://x\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 2")
        .hasMessageContaining("expected embedded, or a JDBC URL");
    assertThatThrownBy(
            () ->
                read(
                    "conversations:\n"
                        + "  store: jdbc:postgresql://h/db?password=hunter2\n"
                        + "  state_dir: state\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("holds a password")
        .hasMessageContaining("'conversations.state_dir' is for the embedded store");
  }
}
