package dev.toolhost.longterm;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;

/** The contract on the PostgreSQL on this machine (127.0.0.1:5432, database test, trust). */
class PostgresMemoryStoreTest extends MemoryStoreContract {

  static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
  static final String TABLE = "toolhost_memory_contract_test";

  static LongTermMemoryConfig.Postgres connection(String table) {
    return new LongTermMemoryConfig.Postgres(URL, "postgres", Optional.empty(), table);
  }

  @Override
  MemoryStore open() {
    return PostgresMemoryStore.open(connection(TABLE));
  }

  @Override
  void wipe() {
    drop(TABLE);
  }

  static void drop(String table) {
    try (Connection connection = DriverManager.getConnection(URL, "postgres", "");
        Statement statement = connection.createStatement()) {
      statement.execute("DROP TABLE IF EXISTS " + table);
      statement.execute("DROP TABLE IF EXISTS " + table + "_meta");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
