package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

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

  @Test
  void twoHostsOnOneTableShareTheirMemories() {
    try (MemoryStore first = open();
        MemoryStore second = open()) {
      Instant now = Instant.parse("2026-01-01T00:00:00Z");
      first.save(
          new Memory(
              "m1",
              "alice",
              MemoryType.FACT,
              "Invoice INV-2291 was paid late.",
              0.6,
              Optional.empty(),
              now,
              now,
              0,
              List.of()),
          Optional.empty());

      assertThat(second.fullText("alice", "INV-2291", 10, Optional.empty())).containsExactly("m1");
      second.accessed("alice", List.of("m1"), now.plusSeconds(5));
      assertThat(first.get("alice", List.of("m1")).getFirst().accessCount()).isEqualTo(1);
      assertThat(second.delete("alice", "m1")).isTrue();
      assertThat(first.get("alice", List.of("m1"))).isEmpty();
    }
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
      statement.execute("DROP TABLE IF EXISTS " + table + "_skill");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
