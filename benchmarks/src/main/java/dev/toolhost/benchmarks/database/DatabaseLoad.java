package dev.toolhost.benchmarks.database;

import dev.toolhost.database.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The database load measures what a store's operation on PostgreSQL costs in connections: the same
 * small indexed read (a conversation store's kind of statement), run
 *
 * <ul>
 *   <li><b>raw</b>: on connections opened once and kept, one per caller (the floor);
 *   <li><b>pooled</b>: through {@link Database}, a connection taken from its pool and given back
 *       per operation, as the stores do now;
 *   <li><b>unpooled</b>: a connection opened and closed per operation, as the stores did before
 *       (their {@code PGSimpleDataSource} opened one on every call).
 * </ul>
 *
 * <p>With 1 caller and with {@value Database#POOL_SIZE} at once, in alternating rounds; each side's
 * operations a second and the ratio of pooled and unpooled to raw.
 *
 * <p>Usage: {@code DatabaseLoad [jdbc-url] [operations] [rounds]}, defaults {@code
 * jdbc:postgresql://127.0.0.1:5432/test 2000 3}; the user is {@code postgres}, trust auth.
 */
public final class DatabaseLoad {

  private static final String TABLE = "toolhost_database_load";

  private DatabaseLoad() {}

  /** One side: what runs a number of operations as one of the callers. */
  private interface Side {
    void run(int caller, int operations) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    String url = args.length > 0 ? args[0] : "jdbc:postgresql://127.0.0.1:5432/test";
    int operations = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    try (Connection setup = DriverManager.getConnection(url, "postgres", "");
        Statement statement = setup.createStatement()) {
      statement.execute("DROP TABLE IF EXISTS " + TABLE);
      statement.execute("CREATE TABLE " + TABLE + " (id int PRIMARY KEY, body text NOT NULL)");
      statement.execute(
          "INSERT INTO " + TABLE + " SELECT g, repeat('x', 200) FROM generate_series(1, 1000) g");
    }
    try (Database database =
        Database.open(url, Optional.of("postgres"), Optional.empty(), "database load")) {
      for (int callers : List.of(1, Database.POOL_SIZE)) {
        // Unpooled opens a connection a call: fewer operations, or a round takes minutes.
        int unpooledOperations = Math.max(50, operations / 40);
        for (int round = 1; round <= rounds; round++) {
          double raw;
          List<Connection> kept = new ArrayList<>();
          try {
            // Each caller its own connection, opened before the clock starts.
            for (int c = 0; c < callers; c++) {
              kept.add(DriverManager.getConnection(url, "postgres", ""));
            }
            raw =
                perSecond(
                    callers,
                    operations,
                    (caller, n) -> {
                      for (int i = 0; i < n; i++) {
                        read(kept.get(caller), i);
                      }
                    });
          } finally {
            for (Connection connection : kept) {
              connection.close();
            }
          }
          double pooled = perSecond(callers, operations, perOperation(database::connection));
          double unpooled =
              perSecond(
                  callers,
                  unpooledOperations,
                  perOperation(() -> DriverManager.getConnection(url, "postgres", "")));
          System.out.printf(
              Locale.ROOT,
              "callers=%d round=%d raw=%.0f/s pooled=%.0f/s (%.2fx raw) unpooled=%.0f/s (%.3fx"
                  + " raw)%n",
              callers,
              round,
              raw,
              pooled,
              pooled / raw,
              unpooled,
              unpooled / raw);
        }
      }
    } finally {
      try (Connection setup = DriverManager.getConnection(url, "postgres", "");
          Statement statement = setup.createStatement()) {
        statement.execute("DROP TABLE IF EXISTS " + TABLE);
      }
    }
  }

  /** Where a side gets each operation's connection; the operation closes it. */
  private interface Connections {
    Connection get() throws SQLException;
  }

  // Each operation on a connection of its own from the source, closed after it.
  private static Side perOperation(Connections connections) {
    return (caller, n) -> {
      for (int i = 0; i < n; i++) {
        try (Connection connection = connections.get()) {
          read(connection, i);
        }
      }
    };
  }

  private static void read(Connection connection, int i) throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement("SELECT body FROM " + TABLE + " WHERE id = ?")) {
      select.setInt(1, 1 + i % 1000);
      try (ResultSet rows = select.executeQuery()) {
        if (!rows.next()) {
          throw new IllegalStateException("row " + (1 + i % 1000) + " missing");
        }
      }
    }
  }

  // Operations a second of the side run by that many callers at once, each doing the operations.
  private static double perSecond(int callers, int operations, Side side) throws Exception {
    side.run(0, Math.max(1, operations / 20)); // warm: classes loaded, statements planned
    long start = System.nanoTime();
    try (ExecutorService threads = Executors.newFixedThreadPool(callers)) {
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < callers; c++) {
        int caller = c;
        done.add(
            threads.submit(
                () -> {
                  side.run(caller, operations);
                  return null;
                }));
      }
      for (Future<?> each : done) {
        each.get();
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return callers * (double) operations / seconds;
  }
}
