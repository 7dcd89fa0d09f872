package dev.toolhost.scheduling;

import com.github.kagkarlsson.scheduler.CurrentlyExecuting;
import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerBuilder;
import com.github.kagkarlsson.scheduler.SchedulerClient.ScheduleOptions;
import com.github.kagkarlsson.scheduler.SchedulerName;
import com.github.kagkarlsson.scheduler.event.AbstractSchedulerListener;
import com.github.kagkarlsson.scheduler.exceptions.ExecutionException;
import com.github.kagkarlsson.scheduler.exceptions.TaskInstanceCurrentlyExecutingException;
import com.github.kagkarlsson.scheduler.exceptions.TaskInstanceNotFoundException;
import com.github.kagkarlsson.scheduler.jdbc.DefaultJdbcCustomization;
import com.github.kagkarlsson.scheduler.serializer.Serializer;
import com.github.kagkarlsson.scheduler.task.CompletionHandler;
import com.github.kagkarlsson.scheduler.task.Execution;
import com.github.kagkarlsson.scheduler.task.ExecutionComplete;
import com.github.kagkarlsson.scheduler.task.ExecutionContext;
import com.github.kagkarlsson.scheduler.task.ExecutionOperations;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.TaskInstanceId;
import com.github.kagkarlsson.scheduler.task.helper.CustomTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.github.kagkarlsson.scheduler.task.schedule.Schedule;
import dev.toolhost.database.Database;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A task scheduler fires scheduled tasks: it keeps them in a {@link ScheduleStore} through
 * db-scheduler, whose one table and optimistic locking (or {@code SKIP LOCKED} on PostgreSQL) let
 * several hosts share it, and runs each fire with the {@link Runner} it is started with.
 *
 * <p>What it guarantees:
 *
 * <ul>
 *   <li><b>A fire runs at most once.</b> db-scheduler gives each due task to one host; on top of
 *       that, a run begins by inserting its row under a unique key on task and due instant, so that
 *       a fire picked a second time (after a lost update, say) is not run again.
 *   <li><b>No fire is lost silently.</b> A fire found later than the grace period (its hosts were
 *       all down) is recorded {@code missed}; of several fires missed in a row, the latest runs
 *       when it is still within the grace period, and the others are recorded as one {@code missed}
 *       run that counts them. A host that dies while running a fire stops heartbeating; after
 *       {@code missedHeartbeats} heartbeats another host (or this one, restarted) marks that run
 *       {@code failed} and moves the task to its next fire. The run is not retried: an agent turn
 *       may have acted before its host died, and running it again could act twice.
 *   <li><b>A fire has one outcome.</b> A host that only stalled (a long GC pause, a starved
 *       machine) for longer than {@code missedHeartbeats} heartbeats is judged dead like one that
 *       died. It finds out at its next heartbeat (the task's row is no longer the one it picked),
 *       interrupts the run, and records nothing: the outcome already recorded, {@code failed},
 *       stands, and the task's next fire is the one the verdict set. Whichever of the two moves the
 *       task on first wins; the other finds the row changed and leaves it, so that no row is left
 *       that no host can move on.
 *   <li><b>No run outlives its limit.</b> Each run gets a deadline of the maximum run time.
 *   <li><b>Overlap is skipped.</b> A task never runs twice at once: fires that fall while its own
 *       previous run still runs are skipped, and its next fire is computed when the run ends.
 *   <li><b>One-time tasks are removed after their fire</b>, whether it ran, failed or was missed;
 *       their runs stay in the store.
 * </ul>
 *
 * <p>Task data is stored as JSON, never with Java serialization. Thread-safe; {@link #close()}
 * stops polling and waits a little for running fires.
 */
public final class TaskScheduler implements AutoCloseable {

  /** The longest text a run keeps of its output; the rest is cut with a note. */
  public static final int OUTPUT_LIMIT = 4_000;

  /** The db-scheduler task name every scheduled task is an instance of. */
  static final String TASK = "toolhost-task";

  private static final Logger LOG = LoggerFactory.getLogger(TaskScheduler.class);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** What a fire does: runs a task, by the deadline. */
  @FunctionalInterface
  public interface Runner {
    /**
     * Runs one fire of the task. An exception is recorded as the run's failure (its message only).
     *
     * @param due the instant the fire was due
     * @param deadline the instant by which the run must end
     */
    Outcome run(ScheduledTask task, Instant due, Instant deadline) throws Exception;
  }

  /**
   * What becomes of a run's result once it is recorded: its delivery to the task's owner (the
   * conversation that scheduled it, a webhook).
   */
  @FunctionalInterface
  public interface Delivery {
    /** No delivery: a run's result stays in its runs. */
    Delivery NONE = (task, run) -> Optional.empty();

    /**
     * Delivers a recorded run's result. An exception is recorded as the delivery's failure; the
     * run's outcome stands either way.
     *
     * @return what became of it, to record on the run; empty when there was nothing to deliver
     */
    Optional<String> deliver(ScheduledTask task, TaskRun run) throws Exception;
  }

  /**
   * How a run ended.
   *
   * @param succeeded whether it succeeded
   * @param text the final text, or the error
   */
  public record Outcome(boolean succeeded, String text) {
    public Outcome {
      Objects.requireNonNull(text, "text");
    }
  }

  /**
   * A task as it stands: its next fire (in the store: the fire being run, while it runs), whether a
   * host runs it now, and its last run.
   */
  public record TaskState(
      ScheduledTask task, Instant nextFire, boolean running, Optional<TaskRun> lastRun) {}

  private final ScheduleStore store;
  private final InstantSource clock;
  private final Duration grace;
  private final Duration maxRunTime;
  private final String hostName;
  private final CustomTask<TaskData> task;
  private final Scheduler scheduler;
  private volatile Runner runner;
  private volatile Delivery delivery = Delivery.NONE;
  private boolean started;

  /** The fires this host runs now, by {@link #key}. */
  private final Map<String, Running> running = new ConcurrentHashMap<>();

  /**
   * A fire this host runs: the thread it runs on, db-scheduler's execution it picked, and whether
   * the host was judged dead while running it.
   */
  private record Running(Thread thread, Execution execution, AtomicBoolean judgedDead) {}

  private TaskScheduler(Builder builder) {
    this.store = builder.store;
    this.clock = builder.clock;
    this.grace = builder.grace;
    this.maxRunTime = builder.maxRunTime;
    this.hostName = builder.hostName;
    this.task =
        Tasks.custom(TASK, TaskData.class)
            .onDeadExecution(this::deadExecution)
            .execute(this::execute);
    SchedulerBuilder scheduling =
        Scheduler.create(store.dataSource(), List.of(task))
            .tableName(ScheduleStore.TASKS)
            .serializer(new JsonSerializer())
            .schedulerName(new SchedulerName.Fixed(hostName))
            .clock(clock::instant)
            .pollingInterval(builder.pollInterval)
            .heartbeatInterval(builder.heartbeat)
            .missedHeartbeatsLimit(builder.missedHeartbeats)
            .threads(builder.threads)
            .enableImmediateExecution()
            .addSchedulerListener(
                new AbstractSchedulerListener() {
                  @Override
                  public void onExecutionFailedHeartbeat(CurrentlyExecuting executing) {
                    heartbeatFailed(executing.getExecution());
                  }
                })
            .shutdownMaxWait(Duration.ofSeconds(5))
            // Never: a task's row lives until it is cancelled, or its one fire is done.
            .deleteUnresolvedAfter(Duration.ofDays(365_000));
    if (store.dialect() == Database.Dialect.POSTGRESQL) {
      // SELECT ... FOR UPDATE SKIP LOCKED: hosts take disjoint batches instead of racing.
      scheduling.pollUsingLockAndFetch(0.5, 1.0);
    } else {
      // H2 has no overrides of its own in db-scheduler; its columns keep the zone.
      scheduling.jdbcCustomization(new DefaultJdbcCustomization(false));
    }
    this.scheduler = scheduling.build();
  }

  /** A builder of a scheduler over the store. */
  public static Builder builder(ScheduleStore store) {
    return new Builder(store);
  }

  /** The host name this scheduler marks the tasks it runs with. */
  public String hostName() {
    return hostName;
  }

  /** The store. */
  public ScheduleStore store() {
    return store;
  }

  /**
   * Starts firing tasks with the runner: fires due while no host ran are handled at once, as above.
   *
   * @throws IllegalStateException when already started
   */
  public synchronized void start(Runner runner) {
    start(runner, Delivery.NONE);
  }

  /**
   * Starts firing tasks with the runner, and delivering each recorded run's result with the
   * delivery: after the run's outcome is stored, so that a delivery that fails or hangs never loses
   * it.
   *
   * @throws IllegalStateException when already started
   */
  public synchronized void start(Runner runner, Delivery delivery) {
    if (started) {
      throw new IllegalStateException("The scheduler is already started.");
    }
    this.runner = Objects.requireNonNull(runner, "runner");
    this.delivery = Objects.requireNonNull(delivery, "delivery");
    started = true;
    scheduler.start();
  }

  /**
   * Creates the task, or replaces the task of its name, and returns its next fire.
   *
   * @throws IllegalArgumentException when its cron never fires again from now in its zone
   * @throws IllegalStateException when a task of its name is running now
   */
  public Instant schedule(ScheduledTask scheduled) {
    Instant now = clock.instant();
    Instant next =
        scheduled
            .cron()
            .next(now, scheduled.zone())
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "cron '" + scheduled.cron().text() + "' never fires again"));
    try {
      scheduler.schedule(
          task.instanceBuilder(scheduled.id()).data(TaskData.of(scheduled)).scheduledTo(next),
          ScheduleOptions.WHEN_EXISTS_RESCHEDULE);
    } catch (TaskInstanceCurrentlyExecutingException e) {
      throw new IllegalStateException(
          "Task '" + scheduled.name() + "' is running now; replace it when its run ends.");
    }
    return next;
  }

  /**
   * Removes the task of that key ({@link ScheduledTask#id()}).
   *
   * @return false when there is none
   * @throws IllegalStateException when it is running now
   */
  public boolean cancel(String name) {
    try {
      scheduler.cancel(TaskInstanceId.of(TASK, name));
      return true;
    } catch (TaskInstanceNotFoundException e) {
      return false;
    } catch (TaskInstanceCurrentlyExecutingException e) {
      throw new IllegalStateException(
          "Task '" + name + "' is running now; cancel it when its run ends.");
    }
  }

  /** How many tasks the store holds. */
  public int count() throws SQLException {
    try (Connection connection = store.dataSource().getConnection();
        PreparedStatement query =
            connection.prepareStatement(
                "select count(*) from " + ScheduleStore.TASKS + " where task_name = ?")) {
      query.setString(1, TASK);
      try (ResultSet rows = query.executeQuery()) {
        rows.next();
        return rows.getInt(1);
      }
    }
  }

  /** Whether a task of that key ({@link ScheduledTask#id()}) exists. */
  public boolean exists(String name) throws SQLException {
    try (Connection connection = store.dataSource().getConnection();
        PreparedStatement query =
            connection.prepareStatement(
                "select 1 from "
                    + ScheduleStore.TASKS
                    + " where task_name = ? and task_instance = ?")) {
      query.setString(1, TASK);
      query.setString(2, name);
      try (ResultSet rows = query.executeQuery()) {
        return rows.next();
      }
    }
  }

  /** Every task with its next fire and last run, by next fire, then name. */
  public List<TaskState> tasks() throws SQLException {
    Map<String, TaskRun> lastRuns = store.lastRuns();
    List<TaskState> states = new ArrayList<>();
    try (Connection connection = store.dataSource().getConnection();
        PreparedStatement query =
            connection.prepareStatement(
                "select task_instance, task_data, execution_time, picked from "
                    + ScheduleStore.TASKS
                    + " where task_name = ?")) {
      query.setString(1, TASK);
      try (ResultSet rows = query.executeQuery()) {
        while (rows.next()) {
          String name = rows.getString(1);
          TaskData data = JSON.readValue(rows.getBytes(2), TaskData.class);
          states.add(
              new TaskState(
                  data.task(name),
                  rows.getTimestamp(3).toInstant(),
                  rows.getBoolean(4),
                  Optional.ofNullable(lastRuns.get(name))));
        }
      }
    }
    states.sort(
        Comparator.comparing(TaskState::nextFire).thenComparing(state -> state.task().name()));
    return states;
  }

  /**
   * The runs of the task of that key ({@link ScheduledTask#id()}), newest first, at most the limit.
   */
  public List<TaskRun> runs(String name, int limit) throws SQLException {
    return store.runs(name, limit);
  }

  // ---- firing ----

  private CompletionHandler<TaskData> execute(
      TaskInstance<TaskData> instance, ExecutionContext context) {
    TaskData data = instance.getData();
    ScheduledTask scheduled = data.task(instance.getId());
    Instant due = context.getExecution().executionTime;
    Running fire = new Running(Thread.currentThread(), context.getExecution(), new AtomicBoolean());
    running.put(key(fire.execution()), fire);
    try {
      fire(scheduled, due, fire);
    } catch (SQLException | RuntimeException e) {
      // The store failed while recording: the fire is not rerun, so that it never runs twice.
      LOG.error("Scheduled task '{}' (due {}) could not be recorded", scheduled.id(), due, e);
    } finally {
      running.remove(key(fire.execution()), fire);
      if (fire.judgedDead().get()) {
        // The interrupt was this fire's, not the pool's: the thread runs the next one.
        Thread.interrupted();
      }
    }
    return (complete, operations) -> moveOn(scheduled, operations, complete);
  }

  /**
   * A heartbeat of a running fire changed no row: the row was moved on (the host was judged dead)
   * or the store failed. When the row is no longer the one picked, the run is interrupted.
   */
  private void heartbeatFailed(Execution execution) {
    Running fire = running.get(key(execution));
    if (fire == null || fire.judgedDead().get()) {
      return;
    }
    boolean held;
    try {
      held = holds(execution);
    } catch (SQLException e) {
      // The store is unreachable: nobody can judge this host meanwhile either.
      LOG.warn("Scheduled task '{}': its heartbeat failed", execution.taskInstance.getId(), e);
      return;
    }
    if (!held && fire.judgedDead().compareAndSet(false, true)) {
      LOG.warn(
          "Scheduled task '{}' (due {}): this host '{}' stalled past its heartbeats and was judged"
              + " dead; the run is interrupted and its outcome not recorded",
          execution.taskInstance.getId(),
          execution.executionTime,
          hostName);
      fire.thread().interrupt();
    }
  }

  /**
   * A picked execution's key: its task and the row's version, which each pick raises, so that a
   * stalled fire and a later fire of the same task on this host are apart.
   */
  private static String key(Execution execution) {
    return execution.taskInstance.getId() + "@" + execution.version;
  }

  /** Whether the execution's row is still the one this host picked. */
  private boolean holds(Execution execution) throws SQLException {
    try (Connection connection = store.dataSource().getConnection();
        PreparedStatement query =
            connection.prepareStatement(
                "select 1 from "
                    + ScheduleStore.TASKS
                    + " where task_name = ? and task_instance = ? and version = ? and picked")) {
      query.setString(1, execution.taskInstance.getTaskName());
      query.setString(2, execution.taskInstance.getId());
      query.setLong(3, execution.version);
      try (ResultSet rows = query.executeQuery()) {
        return rows.next();
      }
    }
  }

  private void fire(ScheduledTask scheduled, Instant due, Running fire) throws SQLException {
    Instant now = clock.instant();
    if (!Duration.between(due, now).minus(grace).isPositive()) {
      run(scheduled, due, fire);
      return;
    }
    // Late beyond the grace period: every host was down. Find the latest fire that was due.
    Instant first = due;
    Instant latest = due;
    Instant beforeLatest = due;
    int missed = 1;
    while (missed < 1_000_000 && !scheduled.runOnce()) {
      Optional<Instant> after = scheduled.cron().next(latest, scheduled.zone());
      if (after.isEmpty() || after.get().isAfter(now)) {
        break;
      }
      beforeLatest = latest;
      latest = after.get();
      missed++;
    }
    boolean runLatest = !Duration.between(latest, now).minus(grace).isPositive();
    int skipped = runLatest ? missed - 1 : missed;
    if (skipped > 0) {
      Instant last = runLatest ? beforeLatest : latest;
      store.record(
          scheduled.id(),
          first,
          Optional.empty(),
          now,
          TaskRun.Status.MISSED,
          hostName,
          (skipped == 1
                  ? "Missed the fire due " + first
                  : "Missed " + skipped + " fires due from " + first + " to " + last)
              + ": a host found it only at "
              + now.truncatedTo(ChronoUnit.SECONDS)
              + ", later than the grace period ("
              + SchedulingConfig.text(grace)
              + ") allows (no host was running, or every one was busy).");
    }
    if (runLatest) {
      run(scheduled, latest, fire);
    }
  }

  private void run(ScheduledTask scheduled, Instant due, Running fire) throws SQLException {
    Instant started = clock.instant();
    if (!store.begin(scheduled.id(), due, started, hostName)) {
      LOG.warn(
          "Scheduled task '{}' (due {}) already has a run; not running it again",
          scheduled.id(),
          due);
      return;
    }
    Outcome outcome;
    try {
      outcome = runner.run(scheduled, due, started.plus(maxRunTime));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      outcome =
          new Outcome(
              false,
              fire.judgedDead().get()
                  ? "The run was interrupted: its host was judged dead."
                  : "The run was interrupted: its host is stopping.");
    } catch (Exception e) {
      outcome =
          new Outcome(false, "The run failed: " + Objects.requireNonNullElse(e.getMessage(), ""));
      LOG.warn("Scheduled task '{}' (due {}) failed", scheduled.id(), due, e);
    }
    Instant ended = clock.instant();
    TaskRun.Status status = outcome.succeeded() ? TaskRun.Status.SUCCEEDED : TaskRun.Status.FAILED;
    String output = cut(outcome.text());
    boolean recorded = store.end(scheduled.id(), due, ended, status, output);
    if (recorded) {
      deliver(
          scheduled,
          new TaskRun(
              scheduled.id(),
              due,
              Optional.of(started),
              Optional.of(ended),
              status,
              hostName,
              output,
              Optional.empty()));
    } else {
      LOG.warn(
          "Scheduled task '{}' (due {}) already has an outcome: this host was judged dead while"
              + " running it; its own ({}) is not recorded",
          scheduled.id(),
          due,
          outcome.succeeded() ? "succeeded" : "failed");
    }
  }

  /** Delivers a recorded run's result and records what became of it on the run. */
  private void deliver(ScheduledTask scheduled, TaskRun run) throws SQLException {
    Optional<String> note;
    try {
      note = delivery.deliver(scheduled, run);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      note = Optional.of("delivery interrupted: the host is stopping");
    } catch (Exception e) {
      LOG.warn("Scheduled task '{}' (due {}): its delivery failed", scheduled.id(), run.due(), e);
      note =
          Optional.of(
              "delivery failed: " + Objects.requireNonNullElse(e.getMessage(), e.toString()));
    }
    if (note.isPresent()) {
      store.delivered(scheduled.id(), run.due(), note.get());
    }
  }

  /**
   * Moves the task on, unless its row changed since it was picked: then another host moved it on
   * already (it judged this one dead, or this one judged it), and the row is left as it is.
   */
  private static void moveOn(
      ScheduledTask scheduled,
      ExecutionOperations<TaskData> operations,
      ExecutionComplete complete) {
    try {
      next(scheduled, operations, complete);
    } catch (ExecutionException e) {
      LOG.info(
          "Scheduled task '{}' (due {}) was moved on by another host meanwhile",
          scheduled.id(),
          complete.getExecution().executionTime);
    }
  }

  /** Moves the task to its next fire after both its due instant and now, or removes it. */
  private static void next(
      ScheduledTask scheduled,
      ExecutionOperations<TaskData> operations,
      ExecutionComplete complete) {
    if (scheduled.runOnce()) {
      operations.remove();
      return;
    }
    Instant next =
        new CronSchedule(scheduled.cron(), scheduled.zone()).getNextExecutionTime(complete);
    if (next.equals(Schedule.NEVER)) {
      operations.remove();
    } else {
      operations.reschedule(complete, next);
    }
  }

  private void deadExecution(ExecutionComplete complete, ExecutionOperations<TaskData> operations) {
    Execution execution = complete.getExecution();
    @SuppressWarnings("unchecked")
    TaskInstance<TaskData> instance = (TaskInstance<TaskData>) execution.taskInstance;
    ScheduledTask scheduled = instance.getData().task(instance.getId());
    Instant now = clock.instant();
    boolean marked = false;
    try {
      marked =
          store.died(
              scheduled.id(),
              execution.executionTime,
              now,
              Objects.requireNonNullElse(execution.pickedBy, "unknown"),
              "Host '"
                  + execution.pickedBy
                  + "' stopped while running this fire (its last heartbeat was "
                  + execution.lastHeartbeat
                  + "); marked failed by '"
                  + hostName
                  + "' and not retried, so that it never runs twice.");
    } catch (SQLException e) {
      LOG.error("The dead run of '{}' could not be recorded", scheduled.id(), e);
    }
    if (marked) {
      LOG.warn(
          "Scheduled task '{}' (due {}) died with host '{}'; marked failed",
          scheduled.id(),
          execution.executionTime,
          execution.pickedBy);
    }
    moveOn(scheduled, operations, complete);
  }

  private static String cut(String text) {
    if (text.length() <= OUTPUT_LIMIT) {
      return text;
    }
    return text.substring(0, OUTPUT_LIMIT)
        + "\n[cut: "
        + (text.length() - OUTPUT_LIMIT)
        + " more characters]";
  }

  /** Stops polling; waits up to 5 seconds for running fires (later ones are marked dead). */
  @Override
  public synchronized void close() {
    if (started) {
      started = false;
      scheduler.stop();
    }
  }

  // ---- task data: JSON in db-scheduler's table ----

  /**
   * A task's data as stored: JSON, never Java serialization.
   *
   * @param arguments the tool's arguments as JSON text; null for an agent turn
   * @param webhook the URL results are posted to; null for none (and in data stored before tasks
   *     had webhooks)
   */
  record TaskData(
      String cron,
      String zone,
      String description,
      boolean runOnce,
      String tool,
      String arguments,
      long createdMillis,
      String user,
      String profile,
      String session,
      String webhook) {

    static TaskData of(ScheduledTask task) {
      return new TaskData(
          task.cron().text(),
          task.zone().getId(),
          task.description(),
          task.runOnce(),
          task.tool().orElse(null),
          task.arguments().map(JsonNode::toString).orElse(null),
          task.created().toEpochMilli(),
          task.owner().user().orElse(null),
          task.owner().profile().orElse(null),
          task.owner().session().orElse(null),
          task.webhook().map(URI::toString).orElse(null));
    }

    /** The task stored under that key; one stored before tasks had owners has none. */
    ScheduledTask task(String id) {
      return new ScheduledTask(
          ScheduledTask.nameOf(id),
          CronExpression.parse(cron),
          ZoneId.of(zone),
          description,
          runOnce,
          Optional.ofNullable(tool),
          Optional.ofNullable(arguments).map(JSON::readTree),
          Instant.ofEpochMilli(createdMillis),
          new ScheduledTask.Owner(
              Optional.ofNullable(user),
              Optional.ofNullable(profile),
              Optional.ofNullable(session)),
          Optional.ofNullable(webhook).map(URI::create));
    }
  }

  /** db-scheduler's serializer, in JSON. */
  private static final class JsonSerializer implements Serializer {
    @Override
    public byte[] serialize(Object data) {
      return data == null ? null : JSON.writeValueAsBytes(data);
    }

    @Override
    public <T> T deserialize(Class<T> type, byte[] serialized) {
      return serialized == null ? null : JSON.readValue(serialized, type);
    }
  }

  /**
   * A task's cron as db-scheduler's {@link Schedule}, on the task's zone: the next fire after both
   * the fire that completed and the moment it completed, so that fires missed while it ran are not
   * caught up.
   */
  record CronSchedule(CronExpression cron, ZoneId zone) implements Schedule {
    @Override
    public Instant getNextExecutionTime(ExecutionComplete complete) {
      Instant done = complete.getTimeDone();
      Instant due = complete.getExecution().executionTime;
      return cron.next(due != null && due.isAfter(done) ? due : done, zone).orElse(NEVER);
    }

    @Override
    public boolean isDeterministic() {
      return true;
    }
  }

  /** A builder of a {@link TaskScheduler}. */
  public static final class Builder {
    private final ScheduleStore store;
    private InstantSource clock = InstantSource.system();
    private Duration grace = Duration.ofMinutes(10);
    private Duration maxRunTime = Duration.ofMinutes(10);
    private Duration pollInterval = Duration.ofSeconds(1);
    private Duration heartbeat = Duration.ofSeconds(30);
    private int missedHeartbeats = 4;
    private int threads = 10;
    private String hostName = defaultHostName();

    private Builder(ScheduleStore store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    /** The clock fires are due by; the system's by default. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** How late a fire may run (10 minutes by default); a later one is recorded missed. */
    public Builder grace(Duration grace) {
      this.grace = positive(grace, "grace");
      return this;
    }

    /** How long one run may take (10 minutes by default). */
    public Builder maxRunTime(Duration maxRunTime) {
      this.maxRunTime = positive(maxRunTime, "maxRunTime");
      return this;
    }

    /** How often the store is asked for due tasks (every second by default). */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = positive(pollInterval, "pollInterval");
      return this;
    }

    /**
     * How often a running fire's host says it is alive (30 seconds by default), and how many
     * heartbeats it may miss before its run is marked failed (4, the least).
     */
    public Builder heartbeat(Duration heartbeat, int missed) {
      this.heartbeat = positive(heartbeat, "heartbeat");
      if (missed < 4) {
        // db-scheduler's own floor.
        throw new IllegalArgumentException("missed heartbeats must be at least 4: " + missed);
      }
      this.missedHeartbeats = missed;
      return this;
    }

    /** How many fires may run at once on this host (10 by default). */
    public Builder threads(int threads) {
      if (threads < 1) {
        throw new IllegalArgumentException("threads must be at least 1: " + threads);
      }
      this.threads = threads;
      return this;
    }

    /** The name this host marks the fires it runs with; its host name and process id by default. */
    public Builder hostName(String hostName) {
      this.hostName = Objects.requireNonNull(hostName, "hostName");
      return this;
    }

    /** The scheduler, not yet started. */
    public TaskScheduler build() {
      return new TaskScheduler(this);
    }

    private static Duration positive(Duration duration, String name) {
      if (duration.isNegative() || duration.isZero()) {
        throw new IllegalArgumentException(name + " must be positive: " + duration);
      }
      return duration;
    }

    private static String defaultHostName() {
      String host;
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        host = "localhost";
      }
      return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }
  }
}
