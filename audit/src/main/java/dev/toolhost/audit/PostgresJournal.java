package dev.toolhost.audit;

import java.io.IOException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * A PostgreSQL journal keeps audit entries in the table {@code toolhost_audit}, shared by every
 * host that names the same database; its digest key is in {@code toolhost_audit_key}, made by the
 * first host and read by the others, so the same arguments have the same digest on every host.
 *
 * <p>Each batch is one transaction: committed, its entries are as durable as the database makes
 * them. The writer's connection is its own; each query opens one of its own, so a long query never
 * holds the writer back.
 */
final class PostgresJournal implements Journal {

  private static final String TABLE = "toolhost_audit";
  private static final String COLUMNS =
      "at, call_id, principal, user_name, profile, session, agent, tool, source, outcome,"
          + " duration_us, arguments_digest";

  private final String url;
  private final Properties properties;
  private final Connection writer;
  private final byte[] key;

  private PostgresJournal(String url, Properties properties) throws SQLException {
    this.url = url;
    this.properties = properties;
    this.writer = DriverManager.getConnection(url, properties);
    try {
      try (Statement statement = writer.createStatement()) {
        statement.execute(
            "CREATE TABLE IF NOT EXISTS "
                + TABLE
                + " (id BIGSERIAL PRIMARY KEY, at TIMESTAMPTZ NOT NULL, call_id TEXT NOT NULL,"
                + " principal TEXT, user_name TEXT, profile TEXT NOT NULL, session TEXT,"
                + " agent TEXT, tool TEXT NOT NULL, source TEXT, outcome TEXT NOT NULL,"
                + " duration_us BIGINT NOT NULL, arguments_digest TEXT NOT NULL)");
        statement.execute("CREATE INDEX IF NOT EXISTS " + TABLE + "_at ON " + TABLE + " (at)");
        statement.execute(
            "CREATE TABLE IF NOT EXISTS "
                + TABLE
                + "_key (id INT PRIMARY KEY CHECK (id = 1), key BYTEA NOT NULL)");
      }
      byte[] fresh = new byte[32];
      new SecureRandom().nextBytes(fresh);
      try (PreparedStatement insert =
          writer.prepareStatement(
              "INSERT INTO " + TABLE + "_key (id, key) VALUES (1, ?) ON CONFLICT DO NOTHING")) {
        insert.setBytes(1, fresh);
        insert.executeUpdate();
      }
      try (Statement statement = writer.createStatement();
          ResultSet row = statement.executeQuery("SELECT key FROM " + TABLE + "_key")) {
        row.next();
        this.key = row.getBytes(1);
      }
    } catch (SQLException | RuntimeException e) {
      writer.close();
      throw e;
    }
  }

  /**
   * Opens the journal in the database, making its tables if missing.
   *
   * @throws IOException when the database cannot be reached or refuses the tables
   */
  static PostgresJournal open(String url, Optional<String> user, Optional<String> password)
      throws IOException {
    Properties properties = new Properties();
    user.ifPresent(value -> properties.setProperty("user", value));
    password.ifPresent(value -> properties.setProperty("password", value));
    try {
      return new PostgresJournal(url, properties);
    } catch (SQLException e) {
      throw new IOException("the audit journal's database refused: " + e.getMessage(), e);
    }
  }

  @Override
  public byte[] key() {
    return key.clone();
  }

  @Override
  public synchronized void append(List<AuditEntry> entries) throws IOException {
    try (PreparedStatement insert =
        writer.prepareStatement(
            "INSERT INTO " + TABLE + " (" + COLUMNS + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")) {
      for (AuditEntry entry : entries) {
        insert.setTimestamp(1, Timestamp.from(entry.at()));
        insert.setString(2, entry.callId());
        insert.setString(3, entry.principal().orElse(null));
        insert.setString(4, entry.user().orElse(null));
        insert.setString(5, entry.profile());
        insert.setString(6, entry.session().orElse(null));
        insert.setString(7, entry.agent().orElse(null));
        insert.setString(8, entry.tool());
        insert.setString(9, entry.source().orElse(null));
        insert.setString(10, entry.outcome());
        insert.setLong(11, entry.durationMicros());
        insert.setString(12, entry.argumentsDigest());
        insert.addBatch();
      }
      // Autocommit off for the batch: all its entries or none.
      writer.setAutoCommit(false);
      try {
        insert.executeBatch();
        writer.commit();
      } catch (SQLException e) {
        writer.rollback();
        throw e;
      } finally {
        writer.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw new IOException("the audit journal's database refused a batch: " + e.getMessage(), e);
    }
  }

  @Override
  public List<AuditEntry> query(AuditQuery query) throws IOException {
    StringBuilder sql = new StringBuilder("SELECT ").append(COLUMNS).append(" FROM ").append(TABLE);
    List<Object> values = new ArrayList<>();
    List<String> conditions = new ArrayList<>();
    query.user().ifPresent(value -> condition(conditions, values, "user_name = ?", value));
    query.principal().ifPresent(value -> condition(conditions, values, "principal = ?", value));
    query.tool().ifPresent(value -> condition(conditions, values, "tool = ?", value));
    query
        .since()
        .ifPresent(value -> condition(conditions, values, "at >= ?", Timestamp.from(value)));
    if (!conditions.isEmpty()) {
      sql.append(" WHERE ").append(String.join(" AND ", conditions));
    }
    // By the calls' time, not by insertion: hosts sharing the table write their batches when each
    // host's writer wakes, so one host's earlier call may land after another's later one.
    sql.append(" ORDER BY at DESC, id DESC LIMIT ").append(query.limit());
    try (Connection connection = DriverManager.getConnection(url, properties);
        PreparedStatement select = connection.prepareStatement(sql.toString())) {
      for (int i = 0; i < values.size(); i++) {
        select.setObject(i + 1, values.get(i));
      }
      List<AuditEntry> entries = new ArrayList<>();
      try (ResultSet rows = select.executeQuery()) {
        while (rows.next()) {
          entries.add(
              new AuditEntry(
                  rows.getTimestamp(1).toInstant(),
                  rows.getString(2),
                  Optional.ofNullable(rows.getString(3)),
                  Optional.ofNullable(rows.getString(4)),
                  rows.getString(5),
                  Optional.ofNullable(rows.getString(6)),
                  Optional.ofNullable(rows.getString(7)),
                  rows.getString(8),
                  Optional.ofNullable(rows.getString(9)),
                  rows.getString(10),
                  rows.getLong(11),
                  rows.getString(12)));
        }
      }
      Collections.reverse(entries);
      return entries;
    } catch (SQLException e) {
      throw new IOException("the audit journal's database refused a query: " + e.getMessage(), e);
    }
  }

  private static void condition(
      List<String> conditions, List<Object> values, String condition, Object value) {
    conditions.add(condition);
    values.add(value);
  }

  @Override
  public synchronized void close() throws IOException {
    try {
      writer.close();
    } catch (SQLException e) {
      throw new IOException(e.getMessage(), e);
    }
  }
}
