package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.scheduling.TaskRun;
import dev.toolhost.scheduling.TaskScheduler;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code scheduling:} section on a real host: a scheduled agent turn runs against the scripted
 * model server under the {@code scheduled} profile and cannot call what that profile denies; its
 * run is served by the routes; a host without the section has none of it; a wrong section is
 * refused with its places.
 */
@Timeout(60)
class HostSchedulingTest {

  private final ScriptedModelServer model = ScriptedModelServer.start();

  @TempDir Path dir;

  @AfterEach
  void close() {
    model.close();
  }

  private String config() {
    return """
        http: {port: 0}
        agents:
          helper:
            base_url: %s
            model: helper-model
            api_key_env: NO_SUCH_KEY
            description: Does what it is asked later.
        scheduling:
          state_dir: %s
          zone: UTC
          agent: helper
          poll_interval: 200ms
          grace: 1m
        """
        .formatted(model.baseUrl(), dir.resolve("state"));
  }

  private static ToolResult call(Host host, String tool, String arguments) {
    return host.dispatcher().dispatch(host.toolSet("main"), ToolCall.of(tool, arguments));
  }

  /** A six-field cron pinned to the given second, in UTC. */
  private static String pinned(Instant at) {
    ZonedDateTime utc = at.atZone(ZoneOffset.UTC);
    return "%d %d %d %d %d *"
        .formatted(
            utc.getSecond(),
            utc.getMinute(),
            utc.getHour(),
            utc.getDayOfMonth(),
            utc.getMonthValue());
  }

  private static JsonNode get(HttpClient http, URI uri) throws Exception {
    HttpResponse<String> response =
        http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JsonMapper.shared().readTree(response.body());
  }

  /**
   * A second at least four seconds ahead, for a task pinned to it: a pinned cron whose second has
   * passed by the time it is stored next fires a year later, so the margin must outlast a slow
   * schedule call on a loaded machine.
   */
  private static Instant dueSoon() {
    return Instant.now().plusSeconds(5).truncatedTo(ChronoUnit.SECONDS);
  }

