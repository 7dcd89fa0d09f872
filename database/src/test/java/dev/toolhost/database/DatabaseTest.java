package dev.toolhost.database;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Databases on the PostgreSQL on this machine (127.0.0.1:5432, database test, trust) and on H2. */
class DatabaseTest {

  private static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/test";

  @TempDir Path directory;

  private static Database postgres(String what) throws SQLException {
    return Database.open(POSTGRES, Optional.of("postgres"), Optional.empty(), what);
  }

  private static int backend(Database database) throws SQLException {
    try (Connection connection = database.connection();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT pg_backend_pid()")) {
      rows.next();
      return rows.getInt(1);
    }
  }

  // The connections PostgreSQL has open for the application name, seen from a connection of its
  // own.
  private static int connectionsOf(String what) throws SQLException {
    try (Connection connection = DriverManager.getConnection(POSTGRES, "postgres", "");
        Statement statement = connection.createStatement();
        ResultSet rows =
            statement.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'toolhost "
                    + what
                    + "'")) {
      rows.next();
      return rows.getInt(1);
    }
  }

  @Test
  void operationsOneAfterAnotherOnPostgresReuseOnePooledConnection() throws SQLException {
    String what = "test " + UUID.randomUUID();
    try (Database database = postgres(what)) {
      int first = backend(database);

      assertThat(backend(database)).isEqualTo(first);
      assertThat(backend(database)).isEqualTo(first);
      assertThat(connectionsOf(what)).isEqualTo(1);
      assertThat(database.dialect()).isEqualTo(Database.Dialect.POSTGRESQL);
    }
  }

  @Test
  void operationsAtOnceOnPostgresTakeUpToThePoolsSizeAndClosingEndsThemAll() throws SQLException {
    String what = "test " + UUID.randomUUID();
    try (Database database = postgres(what)) {
      List<Connection> held = new ArrayList<>();
      try {
        for (int i = 0; i < Database.POOL_SIZE; i++) {
          held.add(database.connection());
        }
        assertThat(connectionsOf(what)).isEqualTo(Database.POOL_SIZE);
      } finally {
        for (Connection connection : held) {
          connection.close();
        }
      }
      database.close();

      // A closed connection's backend leaves pg_stat_activity a moment after the client is gone.
      await().atMost(Duration.ofSeconds(10)).until(() -> connectionsOf(what) == 0);
    }
  }

  @Test
  void anUnreachablePostgresFailsToOpenNamingTheCause() {
    assertThatThrownBy(
            () ->
                Database.open(
                    "jdbc:postgresql://127.0.0.1:1/test",
                    Optional.of("postgres"),
                    Optional.empty(),
                    "test store"))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("127.0.0.1:1");
  }

  @Test
  void aUrlOfAnotherDatabaseIsRefusedNamingWhatTheDatabaseIsForWithoutItsQuery() {
    assertThatThrownBy(
            () ->
                Database.open(
                    "jdbc:mysql://db/x?password=hunter2",
                    Optional.empty(),
                    Optional.empty(),
                    "schedule store"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "A schedule store is jdbc:postgresql:... or jdbc:h2:..., not 'jdbc:mysql://db/x'");
  }

  @Test
  void aDescriptionLeavesOutTheUrlsQueryWhereAPasswordMayBe() throws SQLException {
    String what = "test " + UUID.randomUUID();
    try (Database database =
        Database.open(POSTGRES + "?password=", Optional.of("postgres"), Optional.empty(), what)) {
      assertThat(database.description()).isEqualTo(POSTGRES);
    }
  }

  @Test
  void anEmbeddedDatabaseKeepsItsFileAndWhatWasCommittedInIt() throws SQLException {
    try (Database database = Database.embedded(directory.resolve("kept"));
        Connection connection = database.connection();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE t (v INT)");
      statement.execute("INSERT INTO t VALUES (7)");
      assertThat(database.dialect()).isEqualTo(Database.Dialect.H2);
      assertThat(database.description()).endsWith("kept.mv.db");
    }
    try (Database database = Database.embedded(directory.resolve("kept"));
        Connection connection = database.connection();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT v FROM t")) {
      assertThat(rows.next()).isTrue();
      assertThat(rows.getInt(1)).isEqualTo(7);
    }
    assertThat(directory.resolve("kept.mv.db")).exists();
  }

  @Test
  void anH2UrlIsWrittenAsCommitsHappenUnlessItSetsAWriteDelayOfItsOwn() {
    assertThat(Database.durable("jdbc:h2:file:/x")).isEqualTo("jdbc:h2:file:/x;WRITE_DELAY=0");
    assertThat(Database.durable("jdbc:h2:file:/x;write_delay=500"))
        .isEqualTo("jdbc:h2:file:/x;write_delay=500");
  }
}
