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
  // This run's: another build's tests on the same database wipe and drop only their own tables.
  private static final String RUN = java.util.UUID.randomUUID().toString().substring(0, 8);

  static final String TABLE = table("toolhost_memory_contract_test");

  /** The name for this run of a test's table: at most 32 characters of the given name. */
  static String table(String name) {
    return name + "_" + RUN;
  }

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
              Optional.empty(),
              MemoryType.FACT,
              "Invoice INV-2291 was paid late.",
              0.6,
              Optional.empty(),
              now,
              now,
              0,
              List.of()),
          Optional.empty());

      assertThat(second.fullText(Owner.of("alice"), "INV-2291", 10, Optional.empty()))
          .containsExactly("m1");
      second.accessed(Owner.of("alice"), List.of("m1"), now.plusSeconds(5));
      assertThat(first.get(Owner.of("alice"), List.of("m1")).getFirst().accessCount()).isEqualTo(1);
      assertThat(second.delete(Owner.of("alice"), "m1")).isTrue();
      assertThat(first.get(Owner.of("alice"), List.of("m1"))).isEmpty();
    }
  }

  @Test
  void aTableMadeBeforeMemoriesHadAgentsGainsTheColumnAndItsRowsAreTheUsers() throws SQLException {
    String table = table("toolhost_memory_old_table_test");
    drop(table);
    try (Connection connection = DriverManager.getConnection(URL, "postgres", "");
        Statement statement = connection.createStatement()) {
      // The table as the store made it before memories had agents.
      statement.execute(
          "CREATE TABLE "
              + table
              + " (id text PRIMARY KEY, user_id text NOT NULL, memory_type text NOT NULL,"
              + " content text NOT NULL, importance double precision NOT NULL, source text,"
              + " created_at bigint NOT NULL, accessed_at bigint NOT NULL, access_count int"
              + " NOT NULL DEFAULT 0, associations text NOT NULL DEFAULT '', links_to"
              + " text[] NOT NULL DEFAULT '{}', embedded_with text, embedding real[], tsv"
              + " tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)");
      statement.execute(
          "INSERT INTO "
              + table
              + " (id, user_id, memory_type, content, importance, created_at, accessed_at)"
              + " VALUES ('old', 'alice', 'fact', 'Invoice INV-2291 was paid late.', 0.6, 0, 0)");
    }
    try (MemoryStore store = PostgresMemoryStore.open(connection(table))) {
      assertThat(store.fullText(Owner.of("alice"), "INV-2291", 10, Optional.empty()))
          .containsExactly("old");
      assertThat(store.get(Owner.of("alice", "planner"), List.of("old")))
          .extracting(Memory::agent)
          .containsExactly(Optional.empty());
    } finally {
      drop(table);
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
