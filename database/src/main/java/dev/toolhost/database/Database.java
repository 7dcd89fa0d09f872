package dev.toolhost.database;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;

/**
 * A database is where a capability keeps what outlives its host: an embedded H2 file (one host) or
 * PostgreSQL by JDBC URL (several hosts sharing it).
 *
 * <p>PostgreSQL's connections come from a pool (HikariCP): opening one costs a TCP connection, a
 * backend process and the driver's start-up queries, 2.5 to 10 ms on the test machine (quiet or
 * loaded) against 0.1 to 0.3 ms for a statement on an open one (BENCHMARKS.md, DatabaseLoad), so a
 * store that opened one per operation paid that on every conversation turn and every scheduler
 * poll. The pool keeps one connection when idle and at most {@value #POOL_SIZE}, so that many hosts
 * stay well inside PostgreSQL's default of 100.
 *
 * <p>An embedded database keeps one connection open for its life: the file stays open, so a second
 * process is refused it at once, and H2's further connections to an open database are sessions,
 * cheap without a pool. Commits are written to the file as they happen ({@code WRITE_DELAY=0}), so
 * that a write the store acknowledged survives the host.
 *
 * <p>Thread-safe; {@link #close()} closes the pool or the embedded file.
 */
public final class Database implements AutoCloseable {

  /** The most connections a PostgreSQL database's pool holds. */
  public static final int POOL_SIZE = 8;

  /** How long an operation waits for a pooled connection before it fails. */
  static final Duration CONNECTION_WAIT = Duration.ofSeconds(10);

  /** The kind of database, for the SQL that differs between them. */
  public enum Dialect {
    H2,
    POSTGRESQL
  }

  private final DataSource dataSource;
  private final Dialect dialect;
  private final String description;
  private final AutoCloseable resource;

  private Database(
      DataSource dataSource, Dialect dialect, String description, AutoCloseable resource) {
    this.dataSource = dataSource;
    this.dialect = dialect;
    this.description = description;
    this.resource = resource;
  }

  /**
   * The embedded database in the file {@code base.mv.db}, created when missing.
   *
   * @param base the file's path without {@code .mv.db}
   * @throws SQLException when the file cannot be opened (another process has it open, say)
   */
  public static Database embedded(Path base) throws SQLException {
    Path file = base.toAbsolutePath();
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL(durable("jdbc:h2:file:" + file));
    return new Database(h2, Dialect.H2, file + ".mv.db", h2.getConnection());
  }

  /**
   * The database at a JDBC URL: {@code jdbc:postgresql://...} (pooled) or {@code jdbc:h2:...}.
   *
   * @param what what the database is for, in messages and the pool's name ({@code "schedule
   *     store"})
   * @param password empty for none (trust authentication)
   * @throws SQLException when the database cannot be reached
   * @throws IllegalArgumentException for a URL of another database
   */
  public static Database open(
      String url, Optional<String> user, Optional<String> password, String what)
      throws SQLException {
    Objects.requireNonNull(what, "what");
    if (url.startsWith("jdbc:postgresql:")) {
      return postgres(url, user, password, what);
    }
    if (url.startsWith("jdbc:h2:")) {
      JdbcDataSource h2 = new JdbcDataSource();
      h2.setURL(durable(url));
      user.ifPresent(h2::setUser);
      password.ifPresent(h2::setPassword);
      return new Database(h2, Dialect.H2, redacted(url), h2.getConnection());
    }
    throw new IllegalArgumentException(
        "A " + what + " is jdbc:postgresql:... or jdbc:h2:..., not '" + redacted(url) + "'");
  }

  private static Database postgres(
      String url, Optional<String> user, Optional<String> password, String what)
      throws SQLException {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setDriverClassName("org.postgresql.Driver");
    user.ifPresent(config::setUsername);
    password.ifPresent(config::setPassword);
    config.setPoolName("toolhost " + what);
    // Named in pg_stat_activity, for an operator counting a host's connections.
    config.addDataSourceProperty("ApplicationName", "toolhost " + what);
    config.setMaximumPoolSize(POOL_SIZE);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(CONNECTION_WAIT.toMillis());
    try {
      // The pool opens its first connection here: an unreachable database fails the start.
      HikariDataSource pool = new HikariDataSource(config);
      return new Database(pool, Dialect.POSTGRESQL, redacted(url), pool);
    } catch (HikariPool.PoolInitializationException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new SQLException(cause.getMessage(), cause);
    }
  }

  /**
   * The H2 URL with commits written to the file as they happen ({@code WRITE_DELAY=0}), unless it
   * sets a write delay of its own.
   */
  static String durable(String url) {
    return url.toUpperCase(Locale.ROOT).contains(";WRITE_DELAY=") ? url : url + ";WRITE_DELAY=0";
  }

  /** The URL without its query, where a password may hide. */
  public static String redacted(String url) {
    int query = url.indexOf('?');
    return query < 0 ? url : url.substring(0, query);
  }

  /** The data source, for a library that takes one (db-scheduler). */
  public DataSource dataSource() {
    return dataSource;
  }

  /** A connection; the caller closes it, which gives a pooled one back. */
  public Connection connection() throws SQLException {
    return dataSource.getConnection();
  }

  /** The kind of database. */
  public Dialect dialect() {
    return dialect;
  }

  /** The embedded file, or the URL without its query, for messages. */
  public String description() {
    return description;
  }

  /** Closes the pool's connections, or the embedded database and its file. */
  @Override
  public void close() {
    try {
      resource.close();
    } catch (Exception e) {
      // Closing: nothing left to do with it.
    }
  }
}
