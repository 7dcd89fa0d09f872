package dev.toolhost.scheduling;

import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A task run is one fire of a scheduled task and how it ended: the instant it was due, when it
 * started and ended, its status, the host that ran it, the final text or the error, cut to {@link
 * TaskScheduler#OUTPUT_LIMIT} characters, and what became of its delivery to the task's owner.
 *
 * <p>A fire has at most one run: the store refuses a second run of the same task and due instant,
 * so that a fire picked twice (by two hosts, or again after a host died) never runs twice.
 *
 * @param task the task's name
 * @param due the instant the fire was due
 * @param started when the run started; empty for a fire recorded as missed, or one whose host died
 *     before it started
 * @param ended when it ended; empty while it runs
 * @param status how it ended
 * @param host the host that ran it (or recorded it)
 * @param output the final text, the error, or why it was missed
 * @param delivery what became of the result's delivery to its owner (the conversation that
 *     scheduled the task, a webhook), once tried; empty when there was none to make
 */
public record TaskRun(
    String task,
    Instant due,
    Optional<Instant> started,
    Optional<Instant> ended,
    Status status,
    String host,
    String output,
    Optional<String> delivery) {

  public TaskRun {
    Objects.requireNonNull(task, "task");
    Objects.requireNonNull(due, "due");
    Objects.requireNonNull(started, "started");
    Objects.requireNonNull(ended, "ended");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(delivery, "delivery");
  }

  /** How a run ended. Wire names are the lower-case constants. */
  public enum Status {
    /** Still running. */
    RUNNING,
    /** The agent answered, or the tool succeeded. */
    SUCCEEDED,
    /** The agent or tool failed, timed out, or its host died while it ran. */
    FAILED,
    /** Due while no host ran, and found later than the grace period allows: not run. */
    MISSED;

    /** The wire name: {@code running}, {@code succeeded}, {@code failed}, {@code missed}. */
    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** The status of a wire name. */
    public static Status of(String wireName) {
      return valueOf(wireName.toUpperCase(Locale.ROOT));
    }
  }
}
