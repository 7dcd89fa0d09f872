package dev.toolhost.scheduling;

import dev.toolhost.database.Database;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A schedule store is the database scheduled tasks live in: an embedded H2 file (one host) or
 * PostgreSQL (several hosts). It holds two tables: db-scheduler's, {@value #TASKS} (one row per
 * task: its next fire, its data as JSON, who is running it and their heartbeat), and {@value #RUNS}
 * (one row per fire: a unique key on task and due instant, so that no fire runs twice). Both are
 * created when missing.
 *
 * <p>Each operation, db-scheduler's too, takes a connection from the {@link Database} (PostgreSQL's
 * pooled) and gives it back; the embedded store keeps one open for its whole life, so that the
 * database stays open and a second process is refused at once.
 *
 * <p>A write it acknowledges is in the database file: an H2 store is opened with {@code
 * WRITE_DELAY=0}, so that each commit is written to the file before it returns (H2's default holds
 * commits in memory for half a second, and a {@code kill -9} loses them). PostgreSQL writes its log
 * before a commit returns. Thread-safe.
 */
public final class ScheduleStore implements AutoCloseable {

  /** db-scheduler's table. */
  public static final String TASKS = "toolhost_scheduled_tasks";

  /** The runs table. */
  public static final String RUNS = "toolhost_schedule_runs";

  private final Database database;

  private ScheduleStore(Database database) {
    this.database = database;
  }

  /**
   * The embedded store: an H2 database file {@code schedules.mv.db} in the directory, created with
   * its tables when missing.
   *
   * @throws SQLException when the file cannot be opened (another process has it open, say)
   */
  public static ScheduleStore embedded(Path directory) throws SQLException {
    return withTables(Database.embedded(directory.resolve("schedules")));
  }

  /**
   * A store on a database by JDBC URL ({@code jdbc:postgresql://...} or {@code jdbc:h2:...}), its
   * tables created when missing.
   *
   * @param password empty for none (trust authentication)
   * @throws SQLException when the database cannot be reached
   * @throws IllegalArgumentException for a URL of another database
   */
  public static ScheduleStore jdbc(String url, Optional<String> user, Optional<String> password)
      throws SQLException {
    return withTables(Database.open(url, user, password, "schedule store"));
  }

  /** The store on the database with its tables created when missing; closed when that fails. */
  private static ScheduleStore withTables(Database database) throws SQLException {
    ScheduleStore store = new ScheduleStore(database);
    try {
      store.createTables();
    } catch (SQLException | RuntimeException e) {
      store.close();
      throw e;
    }
    return store;
  }

  /** The data source, for db-scheduler. */
  DataSource dataSource() {
    return database.dataSource();
  }

  /** A connection to the store's database, for reports and audits; the caller closes it. */
  public Connection connection() throws SQLException {
    return database.connection();
  }

  /** The database behind it. */
  public Database.Dialect dialect() {
    return database.dialect();
  }

  /** The database file or URL (without its query), for messages. */
  public String description() {
    return database.description();
  }

