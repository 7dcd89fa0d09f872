package dev.toolhost.scheduling;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.AgentCatalog;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConversationInbox;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.core.spi.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.sql.SQLException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The scheduling extension is a host's scheduled tasks (the {@code scheduling:} section): the tools
 * {@code schedule_task}, {@code list_scheduled_tasks} and {@code cancel_scheduled_task} with their
 * guide, source {@code builtin:scheduling}; the routes {@code GET /v1/schedules} and {@code GET
 * /v1/schedules/{name}/runs}; and, once the host is ready, the {@link TaskScheduler} that fires the
 * tasks, shared as a service.
 *
 * <p>A fire runs under the {@code scheduled} profile, through the host's one dispatcher: a turn of
 * the agent the section names ({@code scheduling.agent}, called as its tool with the description as
 * its message, so that the agent works with at most what {@code scheduled} allows), or the tool
 * call the task names. Its outcome is stored as the task's run, then delivered to its owner: to the
 * conversation that scheduled it, through the {@link ConversationInbox} (the agents' conversation
 * API), where its next turn reads it and its followers see it at once; and, for a task whose {@code
 * delivery} names a webhook, posted there ({@link WebhookDelivery}; off unless {@code
 * scheduling.webhooks} lists the hosts). What became of each delivery is noted on the run; a failed
 * one never loses the run's outcome.
 *
 * <p>It grants its tools to the restricted profiles ({@link #GRANTS}): a subagent may schedule and
 * list but not cancel (RockBot's rule: a helper must not undo its principal's plans). A fired task,
 * under {@code scheduled}, may list and cancel (a task may stop itself once its job is done) but
 * may not schedule: a fire that schedules a task whose fire schedules another multiplies without
 * end, unattended, and RockBot's own {@code Scheduled} profile leaves that open. A host that means
 * its fires to schedule (a task that re-arms itself at a computed time, say) says so with {@code
 * fires_may_schedule: true}, which leaves {@code schedule_task} in {@code scheduled} ({@code GET
 * /v1/profiles} shows which way a host is set). {@code scheduled} bounds every fire: an agent whose
 * own profile allows more gets no more when a fire calls it.
 *
 * <p>Off until configured: a host whose config has no {@code scheduling:} section registers no
 * tool, opens no database and adds no route. Found by {@link java.util.ServiceLoader}; made with an
 * {@link InstantSource}, it reads time from it.
 */
public final class SchedulingExtension implements HostExtension<SchedulingConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "scheduling";

  /** The profile fires run under. */
  public static final String PROFILE = ToolProfiles.SCHEDULED.name();

  /**
   * The grants of this extension's tools to the restricted built-in profiles, by profile: subagents
   * schedule and list but do not cancel; fired tasks list and cancel but do not schedule (unless
   * {@code fires_may_schedule}); the synthesis of another agent's answer schedules nothing.
   */
  public static final Map<String, List<String>> GRANTS =
      Map.of(
          ToolProfiles.SUBAGENT.name(),
          List.of(SchedulingTools.SCHEDULE, SchedulingTools.LIST),
          ToolProfiles.SCHEDULED.name(),
          List.of(SchedulingTools.LIST, SchedulingTools.CANCEL));

  /** The path of the task list. */
  public static final String SCHEDULES_PATH = "/v1/schedules";

  /** The path of one task's runs. */
  public static final String RUNS_PATH = "/v1/schedules/{name}/runs";

  private static final JsonMapper JSON = JsonMapper.shared();

  private final Route runsRoute = new Route("GET", RUNS_PATH, this::runs);

  private final InstantSource clock;
  private SchedulingConfig config;
  private TaskScheduler scheduler;
  private SchedulingTools tools;
  private Optional<ConversationInbox> inbox = Optional.empty();
  private Optional<WebhookDelivery> webhooks = Optional.empty();

  /** The extension on the system clock. */
  public SchedulingExtension() {
    this(InstantSource.system());
  }

  /** The extension on the given clock, for tests that move time. */
  public SchedulingExtension(InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(TaskScheduler.class);
  }

  /**
   * The agents, whose turns fires run: told ready after them, it checks the agent it names; and
   * their conversations' inbox, where a fire's result goes back to the conversation that asked.
   */
  @Override
  public Set<Class<?>> uses() {
    return Set.of(AgentCatalog.class, ConversationInbox.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(SchedulingConfig.Raw.class);
  }

  @Override
  public SchedulingConfig read(JsonNode section, SectionReading reading) {
    return SchedulingConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<SchedulingConfig> section)
      throws SQLException, IOException {
    if (section.isEmpty()) {
      return;
    }
    config = section.get();
    GRANTS.forEach((profile, tools) -> host.allowTools(profile, tools.toArray(String[]::new)));
    if (config.firesMaySchedule()) {
      host.allowTools(PROFILE, SchedulingTools.SCHEDULE);
    }
    ScheduleStore store = host.own(open(config.store(), host.environment()));
    // Fires call the agents' and the tool services' tools, found once the host is ready.
    scheduler =
        host.own(
            TaskScheduler.builder(store)
                .clock(clock)
                .grace(config.grace())
                .maxRunTime(config.maxRunTime())
                .pollInterval(config.pollInterval())
                .heartbeat(config.heartbeat(), 4)
                .build());
    tools = new SchedulingTools(scheduler, config, clock);
    inbox = host.service(ConversationInbox.class);
    if (config.webhooks().isPresent()) {
      WebhookDelivery delivery = host.own(new WebhookDelivery(config.webhooks().get()));
      webhooks = Optional.of(delivery);
      tools.webhooks(delivery);
    }
    host.registry().registerAll(tools.tools());
    host.guide(SchedulingTools.GUIDE);
    host.route(new Route("GET", SCHEDULES_PATH, this::list));
    host.route(runsRoute);
    host.provide(TaskScheduler.class, scheduler);
  }

  private static ScheduleStore open(Storage store, Map<String, String> environment)
      throws SQLException, IOException {
    return switch (store) {
      case Storage.Embedded embedded -> {
        Files.createDirectories(embedded.directory());
        try {
          yield ScheduleStore.embedded(embedded.directory());
        } catch (SQLException e) {
          throw new ConfigException(
              "scheduling: the embedded store in "
                  + embedded.directory().toAbsolutePath()
                  + " cannot be opened ("
                  + e.getMessage().lines().findFirst().orElse("")
                  + "); one host per file: hosts that share tasks need PostgreSQL"
                  + " (scheduling.store)");
        }
      }
      case Storage.Jdbc jdbc -> {
        Optional<String> password = jdbc.password(NAME, environment);
        try {
          yield ScheduleStore.jdbc(jdbc.url(), jdbc.user(), password);
        } catch (SQLException e) {
          throw new ConfigException(
              "scheduling: the store "
                  + jdbc.url().replaceAll("\\?.*", "")
                  + " cannot be reached: "
                  + e.getMessage().lines().findFirst().orElse(""));
        }
      }
    };
  }

  @Override
  public void ready(ReadyHost host) {
    if (scheduler == null) {
      return;
    }
    ToolSet scheduled = host.toolSet(PROFILE);
    if (config.agent().isPresent()) {
      String agent = config.agent().get();
      boolean known =
          host.service(AgentCatalog.class)
              .map(agents -> agents.names().contains(agent))
              .orElse(false);
      if (!known) {
        throw new ConfigException(
            "scheduling.agent names '"
                + agent
                + "', which is not an agent of the 'agents:' section");
      }
    }
    tools.scheduledTools(scheduled);
    ToolDispatcher dispatcher = host.dispatcher();
    scheduler.start(
        (task, due, deadline) ->
            fire(dispatcher, within(host, scheduled, task.owner()), task, due, deadline),
        this::deliver);
  }

  /**
   * Delivers a recorded run's result to its owner: to the conversation of the session that
   * scheduled the task, and to the task's webhook; what became of each, to note on the run.
   */
  private Optional<String> deliver(ScheduledTask task, TaskRun run) throws InterruptedException {
    List<String> notes = new ArrayList<>();
    Optional<String> session = task.owner().session();
    if (session.isPresent() && inbox.isPresent()) {
      boolean taken =
          inbox
              .get()
              .deliver(
                  new ConversationInbox.Delivery(
                      task.owner().user(),
                      session.get(),
                      task.name(),
                      run.due(),
                      run.status() == TaskRun.Status.SUCCEEDED,
                      run.output()));
      notes.add(
          taken
              ? "conversation: delivered to session '" + session.get() + "'"
              : "conversation: not delivered, no conversation of session '"
                  + session.get()
                  + "' is kept (it was forgotten, or is not one of the conversation API)");
    }
    if (task.webhook().isPresent()) {
      notes.add(
          webhooks.isPresent()
              ? webhooks.get().post(task.webhook().get(), task, run)
              : "webhook: not posted: this host takes no webhooks (scheduling.webhooks)");
    }
    return notes.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", notes));
  }

  /**
   * The tools a fire of the owner's task runs with: those {@code scheduled} offers that the owner's
   * profile offers too; empty when that profile is gone.
   */
  private static Optional<ToolSet> within(
      ReadyHost host, ToolSet scheduled, ScheduledTask.Owner owner) {
    if (owner.profile().isEmpty() || owner.profile().get().equals(PROFILE)) {
      return Optional.of(scheduled);
    }
    try {
      return Optional.of(
          ToolSet.within(
              host.registry(), scheduled.profile(), host.toolSet(owner.profile().get())));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private TaskScheduler.Outcome fire(
      ToolDispatcher dispatcher,
      Optional<ToolSet> tools,
      ScheduledTask task,
      Instant due,
      Instant deadline) {
    if (tools.isEmpty()) {
      return new TaskScheduler.Outcome(
          false,
          "The profile '"
              + task.owner().profile().orElse("")
              + "' this task was scheduled under no longer exists on this host: schedule it"
              + " again.");
    }
    ToolSet scheduled = tools.get();
    if (task.tool().isPresent() && scheduled.find(task.tool().get()).isEmpty()) {
      return new TaskScheduler.Outcome(
          false,
          ErrorCode.TOOL_NOT_FOUND.wireName()
              + ": the task's tool '"
              + task.tool().get()
              + "' is no longer one of its owner's tools under the 'scheduled' profile.");
    }
    ToolCall call;
    if (task.tool().isPresent()) {
      call = ToolCall.of(task.tool().get(), task.arguments().map(JsonNode::toString).orElse("{}"));
    } else if (config.agent().isPresent()) {
      ObjectNode message = JSON.createObjectNode().put("message", task.description());
      call = ToolCall.of(config.agent().get(), message.toString());
    } else {
      return new TaskScheduler.Outcome(
          false, "No agent runs scheduled turns on this host (scheduling.agent is not set).");
    }
    call = call.withDeadline(deadline).withSessionId("schedule/" + task.id() + "/" + due);
    // A fire acts for the user who scheduled it: what it saves is theirs.
    call = task.owner().user().map(call::withUser).orElse(call);
    ToolResult result = dispatcher.dispatch(scheduled, call);
    if (result instanceof ToolResult.Failure failure) {
      ErrorCode code = failure.error().code();
      return new TaskScheduler.Outcome(false, code.wireName() + ": " + failure.error().message());
    }
    return new TaskScheduler.Outcome(true, result.text());
  }

  /**
   * The tasks the request's principal may see: its user's own; every user's for a principal that
   * may audit (the host's own token among them).
   */
  private Route.Answer list(Route.Request request) throws SQLException {
    Principal principal = request.principal();
    List<TaskScheduler.TaskState> tasks =
        scheduler.tasks().stream()
            .filter(state -> principal.audit() || state.task().owner().ownedBy(principal.user()))
            .toList();
    return Route.Answer.json(tools.json(clock.instant(), tasks).toString());
  }

  private Route.Answer runs(Route.Request request) throws SQLException {
    String name = runsRoute.variable(request.path()).orElse("");
    Principal principal = request.principal();
    // A principal's own task of that name; another user's by ?user= only for one that may audit.
    Optional<String> user =
        principal.audit() ? request.parameter("user").or(principal::user) : principal.user();
    String id = new ScheduledTask.Owner(user, Optional.empty(), Optional.empty()).id(name);
    int limit = 50;
    Optional<String> asked = request.parameter("limit");
    if (asked.isPresent()) {
      try {
        limit = Math.max(1, Math.min(1000, Integer.parseInt(asked.get())));
      } catch (NumberFormatException e) {
        return Route.Answer.error(
            ApiError.INVALID_REQUEST,
            "'limit' is '" + asked.get() + "' (expected a number 1 to 1000)");
      }
    }
    List<TaskRun> runs = scheduler.runs(id, limit);
    if (runs.isEmpty() && !scheduler.exists(id)) {
      return Route.Answer.error(
          ApiError.NOT_FOUND, "No scheduled task named '" + name + "' and no runs of one.");
    }
    ObjectNode document = JSON.createObjectNode();
    document.put("name", name);
    ArrayNode array = document.putArray("runs");
    runs.forEach(run -> array.add(SchedulingTools.json(run)));
    return Route.Answer.json(document.toString());
  }
}
