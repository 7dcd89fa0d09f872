package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scheduler on the embedded store, with a clock the test moves: tasks survive a restart, fires
 * due while the host was down run once within the grace period and are recorded missed outside it,
 * and one-time tasks fire once and are gone.
 */
@Timeout(60)
class TaskSchedulerTest {

  private static final ZoneId UTC = ZoneOffset.UTC;
  private static final Instant MORNING = Instant.parse("2026-11-25T08:59:00Z");

  @TempDir Path dir;

  private final TestClock clock = new TestClock(MORNING);
  private final List<String> fired = new CopyOnWriteArrayList<>();
  private ScheduleStore store;
  private TaskScheduler scheduler;

  @AfterEach
  void close() {
    stop();
  }

  private void stop() {
    if (scheduler != null) {
      scheduler.close();
      scheduler = null;
    }
    if (store != null) {
      store.close();
      store = null;
    }
  }

  /** A host: a scheduler over the store file in the directory, not started. */
  private TaskScheduler host() throws Exception {
    store = ScheduleStore.embedded(dir);
    scheduler =
        TaskScheduler.builder(store)
            .clock(clock)
            .grace(Duration.ofMinutes(10))
            .pollInterval(Duration.ofMillis(100))
            .hostName("host-a")
            .build();
    return scheduler;
  }

  /**
   * Schedules the task on a host that then stops, and starts another at that instant, firing.
   *
   * @return the task's next fire as the first host scheduled it
   */
  private Instant restartAt(Instant instant, ScheduledTask task) throws Exception {
    Instant next = host().schedule(task);
    stop();
    clock.set(instant);
    host();
    startFiring();
    return next;
  }

  private void startFiring() {
    scheduler.start(
        (task, due, deadline) -> {
          fired.add(task.name() + "@" + due);
          return new TaskScheduler.Outcome(true, "Done: " + task.description());
        });
  }

  private static ScheduledTask task(String name, String cron, boolean once) {
    return ScheduledTask.toolCall(
        name,
        CronExpression.parse(cron),
        UTC,
        "Say good morning",
        once,
        "echo",
        tools.jackson.databind.json.JsonMapper.shared().createObjectNode(),
        MORNING);
  }

  /**
   * A one-time task pinned to the second given: when it has fired, every poll before it has been
   * made, so a task that those polls would wrongly fire has fired too.
   */
  private static ScheduledTask marker(Instant at) {
    return ScheduledTask.toolCall(
        "marker",
        CronExpression.parse(PinnedCron.at(at, UTC)),
        UTC,
        "Mark a poll",
        true,
        "echo",
        tools.jackson.databind.json.JsonMapper.shared().createObjectNode(),
        MORNING);
  }