  @Test
  void aScheduledAgentTurnRunsUnderTheScheduledProfileAndCannotCallWhatItDenies() throws Exception {
    // The turn tries to schedule another task (denied under 'scheduled'), then answers.
    model.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call(
                "call_1",
                "schedule_task",
                "{\"name\": \"again\", \"cron\": \"* * * * *\", \"description\": \"Again\"}")));
    model.enqueue(ScriptedReply.answer("Reminder sent."));
    try (Host host =
            Host.builder(HostConfig.parse(config(), "toolhost.yaml"))
                .environment(Map.of())
                .build();
        HttpClient http = HttpClient.newHttpClient()) {
      URI base = host.start();
      Instant second = dueSoon();

      ToolResult scheduled =
          call(
              host,
              "schedule_task",
              "{\"name\": \"remind\", \"cron\": \""
                  + pinned(second)
                  + "\", \"description\": \"Remind the team of the stand-up\", \"run_once\":"
                  + " true}");
      assertThat(scheduled.isError()).as(scheduled.text()).isFalse();
      assertThat(scheduled.text())
          .startsWith(
              "Scheduled task 'remind' with cron '"
                  + pinned(second)
                  + "', once. Next fire: "
                  + second.toString().replace("T", " ").replace("Z", "")
                  + " UTC (UTC+00:00). Current time: ");
      JsonNode listed = get(http, base.resolve("v1/schedules"));
      assertThat(listed.get("zone").asString()).isEqualTo("UTC");
      assertThat(listed.at("/tasks/0/name").asString()).isEqualTo("remind");
      assertThat(listed.at("/tasks/0/next_fire").asString()).isEqualTo(second.toString());

      TaskScheduler scheduler = host.service(TaskScheduler.class).orElseThrow();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  scheduler.runs("remind", 1).stream()
                      .anyMatch(run -> run.status() == TaskRun.Status.SUCCEEDED));

      RecordedRequest first = model.takeRequest();
      List<String> offered =
          first
              .json()
              .get("tools")
              .valueStream()
              .map(tool -> tool.at("/function/name").asString())
              .toList();
      assertThat(offered)
          .contains("list_scheduled_tasks", "cancel_scheduled_task")
          .doesNotContain("schedule_task", "helper", "spawn_subagent");
      assertThat(first.json().at("/messages").toString())
          .contains("Remind the team of the stand-up");
      RecordedRequest second2 = model.takeRequest();
      JsonNode toolMessage =
          second2
              .json()
              .get("messages")
              .valueStream()
              .filter(message -> message.path("role").asString().equals("tool"))
              .findFirst()
              .orElseThrow();
      assertThat(toolMessage.get("content").asString())
          .startsWith("Tool 'schedule_task' does not exist.");

      JsonNode runs = get(http, base.resolve("v1/schedules/remind/runs"));
      assertThat(runs.at("/runs/0/status").asString()).isEqualTo("succeeded");
      assertThat(runs.at("/runs/0/output").asString()).isEqualTo("Reminder sent.");
      assertThat(runs.at("/runs/0/due").asString()).isEqualTo(second.toString());
      // The one-time task is gone; the task it tried to schedule never existed.
      assertThat(get(http, base.resolve("v1/schedules")).get("tasks").size()).isZero();
      HttpResponse<String> unknown =
          http.send(
              HttpRequest.newBuilder(base.resolve("v1/schedules/nothing/runs")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(unknown.statusCode()).isEqualTo(404);
      assertThat(unknown.body()).contains("\"code\":\"not_found\"");
      HttpResponse<String> badLimit =
          http.send(
              HttpRequest.newBuilder(base.resolve("v1/schedules/remind/runs?limit=many")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(badLimit.statusCode()).isEqualTo(400);
      // The code of docs/http-api.md, once bad_request here.
      assertThat(badLimit.body()).contains("\"code\":\"invalid_request\"");
    }
  }

  @Test
  void aToolTaskCallsItsToolThroughTheDispatcherAndTheListShowsItsOutcome() throws Exception {
    String yaml =
        """
        scheduling:
          state_dir: %s
          zone: Europe/Paris
          poll_interval: 200ms
        """
            .formatted(dir.resolve("state"));
    try (Host host =
        Host.builder(HostConfig.parse(yaml, "toolhost.yaml")).environment(Map.of()).build()) {
      Instant second = dueSoon();
      ZonedDateTime paris = second.atZone(java.time.ZoneId.of("Europe/Paris"));
      String cron =
          "%d %d %d %d %d *"
              .formatted(
                  paris.getSecond(),
                  paris.getMinute(),
                  paris.getHour(),
                  paris.getDayOfMonth(),
                  paris.getMonthValue());

      ToolResult refused =
          call(
              host,
              "schedule_task",
              "{\"name\": \"turn\", \"cron\": \"0 9 * * *\", \"description\": \"Think\"}");
      assertThat(refused.text())
          .isEqualTo(
              "This host has no agent to run a prompt (scheduling.agent is not set): give tool and"
                  + " arguments to schedule a tool call instead.");
      ToolResult scheduled =
          call(
              host,
              "schedule_task",
              "{\"name\": \"guides\", \"cron\": \""
                  + cron
                  + "\", \"description\": \"List the guides\", \"tool\": \"list_tool_guides\","
                  + " \"arguments\": {}}");
      assertThat(scheduled.isError()).as(scheduled.text()).isFalse();

      TaskScheduler scheduler = host.service(TaskScheduler.class).orElseThrow();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  scheduler.runs("guides", 1).stream()
                      .anyMatch(run -> run.status() == TaskRun.Status.SUCCEEDED));
      String list = call(host, "list_scheduled_tasks", "{}").text();
      assertThat(list).startsWith("Current time: ").contains(" Europe/Paris (UTC+");
      assertThat(list)
          .contains("| name | cron | description | next fire | last run |")
          .contains("| guides | `" + cron + "` | calls list_tool_guides: List the guides | ")
          .contains("| succeeded ");
      assertThat(list).contains("scheduling");
    }
  }

  @Test
  void twoHostsOnOnePostgresStoreShareTheirTasksWithThePasswordFromTheEnvironment()
      throws Exception {
    String schema = "sched_host_" + Long.toHexString(System.nanoTime());
    String server = "jdbc:postgresql://127.0.0.1:5432/test";
    try (java.sql.Connection connection =
            java.sql.DriverManager.getConnection(server, "postgres", "");
        java.sql.Statement statement = connection.createStatement()) {
      statement.execute("create schema " + schema);
    }
    String yaml =
        """
        scheduling:
          store: %s?currentSchema=%s
          user: postgres
          password_env: SCHEDULES_DB_PASSWORD
          zone: UTC
        """
            .formatted(server, schema);
    try {
      assertThatThrownBy(
              () ->
                  Host.builder(HostConfig.parse(yaml, "toolhost.yaml"))
                      .environment(Map.of())
                      .build())
          .isInstanceOf(ConfigException.class)
          .hasMessage(
              "scheduling: the store's password variable SCHEDULES_DB_PASSWORD"
                  + " (scheduling.password_env) is not set");
      Map<String, String> environment = Map.of("SCHEDULES_DB_PASSWORD", "trusted-anyway");
      try (Host a =
              Host.builder(HostConfig.parse(yaml, "toolhost.yaml"))
                  .environment(environment)
                  .build();
          Host b =
              Host.builder(HostConfig.parse(yaml, "toolhost.yaml"))
                  .environment(environment)
                  .build()) {
        ToolResult scheduled =
            call(
                a,
                "schedule_task",
                "{\"name\": \"shared\", \"cron\": \"0 9 * * *\", \"description\": \"x\","
                    + " \"tool\": \"list_tool_guides\"}");
        assertThat(scheduled.isError()).as(scheduled.text()).isFalse();
        assertThat(call(b, "list_scheduled_tasks", "{}").text())
            .contains("| shared | `0 9 * * *` | calls list_tool_guides: x | ");
        assertThat(call(b, "cancel_scheduled_task", "{\"name\": \"shared\"}").text())
            .isEqualTo("Cancelled task 'shared'.");
        assertThat(call(a, "list_scheduled_tasks", "{}").text()).endsWith("No scheduled tasks.");
      }
    } finally {
      try (java.sql.Connection connection =
              java.sql.DriverManager.getConnection(server, "postgres", "");
          java.sql.Statement statement = connection.createStatement()) {
        statement.execute("drop schema " + schema + " cascade");
      }
    }
  }

  @Test
  void aTaskCreatedOnAHostFiresOnceAfterTheHostRestarts() throws Exception {
    String yaml =
        """
        scheduling:
          state_dir: %s
          zone: UTC
          poll_interval: 200ms
        """
            .formatted(dir.resolve("state"));
    Instant second;
    try (Host first =
        Host.builder(HostConfig.parse(yaml, "toolhost.yaml")).environment(Map.of()).build()) {
      second = dueSoon();
      ToolResult scheduled =
          call(
              first,
              "schedule_task",
              "{\"name\": \"after-restart\", \"cron\": \""
                  + pinned(second)
                  + "\", \"description\": \"x\", \"run_once\": true, \"tool\":"
                  + " \"list_tool_guides\"}");
      assertThat(scheduled.isError()).as(scheduled.text()).isFalse();
    }
    try (Host second2 =
        Host.builder(HostConfig.parse(yaml, "toolhost.yaml")).environment(Map.of()).build()) {
      TaskScheduler scheduler = second2.service(TaskScheduler.class).orElseThrow();
      await().atMost(Duration.ofSeconds(30)).until(() -> scheduler.count() == 0);
      assertThat(scheduler.runs("after-restart", 5))
          .singleElement()
          .satisfies(
              run -> {
                assertThat(run.status()).isEqualTo(TaskRun.Status.SUCCEEDED);
                assertThat(run.due()).isEqualTo(second);
              });
    }
  }

  @Test
  void aTurnLongerThanTheMaximumRunTimeIsRecordedAsTimedOut() throws Exception {
    model.enqueue(
        ScriptedReply.stream().pause(Duration.ofSeconds(10)).text("Too late.").done().build());
    String yaml = config().replace("  grace: 1m\n", "  grace: 1m\n  max_run_time: 1s\n");
    try (Host host =
        Host.builder(HostConfig.parse(yaml, "toolhost.yaml")).environment(Map.of()).build()) {
      Instant second = dueSoon();
      ToolResult scheduled =
          call(
              host,
              "schedule_task",
              "{\"name\": \"slow\", \"cron\": \""
                  + pinned(second)
                  + "\", \"description\": \"Take your time\", \"run_once\": true}");
      assertThat(scheduled.isError()).as(scheduled.text()).isFalse();
      TaskScheduler scheduler = host.service(TaskScheduler.class).orElseThrow();

      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  scheduler.runs("slow", 1).stream()
                      .anyMatch(run -> run.status() == TaskRun.Status.FAILED));
      TaskRun run = scheduler.runs("slow", 1).getFirst();
      assertThat(run.output()).startsWith("timeout: ");
      assertThat(Duration.between(run.started().orElseThrow(), run.ended().orElseThrow()))
          .isLessThan(Duration.ofSeconds(8));
    }
  }

  @Test
  void firesMayScheduleOnlyWhenTheConfigSaysSo() {
    String yaml =
        """
        scheduling:
          state_dir: %s
          fires_may_schedule: %s
        """;
    try (Host closed =
            Host.builder(HostConfig.parse(yaml.formatted(dir.resolve("a"), false), "toolhost.yaml"))
                .environment(Map.of())
                .build();
        Host open =
            Host.builder(HostConfig.parse(yaml.formatted(dir.resolve("b"), true), "toolhost.yaml"))
                .environment(Map.of())
                .build()) {
      assertThat(closed.toolSet("scheduled").names())
          .contains("list_scheduled_tasks", "cancel_scheduled_task")
          .doesNotContain("schedule_task");
      assertThat(open.toolSet("scheduled").names()).contains("schedule_task");
      assertThat(open.toolSet("subagent").names())
          .contains("schedule_task", "list_scheduled_tasks")
          .doesNotContain("cancel_scheduled_task");
    }
  }

  @Test
  void aHostWithoutASchedulingSectionHasNoSchedulingToolsOrRoutes() {
    try (Host host =
        Host.builder(HostConfig.parse("http: {port: 0}\n", "toolhost.yaml"))
            .environment(Map.of())
            .build()) {
      assertThat(host.registry().specs())
          .extracting(ToolSpec::source)
          .doesNotContain("builtin:scheduling");
      assertThat(host.service(TaskScheduler.class)).isEmpty();
      assertThat(host.routeNames()).noneMatch(route -> route.contains("/v1/schedules"));
    }
  }

  @Test
  void aWrongSchedulingSectionIsRefusedWithEveryProblemAtItsPlace() {
    String yaml =
        """
        scheduling:
          store: mysql://db
          zone: Mars/Olympus
          max_tasks: 0
          grace: 1s
          poll_interval: 1s
        """;
    assertThatThrownBy(() -> HostConfig.parse(yaml, "toolhost.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            String.join(
                "\n",
                "toolhost.yaml line 2, column 10: 'scheduling.store' is 'mysql://db' (expected"
                    + " embedded, or a JDBC URL such as jdbc:postgresql://127.0.0.1:5432/toolhost)",
                "toolhost.yaml line 3, column 9: 'scheduling.zone' is 'Mars/Olympus' (expected an"
                    + " IANA zone name, such as Europe/Paris or America/New_York)",
                "toolhost.yaml line 4, column 14: 'scheduling.max_tasks' is 0 (expected 1 to"
                    + " 100000)",
                "toolhost.yaml line 5, column 10: 'scheduling.grace' is 1s, shorter than twice"
                    + " 'scheduling.poll_interval' (1s): fires would be recorded missed while they"
                    + " wait for a poll"));
  }

  @Test
  void aJdbcStoreRefusesAPasswordInItsUrlAndKeysOfTheEmbeddedStore() {
    String yaml =
        """
        scheduling:
          store: jdbc:postgresql://db:5432/toolhost?password=hunter2
          state_dir: state
          password_env: 1BAD
        """;
    assertThatThrownBy(() -> HostConfig.parse(yaml, "toolhost.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            String.join(
                "\n",
                "toolhost.yaml line 2, column 10: 'scheduling.store' holds a password; name the"
                    + " variable that holds it in 'scheduling.password_env' instead",
                "toolhost.yaml line 3, column 14: 'scheduling.state_dir' is for the embedded store,"
                    + " and 'scheduling.store' is a JDBC URL",
                "toolhost.yaml line 4, column 17: 'scheduling.password_env' is '1BAD' (expected the"
                    + " name of an environment variable, such as SCHEDULES_DB_PASSWORD; the password"
                    + " itself never goes in the config)"));
  }

  @Test
  void aSchedulingAgentThatIsNotAnAgentIsRefusedWhenTheHostStarts() {
    String yaml =
        """
        scheduling:
          state_dir: %s
          agent: nobody
        """
            .formatted(dir.resolve("state"));
    assertThatThrownBy(
            () ->
                Host.builder(HostConfig.parse(yaml, "toolhost.yaml")).environment(Map.of()).build())
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "scheduling.agent names 'nobody', which is not an agent of the 'agents:' section");
  }
}
