package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.testing.ScriptedReply;
import dev.toolhost.testing.TestHost;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The conversation store contract on the PostgreSQL on this machine (127.0.0.1:5432, database
 * {@code test}), each test in a schema of its own; and two hosts sharing it continue each other's
 * conversations.
 */
class PostgresConversationStoreTest extends ConversationStoreContract {

  private static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/test";
  private static final String USER = "postgres";

  private String schema;

  @BeforeEach
  void createSchema() throws Exception {
    schema = "conv_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection connection = DriverManager.getConnection(SERVER, USER, "");
        Statement statement = connection.createStatement()) {
      statement.execute("create schema " + schema);
    }
  }

  @AfterEach
  void dropSchema() throws Exception {
    try (Connection connection = DriverManager.getConnection(SERVER, USER, "");
        Statement statement = connection.createStatement()) {
      statement.execute("drop schema " + schema + " cascade");
    }
  }

  @Override
  protected String section() {
    return "store: jdbc:postgresql://127.0.0.1:5432/test?currentSchema="
        + schema
        + "\nuser: "
        + USER;
  }

  @Test
  void twoHostsSharingTheStoreContinueEachOthersTurns() throws Exception {
    TestHost one = host();
    TestHost two = host();
    model.enqueue(ScriptedReply.answer("Noted: heron."));
    String session =
        turn(one, "The code word is heron.", Optional.empty()).path("session_id").asString();
    model.enqueue(ScriptedReply.answer("Noted: and egret."));
    turn(two, "The second word is egret.", Optional.of(session));
    model.enqueue(ScriptedReply.answer("Heron and egret."));
    turn(one, "Which words?", Optional.of(session));

    model.takeRequest();
    model.takeRequest();
    // The first host's copy was a turn behind: it read the store's before its turn.
    assertThat(model.takeRequest().json().path("messages").toString())
        .contains("The code word is heron.")
        .contains("The second word is egret.")
        .contains("Noted: and egret.")
        .contains("Which words?");
  }
}