  @Test
  void aTaskCreatedOnOneHostFiresAfterARestart() throws Exception {
    assertThat(
            restartAt(
                Instant.parse("2026-11-25T09:00:00.200Z"), task("morning", "0 9 * * *", false)))
        .isEqualTo(Instant.parse("2026-11-25T09:00:00Z"));

    await().atMost(Duration.ofSeconds(20)).until(() -> fired.size() == 1);
    assertThat(fired).containsExactly("morning@2026-11-25T09:00:00Z");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> scheduler.tasks().getFirst().lastRun().map(TaskRun::status),
            status -> status.equals(Optional.of(TaskRun.Status.SUCCEEDED)));
    TaskScheduler.TaskState state = scheduler.tasks().getFirst();
    assertThat(state.nextFire()).isEqualTo(Instant.parse("2026-11-26T09:00:00Z"));
    TaskRun run = state.lastRun().orElseThrow();
    assertThat(run.output()).isEqualTo("Done: Say good morning");
    assertThat(run.host()).isEqualTo("host-a");
    assertThat(run.started().orElseThrow())
        .isBetween(
            Instant.parse("2026-11-25T09:00:00.200Z"), Instant.parse("2026-11-25T09:00:30Z"));
  }

  @Test
  void aTaskDueBeforeItsTimeDoesNotFire() throws Exception {
    host().schedule(task("morning", "0 9 * * *", false));
    startFiring();
    stop();
    host();
    startFiring();

    // A marker due at 08:59:30 fires: the scheduler has polled with the clock before nine, and
    // the morning task was in view of that poll. Nothing else fires.
    scheduler.schedule(marker(Instant.parse("2026-11-25T08:59:30Z")));
    clock.set(Instant.parse("2026-11-25T08:59:30Z"));
    await().atMost(Duration.ofSeconds(20)).until(() -> !fired.isEmpty());
    assertThat(fired).containsExactly("marker@2026-11-25T08:59:30Z");
    assertThat(scheduler.tasks())
        .filteredOn(t -> t.task().name().equals("morning"))
        .singleElement()
        .satisfies(t -> assertThat(t.lastRun()).isEmpty());
  }

  @Test
  void aFireDueWhileTheHostWasDownRunsOnceAtStartWithinTheGracePeriod() throws Exception {
    restartAt(Instant.parse("2026-11-25T09:08:00Z"), task("morning", "0 9 * * *", false));

    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                !scheduler.runs("morning", 5).isEmpty()
                    && scheduler.runs("morning", 5).getFirst().status()
                        == TaskRun.Status.SUCCEEDED);
    assertThat(fired).containsExactly("morning@2026-11-25T09:00:00Z");
    assertThat(scheduler.tasks().getFirst().nextFire())
        .isEqualTo(Instant.parse("2026-11-26T09:00:00Z"));
  }

  @Test
  void aFireDueWhileTheHostWasDownIsRecordedMissedOutsideTheGracePeriod() throws Exception {
    restartAt(Instant.parse("2026-11-25T09:30:00Z"), task("morning", "0 9 * * *", false));

    await().atMost(Duration.ofSeconds(20)).until(() -> !scheduler.runs("morning", 5).isEmpty());
    assertThat(fired).isEmpty();
    TaskRun missed = scheduler.runs("morning", 5).getFirst();
    assertThat(missed.status()).isEqualTo(TaskRun.Status.MISSED);
    assertThat(missed.due()).isEqualTo(Instant.parse("2026-11-25T09:00:00Z"));
    assertThat(missed.output())
        .matches(
            "Missed the fire due 2026-11-25T09:00:00Z: a host found it only at"
                + " 2026-11-25T09:30:\\d\\dZ, later than the grace period \\(10m\\) allows \\(no"
                + " host was running, or every one was busy\\)\\.");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> scheduler.tasks().getFirst().nextFire(),
            next -> next.equals(Instant.parse("2026-11-26T09:00:00Z")));
  }

  @Test
  void ofSeveralMissedFiresTheLatestRunsWhenWithinGraceAndTheOthersAreCountedMissed()
      throws Exception {
    // Down from 08:59 to 12:05: 09:00, 10:00 and 11:00 missed; 12:00 is within the grace period.
    restartAt(Instant.parse("2026-11-25T12:05:00Z"), task("hourly", "0 * * * *", false));

    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                scheduler.runs("hourly", 5).size() == 2
                    && scheduler.runs("hourly", 5).getFirst().status() == TaskRun.Status.SUCCEEDED);
    assertThat(fired).containsExactly("hourly@2026-11-25T12:00:00Z");
    TaskRun missed = scheduler.runs("hourly", 5).get(1);
    assertThat(missed.status()).isEqualTo(TaskRun.Status.MISSED);
    assertThat(missed.output())
        .startsWith(
            "Missed 3 fires due from 2026-11-25T09:00:00Z to 2026-11-25T11:00:00Z: a host found"
                + " it only at 2026-11-25T12:05:");
    assertThat(scheduler.tasks().getFirst().nextFire())
        .isEqualTo(Instant.parse("2026-11-25T13:00:00Z"));
  }

  @Test
  void aOneTimeTaskFiresOnceAndIsGone() throws Exception {
    host().schedule(task("once", "0 9 25 11 *", true));
    startFiring();

    clock.set(Instant.parse("2026-11-25T09:00:01Z"));

    await().atMost(Duration.ofSeconds(20)).until(() -> scheduler.tasks().isEmpty());
    assertThat(fired).containsExactly("once@2026-11-25T09:00:00Z");
    assertThat(scheduler.runs("once", 5))
        .singleElement()
        .satisfies(run -> assertThat(run.status()).isEqualTo(TaskRun.Status.SUCCEEDED));

    // A year on, a marker due a second after the task's moment fires and nothing else does: the
    // task is gone.
    scheduler.schedule(marker(Instant.parse("2027-11-25T09:00:01Z")));
    clock.set(Instant.parse("2027-11-25T09:00:01Z"));
    await().atMost(Duration.ofSeconds(20)).until(() -> fired.size() > 1);
    assertThat(fired).containsExactly("once@2026-11-25T09:00:00Z", "marker@2027-11-25T09:00:01Z");
  }

  @Test
  void aOneTimeTaskWhoseMomentPassedWhileDownIsRecordedMissedAndGoneNotFiredAYearLater()
      throws Exception {
    restartAt(Instant.parse("2026-11-25T11:00:00Z"), task("once", "0 9 25 11 *", true));

    await().atMost(Duration.ofSeconds(20)).until(() -> scheduler.tasks().isEmpty());
    assertThat(fired).isEmpty();
    assertThat(scheduler.runs("once", 5))
        .singleElement()
        .satisfies(run -> assertThat(run.status()).isEqualTo(TaskRun.Status.MISSED));
  }

  @Test
  void replacingATaskKeepsOneTaskOfThatNameAndCancellingRemovesIt() throws Exception {
    host();
    scheduler.schedule(task("report", "0 9 * * *", false));
    scheduler.schedule(task("report", "0 10 * * *", false));

    assertThat(scheduler.tasks())
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.task().cron().text()).isEqualTo("0 10 * * *");
              assertThat(t.nextFire()).isEqualTo(Instant.parse("2026-11-25T10:00:00Z"));
            });
    assertThat(scheduler.cancel("report")).isTrue();
    assertThat(scheduler.cancel("report")).isFalse();
    assertThat(scheduler.count()).isZero();
  }

  @Test
  void aRunsOutputIsCutToTheLimit() throws Exception {
    host().schedule(task("long", "0 9 * * *", false));
    scheduler.start((task, due, deadline) -> new TaskScheduler.Outcome(false, "x".repeat(10_000)));
    clock.set(Instant.parse("2026-11-25T09:00:00Z"));

    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                !scheduler.runs("long", 1).isEmpty()
                    && scheduler.runs("long", 1).getFirst().status() == TaskRun.Status.FAILED);
    assertThat(scheduler.runs("long", 1).getFirst().output())
        .hasSize(TaskScheduler.OUTPUT_LIMIT + "\n[cut: 6000 more characters]".length())
        .endsWith("\n[cut: 6000 more characters]");
  }
}
