package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/**
 * Two hosts on the PostgreSQL on this machine (127.0.0.1:5432, database {@code test}), each test in
 * a schema of its own: every fire runs exactly once however many hosts poll, and a host killed
 * mid-run has its runs marked failed and its waiting fires taken over.
 */
@Timeout(120)
class PostgresClusterTest {

  private static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/test";
  private static final String USER = "postgres";

  private String schema;
  private String url;
  private final List<AutoCloseable> open = new ArrayList<>();
  private Process child;

  @BeforeEach
  void createSchema() throws Exception {
    schema = "sched_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection connection = DriverManager.getConnection(SERVER, USER, "");
        Statement statement = connection.createStatement()) {
      statement.execute("create schema " + schema);
    }
    url = SERVER + "?currentSchema=" + schema;
  }

  @AfterEach
  void dropSchema() throws Exception {
    if (child != null) {
      child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    for (AutoCloseable closeable : open.reversed()) {
      closeable.close();
    }
    try (Connection connection = DriverManager.getConnection(SERVER, USER, "");
        Statement statement = connection.createStatement()) {
      statement.execute("drop schema " + schema + " cascade");
    }
  }

  private ScheduleStore store() throws Exception {
    ScheduleStore store = ScheduleStore.jdbc(url, Optional.of(USER), Optional.empty());
    open.add(store);
    return store;
  }

  private TaskScheduler host(String name, int threads) throws Exception {
    TaskScheduler scheduler =
        TaskScheduler.builder(store())
            .hostName(name)
            .pollInterval(Duration.ofMillis(100))
            .heartbeat(Duration.ofMillis(200), 4)
            .threads(threads)
            .build();
    open.add(scheduler);
    return scheduler;
  }

  /** A one-time task pinned to the second given, by a six-field cron. */
  private static ScheduledTask pinned(String name, Instant at) {
    ZonedDateTime utc = at.atZone(ZoneOffset.UTC);
    String cron =
        "%d %d %d %d %d *"
            .formatted(
                utc.getSecond(),
                utc.getMinute(),
                utc.getHour(),
                utc.getDayOfMonth(),
                utc.getMonthValue());
    return ScheduledTask.toolCall(
        name,
        CronExpression.parse(cron),
        ZoneOffset.UTC,
        "Count this fire",
        true,
        "count",
        JsonMapper.shared().createObjectNode(),
        Instant.now());
  }

  @Test
  void fiftyTasksDueInTheSameSecondEachFireExactlyOnceAcrossTwoHosts() throws Exception {
    TaskScheduler a = host("host-a", 10);
    TaskScheduler b = host("host-b", 10);
    Instant second = Instant.now().plusSeconds(3).truncatedTo(ChronoUnit.SECONDS);
    List<String> names = IntStream.range(0, 50).mapToObj(i -> "task-" + i).toList();
    for (String name : names) {
      a.schedule(pinned(name, second));
    }
    Map<String, AtomicInteger> fires = new ConcurrentHashMap<>();
    Map<String, Set<String>> byHost = new ConcurrentHashMap<>();
    TaskScheduler.Runner counting =
        (task, due, deadline) -> {
          fires.computeIfAbsent(task.name(), n -> new AtomicInteger()).incrementAndGet();
          Thread.sleep(20);
          return new TaskScheduler.Outcome(true, "counted");
        };
    a.start(
        (task, due, deadline) -> {
          byHost.computeIfAbsent("host-a", h -> ConcurrentHashMap.newKeySet()).add(task.name());
          return counting.run(task, due, deadline);
        });
    b.start(
        (task, due, deadline) -> {
          byHost.computeIfAbsent("host-b", h -> ConcurrentHashMap.newKeySet()).add(task.name());
          return counting.run(task, due, deadline);
        });

    await().atMost(Duration.ofSeconds(60)).until(() -> a.count() == 0);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                a.store().allRuns().stream()
                    .allMatch(run -> run.status() == TaskRun.Status.SUCCEEDED));

    assertThat(fires.keySet()).containsExactlyInAnyOrderElementsOf(names);
    assertThat(fires.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
    List<TaskRun> runs = a.store().allRuns();
    assertThat(runs).hasSize(50);
    assertThat(runs).allSatisfy(run -> assertThat(run.due()).isEqualTo(second));
    int total = byHost.values().stream().mapToInt(Set::size).sum();
    assertThat(total).as("fires by host: %s", byHost).isEqualTo(50);
    assertThat(runs.stream().map(TaskRun::host).collect(Collectors.toSet()))
        .isSubsetOf("host-a", "host-b");
  }

  @Test
  void aHostKilledMidRunHasItsRunsMarkedFailedAndItsWaitingFiresTakenOver() throws Exception {
    // Tables first, so that the two processes do not race to create them.
    ScheduleStore store = store();
    child = startChild("host-killed", 5);
    List<String> started = new CopyOnWriteArrayList<>();
    Thread reader =
        Thread.ofVirtual()
            .start(
                () -> {
                  try (BufferedReader lines =
                      new BufferedReader(
                          new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = lines.readLine()) != null) {
                      started.add(line);
                    }
                  } catch (Exception e) {
                    // The child was killed.
                  }
                });
    await().atMost(Duration.ofSeconds(60)).until(() -> started.contains("READY"));

    TaskScheduler client = host("host-survivor", 10);
    Instant second = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
    List<String> names = IntStream.range(0, 15).mapToObj(i -> "job-" + i).toList();
    for (String name : names) {
      client.schedule(pinned(name, second));
    }
    // The killed host has 5 threads: it starts 5 fires and hangs in them; 10 wait in the table,
    // some perhaps picked by it but not started.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> started.stream().filter(line -> line.startsWith("START ")).count() == 5);
    child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    reader.join(Duration.ofSeconds(10));
    Set<String> hung =
        started.stream()
            .filter(line -> line.startsWith("START "))
            .map(line -> line.substring(6))
            .collect(Collectors.toSet());

    Map<String, AtomicInteger> survivorFires = new ConcurrentHashMap<>();
    client.start(
        (task, due, deadline) -> {
          survivorFires.computeIfAbsent(task.name(), n -> new AtomicInteger()).incrementAndGet();
          return new TaskScheduler.Outcome(true, "taken over");
        });

    await().atMost(Duration.ofSeconds(60)).until(() -> client.count() == 0);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                store.allRuns().size() == 15
                    && store.allRuns().stream()
                        .noneMatch(run -> run.status() == TaskRun.Status.RUNNING));

    assertThat(hung).hasSize(5);
    List<TaskRun> runs = store.allRuns();
    assertThat(runs.stream().map(TaskRun::task)).containsExactlyInAnyOrderElementsOf(names);
    for (TaskRun run : runs) {
      if (hung.contains(run.task())) {
        assertThat(run.status()).as(run.toString()).isEqualTo(TaskRun.Status.FAILED);
        assertThat(run.host()).isEqualTo("host-killed");
        assertThat(run.output())
            .startsWith("Host 'host-killed' stopped while running this fire")
            .contains("marked failed by 'host-survivor' and not retried");
      } else {
        assertThat(run.status()).as(run.toString()).isEqualTo(TaskRun.Status.SUCCEEDED);
        assertThat(run.host()).isEqualTo("host-survivor");
      }
    }
    // What the killed host started is never run again; what it had not started runs once.
    assertThat(survivorFires.keySet()).doesNotContainAnyElementsOf(hung).hasSize(10);
    assertThat(survivorFires.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
  }

  private Process startChild(String name, int threads) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-cp",
            System.getProperty("java.class.path"),
            ClusterHost.class.getName(),
            url,
            USER,
            name,
            "200",
            String.valueOf(threads))
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
  }
}
