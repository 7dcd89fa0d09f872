package dev.toolhost.scheduling;

import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * A scheduled task is what {@code schedule_task} stores: a name, when it fires (a cron expression
 * on a zone's wall clock), what it does (the description as an agent turn's prompt, or a tool call)
 * and whether it fires only once.
 *
 * @param name 1 to 64 characters of {@code [A-Za-z0-9_.-]}, unique on the host (or cluster)
 * @param cron when it fires
 * @param zone the zone whose wall clock the cron reads
 * @param description what the task is for: the prompt of the agent turn it runs, when it names no
 *     tool
 * @param runOnce whether it fires once and is then removed
 * @param tool the tool it calls, when it is a tool call rather than an agent turn
 * @param arguments the tool's arguments (an object); empty for an agent turn
 * @param created when it was scheduled
 */
public record ScheduledTask(
    String name,
    CronExpression cron,
    ZoneId zone,
    String description,
    boolean runOnce,
    Optional<String> tool,
    Optional<JsonNode> arguments,
    Instant created) {

  /** What a task's name may be. */
  public static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  public ScheduledTask {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(cron, "cron");
    Objects.requireNonNull(zone, "zone");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(tool, "tool");
    Objects.requireNonNull(arguments, "arguments");
    Objects.requireNonNull(created, "created");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "A task's name is 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-': '" + name + "'");
    }
  }

  /** A task that runs an agent turn with the description as its prompt. */
  public static ScheduledTask turn(
      String name,
      CronExpression cron,
      ZoneId zone,
      String description,
      boolean runOnce,
      Instant created) {
    return new ScheduledTask(
        name, cron, zone, description, runOnce, Optional.empty(), Optional.empty(), created);
  }

  /** A task that calls a tool with the given arguments. */
  public static ScheduledTask toolCall(
      String name,
      CronExpression cron,
      ZoneId zone,
      String description,
      boolean runOnce,
      String tool,
      JsonNode arguments,
      Instant created) {
    return new ScheduledTask(
        name, cron, zone, description, runOnce, Optional.of(tool), Optional.of(arguments), created);
  }
}