  private void createTables() throws SQLException {
    String binary = database.dialect() == Database.Dialect.POSTGRESQL ? "bytea" : "varbinary";
    String time = "timestamp(6) with time zone";
    try (Connection connection = database.connection();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "create table if not exists "
              + TASKS
              + " (task_name varchar(100) not null, task_instance varchar(100) not null,"
              + " task_data "
              + binary
              + ", execution_time "
              + time
              + " not null, picked boolean not null, picked_by varchar(100), last_success "
              + time
              + ", last_failure "
              + time
              + ", consecutive_failures int, last_heartbeat "
              + time
              + ", version bigint not null, priority smallint,"
              + " primary key (task_name, task_instance))");
      statement.execute(
          "create index if not exists "
              + TASKS
              + "_execution_time on "
              + TASKS
              + " (execution_time)");
      statement.execute(
          "create index if not exists "
              + TASKS
              + "_last_heartbeat on "
              + TASKS
              + " (last_heartbeat)");
      statement.execute(
          "create table if not exists "
              + RUNS
              + " (id bigint generated by default as identity primary key, task_name varchar(64)"
              + " not null, due "
              + time
              + " not null, started "
              + time
              + ", ended "
              + time
              + ", status varchar(16) not null, host varchar(100) not null, output varchar("
              + TaskScheduler.OUTPUT_LIMIT * 2
              + ") not null, constraint "
              + RUNS
              + "_one_per_fire unique (task_name, due))");
      // Stores made before results were delivered have no delivery column yet.
      statement.execute(
          "alter table "
              + RUNS
              + " add column if not exists delivery varchar("
              + DELIVERY_LIMIT
              + ")");
    }
  }

  /** The longest note of a run's delivery kept. */
  static final int DELIVERY_LIMIT = 2_000;

  /**
   * Records what became of an ended run's delivery.
   *
   * @return whether the run was found
   */
  boolean delivered(String task, Instant due, String delivery) throws SQLException {
    try (Connection connection = database.connection();
        PreparedStatement update =
            connection.prepareStatement(
                "update " + RUNS + " set delivery = ? where task_name = ? and due = ?")) {
      update.setString(
          1,
          delivery.length() <= DELIVERY_LIMIT ? delivery : delivery.substring(0, DELIVERY_LIMIT));
      update.setString(2, task);
      update.setTimestamp(3, Timestamp.from(due));
      return update.executeUpdate() > 0;
    }
  }

  /**
   * Records the start of a fire's run, unless the fire already has one.
   *
   * @return whether this host is to run it: false when the fire already has a run
   */
  boolean begin(String task, Instant due, Instant started, String host) throws SQLException {
    try (Connection connection = database.connection();
        PreparedStatement insert =
            connection.prepareStatement(
                "insert into "
                    + RUNS
                    + " (task_name, due, started, status, host, output) values (?, ?, ?, ?, ?, '')")) {
      insert.setString(1, task);
      insert.setTimestamp(2, Timestamp.from(due));
      insert.setTimestamp(3, Timestamp.from(started));
      insert.setString(4, TaskRun.Status.RUNNING.wireName());
      insert.setString(5, host);
      insert.executeUpdate();
      return true;
    } catch (SQLException e) {
      if (duplicate(e)) {
        return false;
      }
      throw e;
    }
  }

  /**
   * Records how a running fire ended, unless it has an outcome already (its host was judged dead
   * meanwhile): the first outcome stands.
   *
   * @return whether it was recorded
   */
  boolean end(String task, Instant due, Instant ended, TaskRun.Status status, String output)
      throws SQLException {
    try (Connection connection = database.connection();
        PreparedStatement update =
            connection.prepareStatement(
                "update "
                    + RUNS
                    + " set ended = ?, status = ?, output = ? where task_name = ? and due = ? and"
                    + " status = ?")) {
      update.setTimestamp(1, Timestamp.from(ended));
      update.setString(2, status.wireName());
      update.setString(3, output);
      update.setString(4, task);
      update.setTimestamp(5, Timestamp.from(due));
      update.setString(6, TaskRun.Status.RUNNING.wireName());
      return update.executeUpdate() > 0;
    }
  }

  /**
   * Marks a fire's run failed, because its host died: the running row when there is one, else a new
   * one; a fire whose run already ended is left as it is.
   *
   * @return whether this call marked it (false: it had an outcome already)
   */
  boolean died(String task, Instant due, Instant now, String host, String output)
      throws SQLException {
    if (end(task, due, now, TaskRun.Status.FAILED, output)) {
      return true;
    }
    return record(task, due, Optional.empty(), now, TaskRun.Status.FAILED, host, output);
  }

  /**
   * Records a fire that did not run (missed, or its host died before it started).
   *
   * @return false when the fire has a run already
   */
  boolean record(
      String task,
      Instant due,
      Optional<Instant> started,
      Instant ended,
      TaskRun.Status status,
      String host,
      String output)
      throws SQLException {
    try (Connection connection = database.connection();
        PreparedStatement insert =
            connection.prepareStatement(
                "insert into "
                    + RUNS
                    + " (task_name, due, started, ended, status, host, output) values (?, ?, ?, ?,"
                    + " ?, ?, ?)")) {
      insert.setString(1, task);
      insert.setTimestamp(2, Timestamp.from(due));
      insert.setTimestamp(3, started.map(Timestamp::from).orElse(null));
      insert.setTimestamp(4, Timestamp.from(ended));
      insert.setString(5, status.wireName());
      insert.setString(6, host);
      insert.setString(7, output);
      insert.executeUpdate();
      return true;
    } catch (SQLException e) {
      if (!duplicate(e)) {
        throw e;
      }
      return false;
    }
  }

  /** The runs of a task, newest first, at most the limit. */
  List<TaskRun> runs(String task, int limit) throws SQLException {
    try (Connection connection = database.connection();
        PreparedStatement query =
            connection.prepareStatement(
                "select task_name, due, started, ended, status, host, output, delivery from "
                    + RUNS
                    + " where task_name = ? order by due desc, id desc limit ?")) {
      query.setString(1, task);
      query.setInt(2, limit);
      List<TaskRun> runs = new ArrayList<>();
      try (ResultSet rows = query.executeQuery()) {
        while (rows.next()) {
          runs.add(run(rows));
        }
      }
      return runs;
    }
  }

  /** The latest run of every task that has one, by task name. */
  Map<String, TaskRun> lastRuns() throws SQLException {
    try (Connection connection = database.connection();
        PreparedStatement query =
            connection.prepareStatement(
                "select r.task_name, r.due, r.started, r.ended, r.status, r.host, r.output,"
                    + " r.delivery from "
                    + RUNS
                    + " r join (select task_name, max(due) as due from "
                    + RUNS
                    + " group by task_name) latest on r.task_name = latest.task_name and r.due ="
                    + " latest.due")) {
      Map<String, TaskRun> runs = new HashMap<>();
      try (ResultSet rows = query.executeQuery()) {
        while (rows.next()) {
          TaskRun run = run(rows);
          runs.put(run.task(), run);
        }
      }
      return runs;
    }
  }

  /** Every run of every task, oldest first: for tests and audits. */
  public List<TaskRun> allRuns() throws SQLException {
    try (Connection connection = database.connection();
        PreparedStatement query =
            connection.prepareStatement(
                "select task_name, due, started, ended, status, host, output, delivery from "
                    + RUNS
                    + " order by due, task_name")) {
      List<TaskRun> runs = new ArrayList<>();
      try (ResultSet rows = query.executeQuery()) {
        while (rows.next()) {
          runs.add(run(rows));
        }
      }
      return runs;
    }
  }

  private static TaskRun run(ResultSet rows) throws SQLException {
    return new TaskRun(
        rows.getString(1),
        rows.getTimestamp(2).toInstant(),
        Optional.ofNullable(rows.getTimestamp(3)).map(Timestamp::toInstant),
        Optional.ofNullable(rows.getTimestamp(4)).map(Timestamp::toInstant),
        TaskRun.Status.of(rows.getString(5)),
        rows.getString(6),
        rows.getString(7),
        Optional.ofNullable(rows.getString(8)));
  }

  private static boolean duplicate(SQLException e) {
    // 23505: unique violation, in PostgreSQL and H2 alike.
    return "23505".equals(e.getSQLState());
  }

  /** Closes the embedded database (and its file), or the shared one's pooled connections. */
  @Override
  public void close() {
    database.close();
  }
}
