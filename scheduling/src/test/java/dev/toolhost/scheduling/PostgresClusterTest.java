package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
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
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * Two hosts on the PostgreSQL on this machine (127.0.0.1:5432, database {@code test}), each test in
 * a schema of its own: every fire runs exactly once however many hosts poll, a host killed mid-run
 * has its runs marked failed and its waiting fires taken over, and a host that only stalled past
 * its heartbeats stops its runs without a second outcome.
 *
 * <p>Every wait is a margin over the timings the hosts are configured with ({@link #POLL}, {@link
 * #HEARTBEAT}), never over this machine's speed: a busy machine slows the hosts, and the heartbeat
 * is long enough that a live host is not judged dead for it.
 */
@Timeout(180)
class PostgresClusterTest {

  private static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/test";
  private static final String USER = "postgres";

  /** How often each host polls. */
  private static final Duration POLL = Duration.ofMillis(100);

  /** How often a running fire's host says it is alive. */
  private static final Duration HEARTBEAT = Duration.ofSeconds(2);

  /** How many heartbeats a host may miss before its runs are judged dead (db-scheduler's least). */
  private static final int MISSED = 4;

  /**
   * The longest a dead run stays unjudged: its heartbeats lapse, then another host's check for dead
   * runs comes (every two heartbeats), then a poll.
   */
  private static final Duration VERDICT =
      HEARTBEAT.multipliedBy(MISSED).plus(HEARTBEAT.multipliedBy(2)).plus(POLL);

  /** The margin every wait has over the timing it waits for: the machine may be busy. */
  private static final int MARGIN = 5;

  /** How long a host process may take to start. */
  private static final Duration START = Duration.ofSeconds(60);

  @TempDir Path dir;

  private String schema;
  private String url;
  private final List<AutoCloseable> open = new ArrayList<>();
  private Process child;
  private Thread reader;

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
    return host(name, threads, InstantSource.system());
  }

  private TaskScheduler host(String name, int threads, InstantSource clock) throws Exception {
    TaskScheduler scheduler =
        TaskScheduler.builder(store())
            .clock(clock)
            .hostName(name)
            .pollInterval(POLL)
            .heartbeat(HEARTBEAT, MISSED)
            .threads(threads)
            .build();
    open.add(scheduler);
    return scheduler;
  }

  /** A one-time task that fires at the next whole second. */
  private static ScheduledTask onceInASecond(String name) {
    return countingOnce(name, CronExpression.parse("* * * * * *"));
  }

  /** A one-time task pinned to the second given, by a six-field cron. */
  private static ScheduledTask pinned(String name, Instant at) {
    return countingOnce(name, CronExpression.parse(PinnedCron.at(at, ZoneOffset.UTC)));
  }

  /** A one-time task, in UTC, that calls the counting tool when the cron first matches. */
  private static ScheduledTask countingOnce(String name, CronExpression cron) {
    return ScheduledTask.toolCall(
        name,
        cron,
        ZoneOffset.UTC,
        "Count this fire",
        true,
        "count",
        JsonMapper.shared().createObjectNode(),
        Instant.now());
  }

  @Test
  void fiftyTasksDueInTheSameSecondEachFireExactlyOnceAcrossTwoHosts() throws Exception {
    // One clock for both hosts, a minute before the second while the tasks are scheduled, so that
    // however long scheduling takes, the second is still ahead; then set just before it.
    TestClock clock = new TestClock(Instant.now());
    Instant second = clock.instant().plusSeconds(60).truncatedTo(ChronoUnit.SECONDS);
    TaskScheduler a = host("host-a", 10, clock);
    TaskScheduler b = host("host-b", 10, clock);
    List<String> names = IntStream.range(0, 50).mapToObj(i -> "task-" + i).toList();
    for (String name : names) {
      a.schedule(pinned(name, second));
    }
    clock.set(second.minus(POLL));
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

    await().atMost(VERDICT.multipliedBy(MARGIN)).until(() -> a.count() == 0);
    await()
        .atMost(VERDICT.multipliedBy(MARGIN))
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
    List<String> started = startReadyChild("host-killed", "hang");

    TaskScheduler client = host("host-survivor", 10);
    // Each due within a second of being scheduled, however long scheduling the others takes.
    List<String> names = scheduleJobs(client, 15, PostgresClusterTest::onceInASecond);
    // The killed host has 5 threads: it starts 5 fires and hangs in them; 10 wait in the table,
    // some perhaps picked by it but not started.
    await()
        .atMost(Duration.ofSeconds(2).plus(VERDICT.multipliedBy(MARGIN)))
        .until(() -> started.stream().filter(line -> line.startsWith("START ")).count() == 5);
    killChild();
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

    await().atMost(VERDICT.multipliedBy(MARGIN)).until(() -> client.count() == 0);
    await()
        .atMost(VERDICT.multipliedBy(MARGIN))
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

  @Test
  void aHostJudgedDeadWhileAliveStopsItsRunsAndEveryFireKeepsItsOneOutcome() throws Exception {
    ScheduleStore store = store();
    List<String> said = startReadyChild("host-stalled", "stall-first");
    TaskScheduler survivor = host("host-survivor", 10);
    List<String> names = scheduleJobs(survivor, 3, PostgresClusterTest::everyTwoSeconds);
    // The stalled host alone polls: it starts the first fire of each task and hangs in it.
    await()
        .atMost(Duration.ofSeconds(2).plus(VERDICT).multipliedBy(MARGIN))
        .until(() -> names.stream().allMatch(name -> said.contains("START " + name)));

    signal(child, "STOP");
    survivor.start((task, due, deadline) -> new TaskScheduler.Outcome(true, "ran on survivor"));
    // The survivor judges the stalled runs dead, and the tasks move on: it runs their next fires.
    await()
        .atMost(VERDICT.multipliedBy(MARGIN))
        .until(
            () ->
                names.stream()
                    .allMatch(
                        name -> {
                          List<TaskRun> runs = runsOf(store, name);
                          return runs.stream()
                                  .anyMatch(run -> run.status() == TaskRun.Status.FAILED)
                              && runs.stream()
                                  .anyMatch(run -> run.status() == TaskRun.Status.SUCCEEDED);
                        }));
    Map<String, TaskRun> verdicts = new ConcurrentHashMap<>();
    for (String name : names) {
      verdicts.put(
          name,
          runsOf(store, name).stream()
              .filter(run -> run.status() == TaskRun.Status.FAILED)
              .findFirst()
              .orElseThrow());
    }

    signal(child, "CONT");
    // At its next heartbeat the stalled host finds its runs were moved on, and stops them.
    await()
        .atMost(HEARTBEAT.plus(POLL).multipliedBy(MARGIN))
        .until(() -> names.stream().allMatch(name -> said.contains("STOPPED " + name)));
    // The schedule goes on after it: every task has a fire that succeeded since.
    Instant resumed = Instant.now();
    await()
        .atMost(Duration.ofSeconds(2).plus(VERDICT).multipliedBy(MARGIN))
        .until(
            () ->
                names.stream()
                    .allMatch(
                        name ->
                            runsOf(store, name).stream()
                                .anyMatch(
                                    run ->
                                        run.status() == TaskRun.Status.SUCCEEDED
                                            && run.due().isAfter(resumed))));
    survivor.close();
    killChild();

    List<TaskRun> runs = store.allRuns();
    for (String name : names) {
      TaskRun verdict = verdicts.get(name);
      // The one outcome of the stalled fire is the verdict: the stopped run recorded nothing.
      assertThat(runs)
          .filteredOn(run -> run.task().equals(name) && run.due().equals(verdict.due()))
          .singleElement()
          .isEqualTo(verdict);
      assertThat(verdict.host()).isEqualTo("host-stalled");
      assertThat(verdict.output())
          .startsWith("Host 'host-stalled' stopped while running this fire")
          .contains("marked failed by 'host-survivor'");
    }
    assertThat(runs)
        .as("only the stalled fires failed")
        .filteredOn(run -> run.status() == TaskRun.Status.FAILED)
        .hasSize(names.size());
    assertThat(Files.readString(dir.resolve("host-stalled.err")))
        .contains("was judged dead")
        .doesNotContain("Indicates a bug")
        .doesNotContain("Failed while completing execution");
  }

  /** Schedules that many tasks, job-0, job-1 and on, made by the factory, on the host. */
  private static List<String> scheduleJobs(
      TaskScheduler host, int count, Function<String, ScheduledTask> task) throws Exception {
    List<String> names = IntStream.range(0, count).mapToObj(i -> "job-" + i).toList();
    for (String name : names) {
      host.schedule(task.apply(name));
    }
    return names;
  }

  /** A recurring task that fires every two seconds, by a six-field cron. */
  private static ScheduledTask everyTwoSeconds(String name) {
    return ScheduledTask.toolCall(
        name,
        CronExpression.parse("*/2 * * * * *"),
        ZoneOffset.UTC,
        "Count this fire",
        false,
        "count",
        JsonMapper.shared().createObjectNode(),
        Instant.now());
  }

  private static List<TaskRun> runsOf(ScheduleStore store, String name) {
    try {
      return store.allRuns().stream().filter(run -> run.task().equals(name)).toList();
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Sends the signal (STOP, CONT) to the process: a stall no thread of it can see coming. */
  private static void signal(Process process, String signal) throws Exception {
    Process kill =
        new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid())).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).isZero();
  }

  /**
   * Starts a host process with five threads in that mode and waits until it says it is ready.
   *
   * @return its lines, read as they come until it ends
   */
  private List<String> startReadyChild(String name, String mode) throws Exception {
    child = startChild(name, 5, mode);
    List<String> lines = new CopyOnWriteArrayList<>();
    reader = read(child, lines);
    await().atMost(START).until(() -> lines.contains("READY"));
    return lines;
  }

  /** Kills the host process and waits until its lines have been read to the end. */
  private void killChild() throws Exception {
    child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    reader.join(Duration.ofSeconds(10));
  }

  /** Reads the process's lines into the list, on a thread of its own, until it ends. */
  private static Thread read(Process process, List<String> lines) {
    return Thread.ofVirtual()
        .start(
            () -> {
              try (BufferedReader reader =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                  lines.add(line);
                }
              } catch (Exception e) {
                // The process was killed.
              }
            });
  }

  private Process startChild(String name, int threads, String mode) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-cp",
            System.getProperty("java.class.path"),
            ClusterHost.class.getName(),
            url,
            USER,
            name,
            String.valueOf(HEARTBEAT.toMillis()),
            String.valueOf(threads),
            mode)
        .redirectError(dir.resolve(name + ".err").toFile())
        .start();
  }
}
