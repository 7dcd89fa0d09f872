package dev.toolhost.benchmarks.scheduling;

import dev.toolhost.scheduling.CronExpression;
import dev.toolhost.scheduling.ScheduleStore;
import dev.toolhost.scheduling.ScheduledTask;
import dev.toolhost.scheduling.SchedulingConfig;
import dev.toolhost.scheduling.SchedulingTools;
import dev.toolhost.scheduling.TaskScheduler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.h2.jdbcx.JdbcDataSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * The schedule load stores 10,000 tasks and measures, each beside its raw baseline:
 *
 * <ul>
 *   <li><b>storing</b> them one {@code schedule} at a time (cron parsed, next fire computed, JSON
 *       data, db-scheduler's insert), beside a plain JDBC insert of the same rows into a table of
 *       the same shape;
 *   <li><b>computing and listing their next fires</b>: {@link TaskScheduler#tasks()} (every row
 *       read, its JSON and cron parsed, last runs joined) and {@code list_scheduled_tasks}'
 *       markdown table, beside a plain JDBC read of the same rows with one next fire computed per
 *       row by a cron parsed once (no JSON, no parse per row);
 *   <li><b>fire latency</b> (the instant a fire was due to the instant its run started) of 300
 *       one-time tasks due over 15 seconds with the 10,000 stored beside them, at the median and
 *       99th percentile, for poll intervals of 1 s and 100 ms, beside a {@link
 *       ScheduledExecutorService} firing at the same instants in memory.
 * </ul>
 *
 * <p>Usage: {@code ScheduleLoad [tasks] [rounds]}, defaults {@code 10000 5}. The store is an
 * embedded H2 file in a temporary directory, deleted at the end.
 */
public final class ScheduleLoad {

  // The call that lists: made for no user, as the benchmark's tasks are stored.
  private static final dev.toolhost.core.ToolCall LISTING =
      dev.toolhost.core.ToolCall.of(dev.toolhost.scheduling.SchedulingTools.LIST, "{}");

  private static final ZoneId ZONE = ZoneOffset.UTC;

  private ScheduleLoad() {}

  public static void main(String[] args) throws Exception {
    int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    Path dir = Files.createTempDirectory("toolhost-schedule-load");
    try {
      run(dir, tasks, rounds);
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(file);
        }
      }
    }
  }

  private static void run(Path dir, int count, int rounds) throws Exception {
    System.out.printf(Locale.ROOT, "Schedule load: %,d tasks on an embedded H2 file%n%n", count);
    String[] crons = {"0 9 * * 1-5", "*/15 * * * *", "30 2 1 * *", "0 0 9 * * 1", "0 12 29 2 *"};
    Path storeDir = Files.createDirectories(dir.resolve("store"));
    try (ScheduleStore store = ScheduleStore.embedded(storeDir)) {
      TaskScheduler scheduler = TaskScheduler.builder(store).build();
      Instant now = Instant.now();
      long start = System.nanoTime();
      for (int i = 0; i < count; i++) {
        scheduler.schedule(task("task-" + i, crons[i % crons.length], false, now));
      }
      double storeMs = (System.nanoTime() - start) / 1e6;
      double rawStoreMs = rawInsert(dir.resolve("raw"), count);
      System.out.printf(
          Locale.ROOT,
          "store %,d tasks: %.0f ms (%.1f µs each); raw JDBC insert %.0f ms: %.1fx%n",
          count,
          storeMs,
          storeMs * 1000 / count,
          rawStoreMs,
          storeMs / rawStoreMs);

      SchedulingTools tools =
          new SchedulingTools(
              scheduler,
              SchedulingConfig.builder(storeDir).zone(ZONE).maxTasks(100_000).build(),
              InstantSource.system());
      double[] listed = new double[rounds];
      double[] tabled = new double[rounds];
      double[] raw = new double[rounds];
      for (int round = -1; round < rounds; round++) {
        long t0 = System.nanoTime();
        int n = scheduler.tasks().size();
        long t1 = System.nanoTime();
        int length = tools.listScheduledTasks(LISTING).text().length();
        long t2 = System.nanoTime();
        int rawCount = rawList(store);
        long t3 = System.nanoTime();
        if (n != count || rawCount != count || length == 0) {
          throw new IllegalStateException("listed " + n + " and " + rawCount);
        }
        if (round >= 0) {
          listed[round] = (t1 - t0) / 1e6;
          tabled[round] = (t2 - t1) / 1e6;
          raw[round] = (t3 - t2) / 1e6;
        }
      }
      System.out.printf(
          Locale.ROOT,
          "next fires of %,d tasks (TaskScheduler.tasks): median %.0f ms; list_scheduled_tasks"
              + " table: median %.0f ms; raw (JDBC read + JSON tree of each row): median %.0f ms:"
              + " %.1fx%n",
          count,
          median(listed),
          median(tabled),
          median(raw),
          median(listed) / median(raw));
      scheduler.close();

      for (Duration poll : List.of(Duration.ofSeconds(1), Duration.ofMillis(100))) {
        latency(store, poll);
      }
    }
  }

  private static void latency(ScheduleStore store, Duration poll) throws Exception {
    int fires = 300;
    TaskScheduler scheduler = TaskScheduler.builder(store).pollInterval(poll).threads(10).build();
    Instant base = Instant.now().plusSeconds(3).truncatedTo(ChronoUnit.SECONDS);
    List<Instant> due = new ArrayList<>();
    for (int i = 0; i < fires; i++) {
      // 20 a second for 15 seconds, each pinned to its second by a six-field cron.
      Instant at = base.plusSeconds(i / 20);
      due.add(at);
      scheduler.schedule(
          task("fire-" + poll.toMillis() + "-" + i, pinned(at), true, Instant.now()));
    }
    ConcurrentLinkedQueue<Long> lateness = new ConcurrentLinkedQueue<>();
    scheduler.start(
        (task, when, deadline) -> {
          lateness.add(Duration.between(when, Instant.now()).toNanos());
          return new TaskScheduler.Outcome(true, "ok");
        });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (lateness.size() < fires && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    scheduler.close();

    ConcurrentLinkedQueue<Long> rawLateness = new ConcurrentLinkedQueue<>();
    ScheduledExecutorService executor = Executors.newScheduledThreadPool(10);
    Instant rawBase = Instant.now().plusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
    for (int i = 0; i < fires; i++) {
      Instant at = rawBase.plusSeconds(i / 20);
      executor.schedule(
          () -> rawLateness.add(Duration.between(at, Instant.now()).toNanos()),
          Duration.between(Instant.now(), at).toNanos(),
          TimeUnit.NANOSECONDS);
    }
    executor.shutdown();
    executor.awaitTermination(60, TimeUnit.SECONDS);

    double[] ours = millis(lateness);
    double[] raw = millis(rawLateness);
    System.out.printf(
        Locale.ROOT,
        "fire latency, %d fires over 15 s beside the stored tasks, poll %d ms: p50 %.1f ms, p99"
            + " %.1f ms (%d fired); raw ScheduledExecutorService: p50 %.2f ms, p99 %.2f ms%n",
        fires,
        poll.toMillis(),
        percentile(ours, 50),
        percentile(ours, 99),
        ours.length,
        percentile(raw, 50),
        percentile(raw, 99));
  }

  private static ScheduledTask task(String name, String cron, boolean once, Instant created) {
    return ScheduledTask.toolCall(
        name,
        CronExpression.parse(cron),
        ZONE,
        "Benchmark task " + name,
        once,
        "echo",
        JsonMapper.shared().createObjectNode().put("text", name),
        created);
  }

  private static String pinned(Instant at) {
    ZonedDateTime utc = at.atZone(ZONE);
    return "%d %d %d %d %d *"
        .formatted(
            utc.getSecond(),
            utc.getMinute(),
            utc.getHour(),
            utc.getDayOfMonth(),
            utc.getMonthValue());
  }

  /** The raw baseline of storing: plain inserts into a table of the same shape, one by one. */
  private static double rawInsert(Path dir, int count) throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.toAbsolutePath().resolve("raw"));
    try (Connection keeper = h2.getConnection()) {
      keeper
          .createStatement()
          .execute(
              "create table raw_tasks (task_name varchar(100) not null, task_instance varchar(100)"
                  + " not null, task_data varbinary, execution_time timestamp(6) with time zone"
                  + " not null, picked boolean not null, version bigint not null, primary key"
                  + " (task_name, task_instance))");
      byte[] data = "{\"cron\":\"0 9 * * 1-5\",\"zone\":\"Z\"}".getBytes();
      long start = System.nanoTime();
      for (int i = 0; i < count; i++) {
        try (Connection connection = h2.getConnection();
            PreparedStatement insert =
                connection.prepareStatement(
                    "insert into raw_tasks values ('t', ?, ?, ?, false, 1)")) {
          insert.setString(1, "task-" + i);
          insert.setBytes(2, data);
          insert.setTimestamp(3, Timestamp.from(Instant.now()));
          insert.executeUpdate();
        }
      }
      return (System.nanoTime() - start) / 1e6;
    }
  }

  /**
   * The raw baseline of listing: one JDBC read of every task's name, data and next fire, the data
   * parsed as a JSON tree (no records, no cron).
   */
  private static int rawList(ScheduleStore store) throws Exception {
    int n = 0;
    try (Connection connection = store.connection();
        PreparedStatement query =
            connection.prepareStatement(
                "select task_instance, task_data, execution_time from "
                    + ScheduleStore.TASKS
                    + " where task_name = 'toolhost-task'");
        ResultSet rows = query.executeQuery()) {
      while (rows.next()) {
        rows.getString(1);
        JsonMapper.shared().readTree(rows.getBytes(2));
        rows.getTimestamp(3).toInstant();
        n++;
      }
    }
    return n;
  }

  private static double[] millis(ConcurrentLinkedQueue<Long> nanos) {
    return nanos.stream().mapToDouble(n -> n / 1e6).sorted().toArray();
  }

  private static double percentile(double[] sorted, int p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
