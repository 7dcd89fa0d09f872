package dev.toolhost.agent;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The conversation store contract on the embedded H2 file under a state directory. */
class EmbeddedConversationStoreTest extends ConversationStoreContract {

  @TempDir Path dir;

  @Override
  protected String section() {
    return "state_dir: " + dir.resolve("state");
  }
}
