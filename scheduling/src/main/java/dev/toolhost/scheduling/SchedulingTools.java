package dev.toolhost.scheduling;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolCaller;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.net.URI;
import java.sql.SQLException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Scheduling tools let a model have work done later and again: {@code schedule_task}, {@code
 * list_scheduled_tasks} and {@code cancel_scheduled_task}, source {@code builtin:scheduling}, in
 * the shape of RockBot's tools.
 *
 * <p>Every answer that concerns time gives the current time and zone, so that a model can turn "in
 * two hours" into a cron expression. A task's description is the prompt of the agent turn that runs
 * it (the config's {@code scheduling.agent}); with {@code tool} and {@code arguments} it is a tool
 * call instead, which a host with no agent requires. A tool call must name a tool the {@code
 * scheduled} profile offers, since a fire runs under that profile. Thread-safe.
 */
public final class SchedulingTools {

  /** The source of the scheduling tools. */
  public static final String SOURCE = "builtin:scheduling";

  /** The tool that creates or replaces a task. */
  public static final String SCHEDULE = "schedule_task";

  /** The tool that lists tasks. */
  public static final String LIST = "list_scheduled_tasks";

  /** The tool that removes a task. */
  public static final String CANCEL = "cancel_scheduled_task";

  /** The guide to the scheduling tools. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "scheduling",
          "How to schedule work for later and again with cron expressions, list it and cancel it.",
          SchedulingTools.class,
          "guides/scheduling.md");

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");
  private static final JsonMapper JSON = JsonMapper.shared();

  private final TaskScheduler scheduler;
  private final SchedulingConfig config;
  private final InstantSource clock;
  private volatile Optional<ToolSet> scheduledTools = Optional.empty();
  private volatile Optional<WebhookDelivery> webhooks = Optional.empty();

  /**
   * The tools over the scheduler.
   *
   * @param clock the clock "now" is read from (the scheduler's)
   */
  public SchedulingTools(TaskScheduler scheduler, SchedulingConfig config, InstantSource clock) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** The tools. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  /** Where a task's {@code delivery: {webhook: URL}} may post: the config allows webhooks. */
  void webhooks(WebhookDelivery delivery) {
    this.webhooks = Optional.of(delivery);
  }

  /** The tools fires run with: a tool task must name one of them. */
  void scheduledTools(ToolSet tools) {
    this.scheduledTools = Optional.of(tools);
  }

  @Tool(
      name = SCHEDULE,
      description =
          "Creates a scheduled task, or replaces the task of the same name. cron is 5 fields"
              + " (minute hour day-of-month month day-of-week) or 6 (seconds first), Unix style:"
              + " when day-of-month and day-of-week are both set, either matches. For a one-time"
              + " task set run_once and pin the fields to the moment (e.g. '30 14 3 12 *'); it is"
              + " removed after it fires. When it fires, the description is the prompt of an agent"
              + " turn; or give tool and arguments to call a tool instead. Each run's result comes"
              + " back to the conversation that scheduled it; delivery {\"webhook\": URL} posts it"
              + " as well, where the host allows. The answer gives the next fire and the current"
              + " time.",
      destructive = false,
      idempotent = true,
      openWorld = false)
  public ToolResult scheduleTask(
      ToolCall call,
      @Param(description = "The task's name: 1 to 64 of A-Z a-z 0-9 _ . -") String name,
      @Param(description = "When it fires: 5 or 6 cron fields, read in the host's zone")
          String cron,
      @Param(
              description =
                  "What the task does, as a prompt to the agent that runs it (or what the tool call"
                      + " is for)")
          String description,
      @Param(name = "run_once", description = "Fire once at the pinned moment, then remove it")
          Optional<Boolean> runOnce,
      @Param(name = "runOnce", description = "The same as run_once") Optional<Boolean> runOnceCamel,
      @Param(description = "An IANA zone for this task's cron, such as Europe/Paris")
          Optional<String> zone,
      @Param(description = "A tool to call instead of an agent turn") Optional<String> tool,
      @Param(description = "The tool's arguments, an object")
          Optional<Map<String, Object>> arguments,
      @Param(
              description =
                  "Where each run's result is posted as well: {\"webhook\": \"https://...\"}, a host"
                      + " this host allows")
          Optional<Map<String, Object>> delivery)
      throws SQLException {
    if (!ScheduledTask.NAME.matcher(name).matches()) {
      throw ToolException.invalidArguments(
          "name '"
              + name
              + "' is not valid: use 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-'.");
    }
    CronExpression expression;
    try {
      expression = CronExpression.parse(cron);
    } catch (IllegalArgumentException e) {
      throw ToolException.invalidArguments(e.getMessage() + ".");
    }
    if (description.isBlank()) {
      throw ToolException.invalidArguments(
          "description is empty: say what the task is to do (it is the prompt of the turn that"
              + " runs it).");
    }
    ZoneId taskZone = config.zone();
    if (zone.isPresent()) {
      try {
        taskZone = ZoneId.of(zone.get().strip());
      } catch (DateTimeException e) {
        throw ToolException.invalidArguments(
            "zone '" + zone.get() + "' is not an IANA zone name, such as Europe/Paris.");
      }
    }
    boolean once = runOnce.or(() -> runOnceCamel).orElse(false);
    Instant now = clock.instant();
    // The caller's own tool set: a task may do only what its owner may, now and at each fire.
    Optional<ToolSet> caller = ToolCaller.toolSet();
    ScheduledTask task;
    if (tool.isPresent()) {
      String toolName = tool.get().strip();
      if (caller.isPresent() && caller.get().find(toolName).isEmpty()) {
        // The same answer for a tool the caller may not see as for one that does not exist.
        throw ToolException.invalidArguments(
            "tool '"
                + toolName
                + "' cannot run in a scheduled task: it is not one of your tools, and a task does"
                + " only what its owner may.");
      }
      boolean offered = scheduledTools.map(set -> set.find(toolName).isPresent()).orElse(false);
      if (!offered) {
        throw ToolException.invalidArguments(
            "tool '"
                + toolName
                + "' cannot run in a scheduled task: fires run under the 'scheduled' profile,"
                + " which does not offer it.");
      }
      JsonNode args = JSON.valueToTree(arguments.orElse(Map.of()));
      task =
          ScheduledTask.toolCall(
              name, expression, taskZone, description.strip(), once, toolName, args, now);
    } else {
      if (arguments.isPresent()) {
        throw ToolException.invalidArguments(
            "arguments are given without a tool: name the tool to call with them.");
      }
      if (config.agent().isEmpty()) {
        throw ToolException.invalidArguments(
            "This host has no agent to run a prompt (scheduling.agent is not set): give tool and"
                + " arguments to schedule a tool call instead.");
      }
      task = ScheduledTask.turn(name, expression, taskZone, description.strip(), once, now);
    }
    task =
        task.withOwner(
            new ScheduledTask.Owner(
                call.user(), caller.map(set -> set.profile().name()), call.sessionId()));
    if (delivery.isPresent()) {
      task = task.withWebhook(webhook(delivery.get()));
    }
    boolean replacing = scheduler.exists(task.id());
    if (!replacing && scheduler.count() >= config.maxTasks()) {
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          "There are "
              + config.maxTasks()
              + " scheduled tasks, the most this host allows: cancel one first, or replace one by"
              + " scheduling a task of its name.");
    }
    Instant next;
    try {
      next = scheduler.schedule(task);
    } catch (IllegalArgumentException e) {
      throw ToolException.invalidArguments(e.getMessage() + ".");
    } catch (IllegalStateException e) {
      throw new ToolException(ErrorCode.UNAVAILABLE, e.getMessage());
    }
    ObjectNode structured = JSON.createObjectNode();
    structured.put("name", name);
    structured.put("next_fire", next.toString());
    structured.put("replaced", replacing);
    return ToolResult.success(
        (replacing ? "Replaced" : "Scheduled")
            + " task '"
            + name
            + "' with cron '"
            + expression.text()
            + "'"
            + (once ? ", once" : "")
            + ". Next fire: "
            + time(next, config.zone())
            + (taskZone.equals(config.zone()) ? "" : ", which is " + time(next, taskZone))
            + ". Current time: "
            + time(now, config.zone())
            + "."
            + task.webhook()
                .map(url -> " Each run's result is posted to " + WebhookDelivery.origin(url) + ".")
                .orElse(""),
        structured);
  }

  /** The webhook a task's {@code delivery} names, checked against what the config allows. */
  private URI webhook(Map<String, Object> delivery) {
    if (!delivery.keySet().equals(java.util.Set.of("webhook"))
        || !(delivery.get("webhook") instanceof String url)) {
      throw ToolException.invalidArguments(
          "delivery takes one key, webhook, a URL: {\"webhook\": \"https://...\"}.");
    }
    if (webhooks.isEmpty()) {
      throw ToolException.invalidArguments(
          "delivery by webhook is off on this host (scheduling.webhooks is not configured): leave"
              + " delivery out; each run's result stays in the task's runs and reaches the"
              + " conversation that scheduled it.");
    }
    try {
      return webhooks.get().checked(url);
    } catch (IllegalArgumentException e) {
      throw ToolException.invalidArguments("delivery: " + e.getMessage());
    }
  }

  @Tool(
      name = LIST,
      description =
          "Lists the scheduled tasks as a markdown table: each task's cron, description, next fire"
              + " and last run, headed by the current time and zone.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public ToolResult listScheduledTasks(ToolCall call) throws SQLException {
    Instant now = clock.instant();
    List<TaskScheduler.TaskState> tasks = owned(call);
    StringBuilder text = new StringBuilder();
    text.append("Current time: ").append(time(now, config.zone())).append("\n\n");
    if (tasks.isEmpty()) {
      text.append("No scheduled tasks.");
    } else {
      text.append("| name | cron | description | next fire | last run |\n");
      text.append("| --- | --- | --- | --- | --- |\n");
      for (TaskScheduler.TaskState state : tasks) {
        ScheduledTask task = state.task();
        String next = time(state.nextFire(), task.zone());
        if (state.running()) {
          next = "running (due " + next + ")";
        } else if (state.nextFire().isBefore(now)) {
          next = "⚠️ OVERDUE " + next;
        }
        text.append("| ")
            .append(task.name())
            .append(" | `")
            .append(task.cron().text())
            .append("`")
            .append(task.runOnce() ? " (once)" : "")
            .append(" | ")
            .append(cell(task.tool().map(t -> "calls " + t + ": ").orElse("") + task.description()))
            .append(" | ")
            .append(next)
            .append(" | ")
            .append(state.lastRun().map(run -> cell(outcome(run, task.zone()))).orElse("never"))
            .append(" |\n");
      }
    }
    return ToolResult.success(text.toString().strip(), json(now, tasks));
  }

  @Tool(
      name = CANCEL,
      description = "Removes a scheduled task by name; an unknown name gets the nearest names.",
      destructive = true,
      idempotent = true,
      openWorld = false)
  public String cancelScheduledTask(
      ToolCall call, @Param(description = "The task's name") String name) throws SQLException {
    boolean cancelled;
    try {
      // Another user's task of that name is another task: not found, never cancelled.
      cancelled =
          scheduler.cancel(
              new ScheduledTask.Owner(call.user(), Optional.empty(), Optional.empty()).id(name));
    } catch (IllegalStateException e) {
      throw new ToolException(ErrorCode.UNAVAILABLE, e.getMessage());
    }
    if (cancelled) {
      return "Cancelled task '" + name + "'.";
    }
    List<String> names = owned(call).stream().map(state -> state.task().name()).toList();
    throw ToolException.invalidArguments(
        "No scheduled task named '"
            + name
            + "' was found."
            + (names.isEmpty()
                ? " There are no scheduled tasks."
                : " Nearest names: " + String.join(", ", nearest(name, names, 3)) + "."));
  }

  /** The tasks of the call's user: a user sees and cancels only their own. */
  private List<TaskScheduler.TaskState> owned(ToolCall call) throws SQLException {
    return scheduler.tasks().stream()
        .filter(state -> state.task().owner().ownedBy(call.user()))
        .toList();
  }

  /** The task list as JSON, for the structured result and the HTTP routes. */
  ObjectNode json(Instant now, List<TaskScheduler.TaskState> tasks) {
    ObjectNode document = JSON.createObjectNode();
    document.put("now", now.toString());
    document.put("zone", config.zone().getId());
    ArrayNode array = document.putArray("tasks");
    for (TaskScheduler.TaskState state : tasks) {
      ScheduledTask task = state.task();
      ObjectNode entry = array.addObject();
      entry.put("name", task.name());
      task.owner().user().ifPresent(user -> entry.put("user", user));
      entry.put("cron", task.cron().text());
      entry.put("zone", task.zone().getId());
      entry.put("description", task.description());
      entry.put("run_once", task.runOnce());
      task.tool().ifPresent(t -> entry.put("tool", t));
      task.arguments().ifPresent(a -> entry.set("arguments", a));
      task.webhook()
          .ifPresent(
              url -> entry.putObject("delivery").put("webhook", WebhookDelivery.origin(url)));
      entry.put("next_fire", state.nextFire().toString());
      entry.put("running", state.running());
      entry.put("overdue", !state.running() && state.nextFire().isBefore(now));
      state.lastRun().ifPresent(run -> entry.set("last_run", json(run)));
    }
    return document;
  }

  /** A run as JSON. */
  static ObjectNode json(TaskRun run) {
    ObjectNode entry = JSON.createObjectNode();
    entry.put("task", run.task());
    entry.put("due", run.due().toString());
    run.started().ifPresent(at -> entry.put("started", at.toString()));
    run.ended().ifPresent(at -> entry.put("ended", at.toString()));
    entry.put("status", run.status().wireName());
    entry.put("host", run.host());
    entry.put("output", run.output());
    run.delivery().ifPresent(note -> entry.put("delivery", note));
    return entry;
  }

  private static String outcome(TaskRun run, ZoneId zone) {
    String when = time(run.ended().or(run::started).orElse(run.due()), zone);
    String output = run.output().strip().replaceAll("\\s+", " ");
    if (output.length() > 120) {
      output = output.substring(0, 117) + "...";
    }
    return run.status().wireName() + " " + when + (output.isEmpty() ? "" : ": " + output);
  }

  private static String cell(String text) {
    return text.replace("|", "\\|").replaceAll("\\s+", " ").strip();
  }

  /** An instant as the tools show it: local date and time, then the zone and its offset. */
  static String time(Instant instant, ZoneId zone) {
    ZonedDateTime local = instant.atZone(zone);
    return TIME.format(local) + " " + zone.getId() + " (UTC" + offset(local) + ")";
  }

  private static String offset(ZonedDateTime local) {
    String id = local.getOffset().getId();
    return id.equals("Z") ? "+00:00" : id;
  }

  /** The names nearest the given one: by edit distance, then alphabetically. */
  static List<String> nearest(String name, List<String> names, int count) {
    List<String> sorted = new ArrayList<>(names);
    sorted.sort(
        Comparator.comparingInt((String candidate) -> distance(name, candidate))
            .thenComparing(Comparator.naturalOrder()));
    return sorted.subList(0, Math.min(count, sorted.size()));
  }

  private static int distance(String a, String b) {
    String x = a.toLowerCase(Locale.ROOT);
    String y = b.toLowerCase(Locale.ROOT);
    int[] previous = new int[y.length() + 1];
    int[] current = new int[y.length() + 1];
    for (int j = 0; j <= y.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= x.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= y.length(); j++) {
        int substitution = previous[j - 1] + (x.charAt(i - 1) == y.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[y.length()];
  }
}
