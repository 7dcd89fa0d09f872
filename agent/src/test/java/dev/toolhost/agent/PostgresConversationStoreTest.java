package dev.toolhost.agent;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The conversation store contract on the PostgreSQL on this machine (127.0.0.1:5432, database
 * {@code test}), each test in a schema of its own.
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
}
